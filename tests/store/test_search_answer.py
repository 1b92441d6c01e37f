"""The answer floor (store.search.answer) and the "weak" label: results that pass the per-hit floor but that
the query-level model does not believe answer the query come back apart, marked weak, never counted as used,
and only when the caller asks for them (MCP never does).

Real apsw + sqlite-vec database in a temp file, fake embedder: the model's fitted weights are not the point
here, so the rules are driven through `answer_floor` (1.0: no probability reaches it; 0: off).
"""

from __future__ import annotations

import math

import pytest

from store import MessageIn, Store, ThreadIn
from store.search.answer import MODEL, Model, absent_share, signals, uncovered_share
from store.search.engine import NOTICE_NOTHING, NOTICE_UNSURE, NOTICE_WEAK
from store.search.keyword import KeywordHit
from store.search.query import parse_query
from store.search.rank import Fusion, Ranked

NONSENSE = "quantum chromodynamics lattice"
NEVER = Fusion(answer_floor=1.0)  # every hybrid answer is judged unsure
OFF = Fusion(answer_floor=0.0)


def _archive(store: Store) -> None:
    msgs = [
        "We decided to run restic backups every night to the NAS.",
        "Good idea: restic deduplicates, so nightly runs stay small.",
        "My sister's dog Biscuit is a beagle.",
    ]
    store.write_thread(
        ThreadIn(
            "generic",
            "a",
            "Home lab",
            [
                MessageIn("user" if i % 2 == 0 else "assistant", t, f"a-{i}", 1e9 + i)
                for i, t in enumerate(msgs)
            ],
        )
    )
    store.add_memory("I prefer restic for backups", "preference")
    store.add_memory("My NAS is a Synology DS920+", "fact")


def _counts(store: Store) -> list[int]:
    return [m.access_count for m in sorted(store.list_memories(), key=lambda m: m.id)]


def test_off_answers_as_before(store: Store) -> None:
    _archive(store)
    resp = store.search("restic backups", fusion=OFF, weak=True)
    assert resp.mode == "hybrid" and resp.results and resp.weak == [] and resp.notice is None
    assert all(not r.weak and not r.to_json()["weak"] for r in resp.results)


def test_unsure_answers_come_back_weak_only_when_asked_and_touch_nothing(store: Store) -> None:
    _archive(store)
    sure = store.search("restic backups", fusion=OFF, touch=False)
    resp = store.search("restic backups", fusion=NEVER, weak=True)
    assert resp.results == [] and resp.notice == NOTICE_WEAK
    assert [(r.kind, r.id) for r in resp.weak] == [(r.kind, r.id) for r in sure.results]
    assert all(r.weak for r in resp.weak)
    data = resp.to_json()
    assert data["results"] == [] and data["weak"] and all(w["weak"] is True for w in data["weak"])
    assert _counts(store) == [0, 0]  # weak results are not used
    plain = store.search("restic backups", fusion=NEVER)  # the default: no weak list at all
    assert plain.results == [] and plain.weak == [] and plain.notice == NOTICE_UNSURE
    assert _counts(store) == [0, 0]


def test_a_nonsense_query_has_no_weak_results_either_and_touches_nothing(store: Store) -> None:
    _archive(store)
    for fusion in (OFF, NEVER):
        for scope in ("all", "memories", "conversations"):
            resp = store.search(NONSENSE, scope=scope, fusion=fusion, weak=True)
            assert resp.results == [] and resp.weak == [] and resp.notice == NOTICE_NOTHING
    assert _counts(store) == [0, 0]


def test_keyword_only_search_has_no_answer_floor(store: Store) -> None:
    """Search as you type runs on keywords alone; the model's signals need both retrievers."""
    _archive(store)
    resp = store.search("restic backups", fusion=NEVER, keyword_only=True, weak=True)
    assert resp.mode == "keyword" and resp.results and resp.weak == []


def test_the_shipped_floor_comes_from_the_config(store: Store) -> None:
    assert store.fusion().answer_floor == store.config.search.answer_floor


def test_absent_share_counts_words_the_archive_never_uses(store: Store) -> None:
    _archive(store)
    kinds = ("message", "memory")
    assert absent_share(store.con, parse_query("restic beagle"), kinds) == 0.0
    assert absent_share(store.con, parse_query("restic marathon"), kinds) == 0.5
    assert absent_share(store.con, parse_query("Synology"), ("message",)) == 1.0  # only in a memory
    assert absent_share(store.con, parse_query("Synology"), kinds) == 0.0
    assert absent_share(store.con, parse_query("向量 marathon"), kinds) == 1.0  # CJK pairs are not counted
    assert absent_share(store.con, parse_query("beag", prefix_last=True), kinds) == 0.0  # being typed


def test_signals_read_the_lists() -> None:
    kw = [
        KeywordHit(("message", 1), 6.0, 1.0),
        KeywordHit(("message", 2), 2.0, 0.5),
        KeywordHit(("message", 3), 1.0, 0.5),
    ]
    sem = [(("message", 1), 0.6), (("message", 4), 0.3)]
    top = [
        Ranked(("message", 1), 2.0, ("keyword", "semantic"), cosine=0.6, coverage=1.0),
        Ranked(("message", 4), 1.0, ("semantic",), cosine=0.3),
    ]
    s = signals(kw, sem, top, {1: 7, 4: 7}, absent=0.25, lean=0.0)
    assert s["cos1"] == 0.6 and s["cov1"] == 1.0 and s["absent"] == 0.25
    assert s["cos_gap10"] == pytest.approx(0.3) and s["both1"] == 1.0 and s["both10"] == pytest.approx(0.1)
    assert s["conc"] == pytest.approx(0.2)
    assert s["kwz"] == pytest.approx((6.0 - 3.0) / math.sqrt(14.0 / 3.0))
    empty = signals([], [], [], {}, absent=0.0, lean=1.0)
    assert empty["cos1"] == empty["cov1"] == empty["conc"] == 0.0


def test_model_probability_is_a_logistic_of_the_signals() -> None:
    m = Model(bias=-1.0, weights={"cos1": 4.0})
    assert m.probability({"cos1": 0.25}) == pytest.approx(0.5)
    assert m.probability({"cos1": 10.0}) < 1.0  # clipped: an answer floor of 1.0 is never reached
    assert 0.0 < MODEL.probability({}) < 1.0


def test_uncovered_share_counts_words_the_archive_uses_but_no_top_result_contains(store: Store) -> None:
    _archive(store)
    top = store.search("restic beagle", scope="messages", fusion=OFF, touch=False).results
    restic_rows = [Ranked(("message", r.id), 1.0, ("keyword",)) for r in top if "restic" in r.content]
    assert restic_rows
    parsed = parse_query("restic beagle marathon")  # marathon: in no row, so not counted
    assert uncovered_share(store.con, parsed, restic_rows) == 0.5  # beagle is in the archive, not in them
    everything = [Ranked(("message", r.id), 1.0, ("keyword",)) for r in top]
    assert uncovered_share(store.con, parsed, everything) == 0.0
    assert uncovered_share(store.con, parsed, []) == 0.0


# -- the CJK fade (chosen on tune with the rule "no question kind below keyword-only") --------------------


def test_a_code_switched_query_ranks_on_keywords_alone() -> None:
    """A sixth of the query in CJK and the semantic side is gone; an eighth and the smoothing is too."""
    from store.search.rank import Context, cjk_lean, fuse, smooth

    mixed = parse_query("Lin Xiao 的 pottery class 在哪个区？")  # a fifth CJK
    english = parse_query("which district is the pottery class in")
    f = Fusion()
    assert cjk_lean(mixed, f) == 1.0 and cjk_lean(english, f) == 0.0
    kw = [
        KeywordHit(("message", 1), 5.0, 1.0),
        KeywordHit(("message", 2), 4.0, 0.5),
        KeywordHit(("message", 3), 1.0, 0.2),
    ]
    sem = [(("message", 3), 0.9), (("message", 2), 0.5), (("message", 1), 0.1)]
    by_keyword = fuse(kw, sem, f, mixed)
    assert sorted(by_keyword, key=lambda key: -by_keyword[key].score) == [
        ("message", 1),
        ("message", 2),
        ("message", 3),
    ]
    both = fuse(kw, sem, f, english)
    assert both[("message", 3)].score > by_keyword[("message", 3)].score
    context = Context({1: 9, 2: 9, 3: 9}, {1: [2], 2: [1, 3]})
    plain = {key: r.score for key, r in fuse(kw, sem, f, mixed).items()}
    smoothed = smooth(fuse(kw, sem, f, mixed), context, f, mixed)
    assert {key: r.score for key, r in smoothed.items()} == plain  # no smoothing for it
    kept = smooth(fuse(kw, sem, f, mixed), context, Fusion(cjk_smoothing=True), mixed)
    assert kept[("message", 3)].score > plain[("message", 3)]
