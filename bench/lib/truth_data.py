"""The truth evaluation's data: labelled memory pairs and chains (bench/eval/truth), and the tune/test split.

Kept apart from bench/quality/eval_truth.py so that tests can check the files (well-formed, balanced, split as
documented) without loading a model, and so that the split is defined once.

The split is a hash of the pair's two texts (sha256 of "old<TAB>new", first byte even: tune, odd: test):
it never depends on the order of the lines or on which file a pair is in, so adding pairs later leaves
every existing pair in its half.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository: bench/lib/truth_data.py
TRUTH = ROOT / "bench" / "eval" / "truth"
FRESH = TRUTH / "fresh"
LEGACY = (TRUTH / "pairs.tsv", TRUTH / "holdout.tsv")
CHAINS = TRUTH / "chains.tsv"
BLIND = TRUTH / "blind.tsv"
HELDOUT2 = TRUTH / "heldout2.tsv"
HELDOUT3 = TRUTH / "heldout3.tsv"
HELDOUT4 = TRUTH / "heldout4.tsv"
DEV = TRUTH / "dev.tsv"
DEV4 = TRUTH / "dev4.tsv"

# reversal and update are one group for the targets ("reversal/update"); they are kept apart in the files
# so that the report can say which of the two is missed.
KINDS = ("reversal", "update", "paraphrase", "distinct", "unrelated")
GROUP = {
    "reversal": "update",
    "update": "update",
    "paraphrase": "paraphrase",
    "distinct": "distinct",
    "unrelated": "unrelated",
}
EXPECTS = ("supersede", "queue", "merge", "both")
# The old set's labels (issue 17) in the new groups.
LEGACY_KIND = {
    "reversal": "reversal",
    "update": "update",
    "paraphrase": "paraphrase",
    "same_topic": "distinct",
    "unrelated": "unrelated",
}
LEGACY_EXPECT = {"reversal": "supersede", "update": "supersede", "paraphrase": "merge"}


@dataclass(frozen=True, slots=True)
class Pair:
    source: str  # file:line
    kind: str  # one of KINDS
    expect: str  # one of EXPECTS
    tags: tuple[str, ...]
    old: str
    new: str
    half: str  # tune | test | blind | dev | dev4 | heldout2 | heldout3 | heldout4 | legacy

    @property
    def group(self) -> str:
        return GROUP[self.kind]


@dataclass(frozen=True, slots=True)
class Chain:
    name: str
    current: frozenset[int]  # 1-based steps whose text must be current at the end
    steps: tuple[str, ...]


def half_of(old: str, new: str) -> str:
    """tune or test, from the pair's texts alone."""
    return "tune" if hashlib.sha256(f"{old}\t{new}".encode()).digest()[0] % 2 == 0 else "test"


def _lines(path: Path) -> list[tuple[int, list[str]]]:
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip() and not line.startswith("#"):
            out.append((n, line.split("\t")))
    return out


def _pairs(path: Path, half: str | None) -> list[Pair]:
    pairs = []
    for n, cols in _lines(path):
        if len(cols) != 5:
            raise ValueError(f"{path.name}:{n}: expected 5 tab-separated columns, got {len(cols)}")
        kind, expect, tags, old, new = cols
        if kind not in KINDS or expect not in EXPECTS:
            raise ValueError(f"{path.name}:{n}: unknown kind {kind!r} or expectation {expect!r}")
        pairs.append(
            Pair(
                f"{path.name}:{n}",
                kind,
                expect,
                tuple(t for t in tags.split(",") if t and t != "-"),
                old,
                new,
                half or half_of(old, new),
            )
        )
    return pairs


def fresh_pairs() -> list[Pair]:
    """The pairs written for issue 27 (bench/eval/truth/fresh/*.tsv), each in its half."""
    return [p for path in sorted(FRESH.glob("*.tsv")) for p in _pairs(path, None)]


def blind_pairs() -> list[Pair]:
    """Written after the rules were frozen and run once (bench/eval/truth/blind.tsv)."""
    return _pairs(BLIND, "blind")


def dev_pairs() -> list[Pair]:
    """Written during the recall round to tune on (the tune half was saturated): tuned on, reported as such."""
    return _pairs(DEV, "dev")


def dev4_pairs() -> list[Pair]:
    """Written in the fourth round where the rules were weakest (negation paraphrases, paraphrases sharing
    few words, Chinese and mixed), each with look-alikes beside it: tuned on, reported as such."""
    return _pairs(DEV4, "dev4")


def heldout2_pairs() -> list[Pair]:
    """Written and committed before the second round of rule changes (truth2), run only for the final
    report (bench/eval/truth/heldout2.tsv)."""
    return _pairs(HELDOUT2, "heldout2")


def heldout3_pairs() -> list[Pair]:
    """Written by an outside engineer without reading the rules or running them, run once by the lead for
    the final report (bench/eval/truth/heldout3.tsv)."""
    return _pairs(HELDOUT3, "heldout3")


def heldout4_pairs() -> list[Pair]:
    """Written by another outside engineer without reading the rules or running them, after heldout3 had
    become development data; run once by the lead for the final report (bench/eval/truth/heldout4.tsv)."""
    return _pairs(HELDOUT4, "heldout4")


def legacy_pairs() -> list[Pair]:
    """Issue 17's pairs (pairs.tsv and holdout.tsv), relabelled; reported on their own (they were seen
    while the old rules were written; their errors, like the tune half's, may guide the rules)."""
    pairs = []
    for path in LEGACY:
        for n, cols in _lines(path):
            label, old, new = cols
            kind = LEGACY_KIND[label]
            pairs.append(
                Pair(f"{path.name}:{n}", kind, LEGACY_EXPECT.get(label, "both"), (), old, new, "legacy")
            )
    return pairs


def chains() -> list[Chain]:
    out = []
    for n, cols in _lines(CHAINS):
        if len(cols) < 4:
            raise ValueError(f"{CHAINS.name}:{n}: a chain needs a name, the current steps and 2+ steps")
        name, current, *steps = cols
        out.append(Chain(name, frozenset(int(c) for c in current.split(",")), tuple(steps)))
    return out
