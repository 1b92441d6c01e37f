"""The truth evaluation's files (bench/eval/truth): well-formed, big and balanced enough, split as documented.

No model: this is about the data the figures in docs/benchmarks/truth.md stand on."""

from __future__ import annotations

from collections import Counter

from bench.lib.truth_data import chains, fresh_pairs, half_of, legacy_pairs


def test_at_least_600_fresh_pairs_balanced_over_the_four_groups() -> None:
    pairs = fresh_pairs()
    assert len(pairs) >= 600
    groups = Counter(p.group for p in pairs)
    assert set(groups) == {"update", "paraphrase", "distinct", "unrelated"}
    assert min(groups.values()) >= 0.9 * max(groups.values())
    assert len({(p.old, p.new) for p in pairs}) == len(pairs)  # no pair twice


def test_the_hard_kinds_the_issue_lists_are_all_there() -> None:
    tags = Counter(t for p in fresh_pairs() for t in p.tags)
    for tag in (
        "subject",
        "many",
        "one",
        "number",
        "negpara",
        "negrev",
        "restate",
        "multi",
        "zh",
        "mixed",
        "issue",
    ):
        assert tags[tag] >= 8, tag


def test_the_split_is_by_the_pairs_texts_and_both_halves_have_every_group() -> None:
    pairs = fresh_pairs()
    assert all(p.half == half_of(p.old, p.new) for p in pairs)
    for half in ("tune", "test"):
        groups = Counter(p.group for p in pairs if p.half == half)
        assert min(groups.values()) >= 70, (half, groups)


def test_legacy_pairs_and_chains_load() -> None:
    assert len(legacy_pairs()) == 295
    cs = chains()
    assert len(cs) >= 10
    assert all(max(c.current) <= len(c.steps) for c in cs)


def test_the_blind_set_loads_and_is_balanced() -> None:
    from bench.lib.truth_data import blind_pairs

    pairs = blind_pairs()
    assert len(pairs) >= 100 and {p.half for p in pairs} == {"blind"}
    assert min(Counter(p.group for p in pairs).values()) >= 25


def test_the_second_held_out_set_loads_is_balanced_and_new() -> None:
    from bench.lib.truth_data import blind_pairs, heldout2_pairs

    pairs = heldout2_pairs()
    assert len(pairs) >= 300 and {p.half for p in pairs} == {"heldout2"}
    groups = Counter(p.group for p in pairs)
    assert min(groups.values()) >= 75, groups
    tags = Counter(t for p in pairs for t in p.tags)
    for tag in ("subject", "many", "one", "number", "negpara", "negrev", "restate", "multi", "zh", "mixed"):
        assert tags[tag] >= 3, tag
    # Not one pair of it is a pair the rules were tuned or measured on before.
    seen = {
        frozenset((p.old.casefold(), p.new.casefold()))
        for p in fresh_pairs() + blind_pairs() + legacy_pairs()
    }
    assert not [p for p in pairs if frozenset((p.old.casefold(), p.new.casefold())) in seen]


# The tags bench/eval/truth/README.md defines.
KNOWN_TAGS = frozenset(
    [
        "cue",
        "nocue",
        "one",
        "many",
        "subject",
        "number",
        "version",
        "project",
        "negpara",
        "negrev",
        "restate",
        "multi",
        "zh",
        "mixed",
        "issue",
        "reword",
        "still",
    ]
)


def test_the_third_held_out_set_loads_is_balanced_and_new() -> None:
    from bench.lib.truth_data import blind_pairs, dev4_pairs, dev_pairs, heldout2_pairs, heldout3_pairs

    pairs = heldout3_pairs()
    assert len(pairs) >= 440 and {p.half for p in pairs} == {"heldout3"}
    groups = Counter(p.group for p in pairs)
    assert set(groups) == {"update", "paraphrase", "distinct", "unrelated"}
    # Balanced within 10 % of the mean group size, and enough reversals to report them on their own.
    mean = len(pairs) / 4
    assert all(abs(n - mean) <= 0.1 * mean for n in groups.values()), groups
    assert Counter(p.kind for p in pairs)["reversal"] >= 30
    assert len({(p.old, p.new) for p in pairs}) == len(pairs)  # no pair twice
    assert all(p.old != p.new for p in pairs)
    tags = Counter(t for p in pairs for t in p.tags)
    for tag in KNOWN_TAGS - {"issue"}:  # every kind the README names, but the issue's own examples
        assert tags[tag] >= 5, tag
    # Not one pair of it is a pair of any other file, in either order.
    seen = {
        frozenset((p.old.casefold(), p.new.casefold()))
        for p in fresh_pairs()
        + blind_pairs()
        + legacy_pairs()
        + heldout2_pairs()
        + dev_pairs()
        + dev4_pairs()
    }
    assert not [p.source for p in pairs if frozenset((p.old.casefold(), p.new.casefold())) in seen]


def test_the_third_held_out_set_has_its_voices_as_sections() -> None:
    from bench.lib.truth_data import HELDOUT3

    sections = [line for line in HELDOUT3.read_text(encoding="utf-8").splitlines() if line.startswith("## ")]
    assert len(sections) >= 8


def test_the_dev4_set_is_well_formed_covers_its_weak_spots_and_shares_no_pair() -> None:
    from bench.lib.truth_data import blind_pairs, dev4_pairs, dev_pairs, heldout2_pairs, heldout3_pairs

    pairs = dev4_pairs()
    assert len(pairs) >= 260 and {p.half for p in pairs} == {"dev4"}
    assert all(p.old.strip() == p.old and p.new.strip() == p.new and p.old != p.new for p in pairs)
    groups = Counter(p.group for p in pairs)
    assert set(groups) == {"update", "paraphrase", "distinct", "unrelated"}
    # Every paraphrase family has look-alikes beside it: never mostly paraphrases (merge-everything wins).
    assert groups["paraphrase"] <= 0.5 * len(pairs) and groups["update"] >= 0.2 * len(pairs), groups
    assert all(p.expect in ("supersede", "queue") for p in pairs if p.group == "update")
    assert all(p.expect == "merge" for p in pairs if p.group == "paraphrase")
    assert all(p.expect == "both" for p in pairs if p.group in ("distinct", "unrelated"))
    tags = Counter(t for p in pairs for t in p.tags)
    for tag in ("negpara", "negrev", "reword", "zh", "mixed", "subject", "many", "multi"):
        assert tags[tag] >= 10, tag
    assert not {t for p in pairs for t in p.tags} - KNOWN_TAGS
    key = [frozenset((p.old.casefold(), p.new.casefold())) for p in pairs]
    assert len(set(key)) == len(pairs)  # no pair twice, in either order
    others = (
        fresh_pairs() + blind_pairs() + heldout2_pairs() + heldout3_pairs() + dev_pairs() + legacy_pairs()
    )
    seen = {frozenset((p.old.casefold(), p.new.casefold())) for p in others}
    assert not [p.source for p, k in zip(pairs, key, strict=True) if k in seen]


def _others_than_heldout4() -> set[frozenset[str]]:
    from bench.lib.truth_data import blind_pairs, dev4_pairs, dev_pairs, heldout2_pairs, heldout3_pairs

    others = (
        fresh_pairs()
        + blind_pairs()
        + legacy_pairs()
        + heldout2_pairs()
        + heldout3_pairs()
        + dev_pairs()
        + dev4_pairs()
    )
    return {frozenset((p.old.casefold(), p.new.casefold())) for p in others}


def test_the_fourth_held_out_set_loads_is_balanced_and_new() -> None:
    from bench.lib.truth_data import heldout4_pairs

    pairs = heldout4_pairs()
    assert len(pairs) >= 390 and {p.half for p in pairs} == {"heldout4"}
    assert all(p.old.strip() == p.old and p.new.strip() == p.new and p.old != p.new for p in pairs)
    groups = Counter(p.group for p in pairs)
    assert set(groups) == {"update", "paraphrase", "distinct", "unrelated"}
    # Balanced within 10 % of the mean group size, and enough reversals to report them on their own.
    mean = len(pairs) / 4
    assert all(abs(n - mean) <= 0.1 * mean for n in groups.values()), groups
    assert Counter(p.kind for p in pairs)["reversal"] >= 25
    assert all(p.expect in ("supersede", "queue") for p in pairs if p.group == "update")
    assert all(p.expect == "merge" for p in pairs if p.group == "paraphrase")
    assert all(p.expect == "both" for p in pairs if p.group in ("distinct", "unrelated"))
    tags = Counter(t for p in pairs for t in p.tags)
    assert not set(tags) - KNOWN_TAGS
    for tag in KNOWN_TAGS - {"issue"}:  # every kind the README names, but the issue's own examples
        assert tags[tag] >= 5, tag
    key = [frozenset((p.old.casefold(), p.new.casefold())) for p in pairs]
    assert len(set(key)) == len(pairs)  # no pair twice, in either order
    # Not one pair of it is a pair of any other file, in either order.
    seen = _others_than_heldout4()
    assert not [p.source for p, k in zip(pairs, key, strict=True) if k in seen]


def test_the_fourth_held_out_set_has_nine_voices_each_with_all_four_groups() -> None:
    from bench.lib.truth_data import HELDOUT4, heldout4_pairs

    section_of_line: dict[int, str] = {}
    section = ""
    for number, line in enumerate(HELDOUT4.read_text(encoding="utf-8").splitlines(), start=1):
        section = line if line.startswith("## ") else section
        section_of_line[number] = section
    groups: dict[str, set[str]] = {}
    for p in heldout4_pairs():
        groups.setdefault(section_of_line[int(p.source.rsplit(":", 1)[1])], set()).add(p.group)
    assert "" not in groups  # every pair is under a voice's heading
    assert len(groups) >= 9
    assert all(g == {"update", "paraphrase", "distinct", "unrelated"} for g in groups.values()), groups


def test_only_half_heldout4_runs_the_fourth_held_out_set() -> None:
    import argparse

    from bench.quality.eval_truth import select

    def pairs_of(half: str) -> list[str]:
        args = argparse.Namespace(half=half, limit=None, chains=False, via="store")
        return [p.half for p in select(args)[1]]

    assert "heldout4" not in pairs_of("all")  # run on purpose, for the final report only
    chosen = pairs_of("heldout4")
    assert len(chosen) >= 390 and set(chosen) == {"heldout4"}
