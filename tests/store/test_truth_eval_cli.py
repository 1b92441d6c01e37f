"""`eval_truth --via cli`: pairs run through the installed memapp script, one fresh HOME per pair, read back
from the CLI's JSON the way the in-process `outcome()` reads the Store (bench/lib/truth_cli.py).

The CLI cannot be told to use the tests' fake embedder (no setting or variable selects it), so the two-pair
run uses the app's default model, as a user's memapp does."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

from bench.lib.truth_cli import outcome_from_cli, run_pairs_cli, sample
from bench.lib.truth_data import Pair, fresh_pairs


def _pair(kind: str, old: str, new: str) -> Pair:
    return Pair("test:1", kind, "both", (), old, new, "tune")


def test_outcomes_are_read_from_the_cli_json_as_from_the_store() -> None:
    old: dict[str, Any] = {"id": 1, "conflicts": []}
    current: list[dict[str, Any]] = [{"id": 1, "valid_until": None}, {"id": 2, "valid_until": None}]
    assert outcome_from_cli(old, {"id": 1, "action": "merged", "conflicts": []}, current[:1], []) == "merge"
    assert outcome_from_cli(old, {"id": 2, "conflicts": []}, current, []) == "both"
    gone: list[dict[str, Any]] = [{"id": 1, "valid_until": "2026-11-28T03:00:00Z"}, current[1]]
    assert outcome_from_cli(old, {"id": 2, "conflicts": []}, gone, []) == "supersede"
    asked = {"id": 2, "conflicts": [7]}
    assert outcome_from_cli(old, asked, current, [{"id": 7, "suggested": "merge"}]) == "offer"
    assert outcome_from_cli(old, asked, current, [{"id": 7, "suggested": "both"}]) == "queue"


def test_the_sample_is_fixed_and_spread_over_the_groups() -> None:
    pairs = fresh_pairs()
    first, again = sample(pairs, 40), sample(list(reversed(pairs)), 40)
    assert first == again  # neither the run nor the order of the lines changes it
    assert Counter(p.group for p in first) == {
        "update": 10,
        "paraphrase": 10,
        "distinct": 10,
        "unrelated": 10,
    }
    assert sample(pairs, None) == pairs


def test_two_pairs_through_the_memapp_script_match_the_in_process_run(tmp_path: Path) -> None:
    from bench.quality.eval_truth import CachedEmbedder, make_embedder, run_pair

    pairs = [
        _pair("update", "Lives in Ghent", "Moved from Ghent to Antwerp in May"),
        _pair("unrelated", "Plays the oboe", "Allergic to kiwi"),
    ]
    via_cli = run_pairs_cli(pairs, ("fact", "fact"), keyword_only=False, workers=2)
    emb = CachedEmbedder(make_embedder("default"), [t for p in pairs for t in (p.old, p.new)])
    in_process = [run_pair(tmp_path, emb, p, i) for i, p in enumerate(pairs)]
    assert [r["outcome"] for r in via_cli] == [r["outcome"] for r in in_process]
    assert via_cli[1]["outcome"] == "both"  # two unrelated memories: both current, nothing asked
    # Each pair had its own HOME: the caller's database (MEMAPP_DB, set by conftest) was never touched.
    assert not Path(os.environ["MEMAPP_DB"]).exists()
