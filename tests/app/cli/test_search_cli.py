"""`memapp search`: JSON shape, filters and dates, errors (exit 2), the no-model notice, access counts, and
batch mode (one JSON line per query line, bad lines reported, the rest answered)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.cli.common import UsageError
from app.cli.search import parse_date
from store import MessageIn, Store, ThreadIn
from tests.store.test_search import RESULT_KEYS  # the one list of a result's fields


@pytest.fixture
def db(db_path: Path, no_model_config: Path) -> dict[str, Any]:
    """A chat.db written without a model (so the CLI never loads one): two threads and two memories."""
    with Store(db_path, embedder=None) as s:
        t1 = s.write_thread(
            ThreadIn(
                "test",
                "t1",
                "NAS",
                [
                    MessageIn(
                        "user", "How do I back up the NAS with restic?", "t1-0", created_at=1_735_689_600.0
                    ),  # 2025-01-01
                    MessageIn(
                        "assistant",
                        "Use restic with a B2 bucket for the NAS backup.",
                        "t1-1",
                        created_at=1_735_776_000.0,
                    ),
                ],
            )
        ).thread_id
        t2 = s.write_thread(
            ThreadIn(
                "test",
                "t2",
                "Other",
                [
                    MessageIn(
                        "user", "restic snapshots are slow on the laptop", "t2-0", created_at=1_740_000_000.0
                    ),
                ],
            )
        ).thread_id
        m1 = s.add_memory("The NAS backup runs restic nightly", "project").memory.id
        m2 = s.add_memory("I prefer restic over borg", "preference", pinned=True).memory.id
    return {"path": db_path, "t1": t1, "t2": t2, "m1": m1, "m2": m2}


def run(capsys: pytest.CaptureFixture[str], db: dict[str, Any], *args: str) -> tuple[int, Any, str]:
    code = main(["--db", str(db["path"]), "search", *args])
    out, err = capsys.readouterr()
    try:
        return code, json.loads(out), err
    except ValueError:
        return code, out, err


def test_json_results_and_notice(capsys: pytest.CaptureFixture[str], db: dict[str, Any]) -> None:
    code, data, _ = run(capsys, db, "restic NAS", "--json")
    assert code == 0 and data.keys() == {"query", "mode", "notice", "results", "weak"}
    assert data["mode"] == "keyword" and data["notice"].startswith("semantic search unavailable:")
    assert {r["kind"] for r in data["results"]} == {"message", "memory"}
    assert all(r.keys() == RESULT_KEYS and r["matched"] == ["keyword"] for r in data["results"])
    code, data, _ = run(capsys, db, "restic NAS", "--json", "--keyword-only")
    assert data["notice"] is None


def test_human_output_prints_the_notice_on_stderr(
    capsys: pytest.CaptureFixture[str], db: dict[str, Any]
) -> None:
    code, out, err = run(capsys, db, "restic")
    assert code == 0 and "message" in out and "memory" in out
    assert err.count("\n") == 1 and "semantic search unavailable" in err


@pytest.mark.parametrize(
    "args,expected",
    [
        (["--scope", "memories"], {"memory"}),
        (["--scope", "messages", "--role", "assistant"], {"t1-1"}),
        (["--category", "preference"], {"memory"}),
        (["--pinned"], {"memory"}),
        (["--since", "2025-02-01"], {"t2-0", "memory"}),
        (["--until", "2025-01-01", "--scope", "messages"], {"t1-0"}),
        (["--since", "2025-01-02T00:00:00Z", "--until", "2025-01-02", "--scope", "messages"], {"t1-1"}),
    ],
)
def test_filters(
    capsys: pytest.CaptureFixture[str], db: dict[str, Any], args: list[str], expected: set[str]
) -> None:
    code, data, err = run(capsys, db, "restic", "--keyword-only", "--json", *args)
    assert code == 0, err
    assert {r["external_id"] or r["kind"] for r in data["results"]} == expected


def test_thread_filter_and_k(capsys: pytest.CaptureFixture[str], db: dict[str, Any]) -> None:
    code, data, _ = run(capsys, db, "restic", "--keyword-only", "--json", "--thread", str(db["t1"]))
    assert {r["thread_id"] for r in data["results"]} == {db["t1"]} and len(data["results"]) == 2
    code, data, _ = run(capsys, db, "restic", "--keyword-only", "--json", "-k", "1")
    assert len(data["results"]) == 1


@pytest.mark.parametrize(
    "args",
    [
        ["restic", "--thread", "999"],
        ["restic", "--since", "yesterday"],
        ["restic", "--category", "fact", "--role", "user"],
        ["restic", "--since", "2026-01-01", "--until", "2025-01-01"],
        ["restic", "-k", "0"],
        [],
        ["restic", "--batch", "-"],
    ],
)
def test_bad_arguments_exit_2(
    capsys: pytest.CaptureFixture[str], db: dict[str, Any], args: list[str]
) -> None:
    code, _, err = run(capsys, db, *args)
    assert code == 2 and err.startswith("memapp:") and err.count("\n") == 1


def test_cli_search_counts_accesses(capsys: pytest.CaptureFixture[str], db: dict[str, Any]) -> None:
    run(capsys, db, "restic", "--scope", "memories", "--json")
    run(capsys, db, "restic", "--scope", "memories", "--json", "--no-touch")
    with Store(db["path"], embedder=None) as s:
        assert [s.get_memory(db[m]).access_count for m in ("m1", "m2")] == [1, 1]


def test_batch_reads_json_lines(
    capsys: pytest.CaptureFixture[str], db: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [
        {"query": "restic", "scope": "messages", "k": 1},
        {"query": "restic", "thread": db["t2"]},
        "{not json",
        {"query": "restic", "colour": "blue"},
        {"query": "borg", "category": "preference"},
        {"query": 5},
        {"query": "restic", "since": "2025-02-01", "scope": "messages"},
    ]
    text = "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    code = main(["--db", str(db["path"]), "search", "--batch", "-", "--keyword-only"])
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 1 and len(out) == 7
    assert len(out[0]["results"]) == 1 and out[0]["results"][0]["kind"] == "message"
    assert [r["external_id"] for r in out[1]["results"]] == ["t2-0"]
    assert out[2]["line"] == 3 and "error" in out[2]
    assert "colour" in out[3]["error"]
    assert [r["id"] for r in out[4]["results"]] == [db["m2"]]
    assert out[5] == {"line": 6, "error": 'each line must be a JSON object with a "query" string'}
    assert [r["external_id"] for r in out[6]["results"]] == ["t2-0"]


def test_batch_from_a_file(capsys: pytest.CaptureFixture[str], db: dict[str, Any], tmp_path: Path) -> None:
    f = tmp_path / "q.jsonl"
    f.write_text('{"query": "restic"}\n{"query": "nothing matches zebra"}\n', encoding="utf-8")
    code = main(["--db", str(db["path"]), "search", "--batch", str(f)])
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0 and len(out) == 2 and out[1]["results"] == [] and out[0]["results"]
    code = main(["--db", str(db["path"]), "search", "--batch", str(tmp_path / "missing.jsonl")])
    assert code == 2


def test_parse_date() -> None:
    assert parse_date("2025-01-01") == 1_735_689_600.0
    assert parse_date("2025-01-01", end=True) == 1_735_689_600.0 + 86400
    assert parse_date("2025-01-01T01:00:00+01:00") == 1_735_689_600.0
    assert parse_date("2025-01-01T00:00:00") == 1_735_689_600.0
    with pytest.raises(UsageError):
        parse_date("01/02/2025")


def test_no_good_match_says_so_and_counts_nothing(
    capsys: pytest.CaptureFixture[str], db: dict[str, Any]
) -> None:
    code, data, _ = run(capsys, db, "quantum chromodynamics lattice", "--json", "--keyword-only")
    assert code == 0 and data["results"] == [] and data["notice"].startswith("no good match")
    code, out, _ = run(capsys, db, "quantum chromodynamics lattice")
    assert code == 0 and out.startswith("no good match")
    code, data, _ = run(capsys, db, "what should we do", "--json", "--keyword-only")
    assert data["results"] == [] and "only common words" in data["notice"]
    with Store(db["path"], embedder=None) as s:
        assert [m.access_count for m in s.list_memories()] == [0, 0]


def test_weak_results_are_listed_apart_and_marked(
    capsys: pytest.CaptureFixture[str], db: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With an answer floor nothing reaches (1.0), a hybrid search's results are all weak: `--json` keeps
    `results` empty and lists them under `weak`, each marked; the text output says so on every line; and
    weak results are not counted as used."""
    from embeddings import FakeEmbedder
    from store.maintenance import embed_missing
    from store.search.engine import NOTICE_WEAK

    class FakeModelStore(Store):
        def __init__(self, path: Path, config: Any = None, embedder: Any = "auto") -> None:
            super().__init__(path, config=config, embedder=FakeEmbedder())

    monkeypatch.setattr("store.Store", FakeModelStore)  # the face the CLI opens its store through
    with FakeModelStore(db["path"]) as fake:
        embed_missing(fake)
    cfg = tmp_path / "weak.toml"
    cfg.write_text("[search]\nanswer_floor = 1.0\n")
    monkeypatch.setenv("MEMAPP_CONFIG", str(cfg))
    code, data, _ = run(capsys, db, "restic NAS", "--json")
    assert code == 0 and data["mode"] == "hybrid" and data["notice"] == NOTICE_WEAK
    assert data["results"] == [] and data["weak"]
    assert all(r.keys() == RESULT_KEYS and r["weak"] is True for r in data["weak"])
    code, out, _ = run(capsys, db, "restic NAS")
    lines = out.splitlines()
    assert lines[0] == NOTICE_WEAK
    numbered = [line for line in lines if line.lstrip()[:1].isdigit()]
    assert numbered and all("WEAK (below the floor)" in line for line in numbered)
    with Store(db["path"], embedder=None) as plain:
        assert all(m.access_count == 0 for m in plain.list_memories())
