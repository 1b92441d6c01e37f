"""Same, update, or contradiction? One new memory against one existing memory, from their texts and cosine.

Why this order of checks: a wrong merge loses a fact silently (the old wording is overwritten), a wrong
supersede only ranks a still-true memory down (it stays, linked, and the user sees both), and a review
costs the user one keypress. So anything that reads as a contradiction or a changed value is never
merged; it supersedes when the signals are clear, and goes to the conflicts queue when they are not.

    relation     action      when
    duplicate    merge       same words (cosine >= duplicate) and nothing in store.truth.differences differs
    paraphrase   merge       close (cosine >= paraphrase, or >= paraphrase_overlap with shared words)
    reversal     supersede   a negation, an antonym or a swapped preference, on the same topic
    update       supersede   a changed number/name/slot and the new text says it changed, on the same topic
    unsure       review      a changed value without a change marker, or a close text that cannot merge
    unrelated    add         anything else

The thresholds were tuned on the tune half of bench/eval/truth (all-MiniLM-L6-v2); the test half's
numbers are in the README ("Keeping memories true"). Chinese texts get their own topic floors: the
model's English vocabulary spreads Chinese sentences out (a paraphrase may score 0.6).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from store.truth.differences import Differences, compare
from store.truth.features import features

RELATIONS = ("duplicate", "paraphrase", "reversal", "update", "unsure", "unrelated")
ACTIONS = {
    "duplicate": "merge",
    "paraphrase": "merge",
    "reversal": "supersede",
    "update": "supersede",
    "unsure": "review",
    "unrelated": "add",
}


@dataclass(frozen=True, slots=True)
class Thresholds:
    """Cosine bounds (all-MiniLM-L6-v2 scale). `zh_*` apply when either text is Chinese."""

    duplicate: float = 0.90
    paraphrase: float = 0.75
    paraphrase_overlap: float = 0.66  # with at least `overlap` shared content words
    overlap: float = 0.6
    reversal: float = 0.55
    update: float = 0.45
    review: float = 0.75
    value_review: float = 0.5  # a changed value (or "switched", "now"…) on the same topic: ask
    # Chinese: the shared-character (Dice) score, not the cosine.
    zh_duplicate: float = 0.95
    zh_paraphrase: float = 0.6
    zh_paraphrase_overlap: float = 0.45
    zh_overlap: float = 0.6
    zh_reversal: float = 0.3
    zh_update: float = 0.3
    zh_review: float = 0.6


DEFAULT = Thresholds()


@dataclass(frozen=True, slots=True)
class Verdict:
    relation: str  # one of RELATIONS
    similarity: float
    reasons: tuple[str, ...] = field(default_factory=tuple)

    @property
    def action(self) -> str:
        return ACTIONS[self.relation]

    def to_json(self) -> dict[str, Any]:
        return {
            "relation": self.relation,
            "action": self.action,
            "similarity": round(self.similarity, 4),
            "reasons": list(self.reasons),
        }


def classify(new: str, old: str, similarity: float, t: Thresholds = DEFAULT) -> Verdict:
    """What adding `new` next to `old` (cosine `similarity`) should do."""
    fa, fb = features(old), features(new)
    d = compare(fa, fb)
    return decide(d, similarity, cjk=fa.cjk or fb.cjk, t=t)


def decide(d: Differences, cosine: float, *, cjk: bool, t: Thresholds = DEFAULT) -> Verdict:
    """The table in the module docstring. For Chinese the model's cosine says little (its vocabulary is
    English: unrelated Chinese sentences score 0.9+), so the shared-character score decides instead."""
    reasons = d.reasons()
    if cjk:
        sim = d.lexical
        para, para_overlap, min_overlap = t.zh_paraphrase, t.zh_paraphrase_overlap, t.zh_overlap
        reversal, update, review, duplicate = t.zh_reversal, t.zh_update, t.zh_review, t.zh_duplicate
    else:
        sim = cosine
        para, para_overlap, min_overlap = t.paraphrase, t.paraphrase_overlap, t.overlap
        reversal, update, review, duplicate = t.reversal, t.update, t.review, t.duplicate
    if d.contradiction and sim >= reversal:
        return Verdict("reversal", cosine, reasons)
    # "pip over uv", then "stopped using uv": the same opinion (d.agrees), nothing to supersede.
    changed = d.slot or (
        (d.value_change or d.names_differ or d.numbers_differ or (cjk and d.replaced)) and d.change_marker
    )
    if changed and not d.agrees and sim >= update:
        return Verdict("update", cosine, reasons)
    if not d.blocks_merge:
        if sim >= duplicate:
            return Verdict("duplicate", cosine, reasons)
        if sim >= para or (sim >= para_overlap and d.overlap >= min_overlap):
            return Verdict("paraphrase", cosine, reasons)
    if d.blocks_merge and sim >= review:
        return Verdict("unsure", cosine, reasons)
    if not cjk and (d.value_change or (d.change_marker and d.replaced)) and sim >= t.value_review:
        return Verdict("unsure", cosine, reasons)
    return Verdict("unrelated", cosine, reasons)


@dataclass(frozen=True, slots=True)
class Neighbour:
    """An existing, currently valid memory near the new text (from the KNN), as the planner needs it."""

    id: int
    content: str
    category: str
    similarity: float
    protected: bool  # pinned or edited by hand: never merged or superseded without the user


@dataclass(frozen=True, slots=True)
class Plan:
    """What adding one memory does to its neighbours. `merge_into` excludes adding a new row."""

    merge_into: tuple[Neighbour, Verdict] | None = None
    supersede: tuple[tuple[Neighbour, Verdict], ...] = ()
    review: tuple[tuple[Neighbour, Verdict], ...] = ()


def plan(
    new: str, category: str, neighbours: list[Neighbour], t: Thresholds = DEFAULT, *, allow_merge: bool = True
) -> Plan:
    """Classify `new` against each neighbour (best first). A merge happens only within the category (the
    rule memapp always had); a paraphrase in another category, and any supersede of a pinned or
    hand-edited memory, goes to review instead."""
    merge: tuple[Neighbour, Verdict] | None = None
    supersede: list[tuple[Neighbour, Verdict]] = []
    review: list[tuple[Neighbour, Verdict]] = []
    for n in neighbours:
        v = classify(new, n.content, n.similarity, t)
        if v.action == "merge":
            if allow_merge and merge is None and n.category == category:
                merge = (n, v)
            elif not allow_merge or n.category != category:
                review.append((n, Verdict("paraphrase", v.similarity, v.reasons)))
        elif v.action == "supersede":
            (review if n.protected else supersede).append((n, v))
        elif v.action == "review":
            review.append((n, v))
    return Plan(merge, tuple(supersede), tuple(review))
