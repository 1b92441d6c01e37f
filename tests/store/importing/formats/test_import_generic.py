"""The generic JSON/JSONL format: ids kept, exact content, memories, per-line problems, stable ids."""

from __future__ import annotations

import shutil
from pathlib import Path

from store.importing.formats import detect_format
from tests.store.importing.formats.import_helpers import FIXTURES, msgs, read

DIR = FIXTURES / "generic"


def test_detected() -> None:
    for name in ("bundle.json", "threads.jsonl", "finetune.jsonl", "list.json"):
        assert detect_format(DIR / name) == "generic"


def test_object_form_with_threads_and_memories() -> None:
    r = read(DIR / "bundle.json")
    assert r.order == [
        "thread:g-1",
        "thread:42",
        "problem:g-bad",
        "memory",
        "memory",
        "problem:memory 2",
        "problem:memory 3",
    ]
    g1 = r.thread("g-1")
    assert (g1.source, g1.title) == ("demo", "Trip planning")  # top-level "source"
    assert msgs(g1) == [
        ("g-1-m1", "user", "Plan a trip to Porto.\r\nTwo days."),  # content kept exactly
        ("g-1-m2", "assistant", "Day 1: Ribeira."),
        ("idx:2", "user", "Thanks"),  # no id: its position
    ]
    # ISO string, epoch seconds, epoch milliseconds.
    assert [m.created_at for m in g1.messages] == [1740816000.0, 1740816060.0, 1740816120.0]
    assert g1.messages[1].metadata == {"name": "planner"}
    assert (g1.created_at, g1.updated_at) == (1740816000.0, 1740816120.0)

    numeric = r.thread("42")
    assert numeric.source == "chatgpt"  # a thread's own "source" wins
    assert msgs(numeric) == [("7", "user", "Numbers as ids")]  # "human" is a user
    assert numeric.title == "Numbers as ids"

    assert [(m.category, m.content, m.importance, m.origin) for m in r.memories] == [
        ("preference", "Prefers aisle seats", 7, "import"),
        ("fact", "Lives in Lisbon", 5, "import"),
    ]
    assert [m.pinned for m in r.memories] == [True, False]
    assert [p.error for p in r.problems] == [
        "message x has unknown role 'wizard'",
        "memory has unknown category 'mood' (expected one of preference, project, skill, fact)",
        "memory importance must be an integer 1-10, got 11",
    ]


def test_jsonl_reports_bad_lines_and_imports_the_rest() -> None:
    path = DIR / "threads.jsonl"
    r = read(path)
    assert r.order == ["thread:j-1", "problem:line 3", "problem:j-2", "thread:j-3"]
    assert {t.source for t in r.threads} == {"jsonl"}
    assert msgs(r.thread("j-1")) == [("j-1-a", "user", "one"), ("j-1-b", "assistant", "two")]
    assert [m.created_at for m in r.thread("j-1").messages] == [1743458400.0, 1743458405.0]  # +02:00 offset
    assert msgs(r.thread("j-3")) == [("j-3-a", "system", "Be nice"), ("j-3-b", "user", "hi")]
    assert r.problems[0].file == str(path)
    assert r.problems[0].error.startswith("invalid JSON")
    assert r.problems[1].error == "messages is str, expected a list"


def test_openai_finetuning_lines_get_stable_ids() -> None:
    first, second = read(DIR / "finetune.jsonl"), read(DIR / "finetune.jsonl")
    assert first == second
    a, b = first.threads
    assert (a.external_id or "").startswith("sha256:") and a.external_id != b.external_id
    assert a.title == "Capital of France?"
    assert msgs(a) == [
        ("idx:0", "system", "You are terse."),
        ("idx:1", "user", "Capital of France?"),
        ("idx:2", "assistant", "Paris."),
    ]
    assert a.messages[1].metadata == {"parts": ["image_url"]}
    assert msgs(b) == [
        ("idx:0", "user", "2+2?"),
        ("idx:1", "assistant", ""),
        ("idx:2", "tool", "4"),
        ("idx:3", "assistant", "4"),
    ]
    assert b.messages[1].metadata["tool_calls"][0]["function"]["name"] == "calc"
    assert b.messages[2].metadata == {"tool_call_id": "c1"}


def test_list_form_and_sharegpt() -> None:
    r = read(DIR / "list.json")
    listed, share = r.threads
    assert (listed.source, listed.external_id, msgs(listed)) == (
        "generic",
        "l-1",
        [("l-1-a", "user", "listed message")],
    )
    assert msgs(share) == [("idx:0", "user", "ShareGPT question"), ("idx:1", "assistant", "ShareGPT answer")]


def test_jsonl_content_under_a_json_name(tmp_path: Path) -> None:
    renamed = tmp_path / "threads.json"
    shutil.copy(DIR / "threads.jsonl", renamed)
    assert detect_format(renamed) == "generic"
    assert [t.external_id for t in read(renamed).threads] == ["j-1", "j-3"]
