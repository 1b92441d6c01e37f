"""Issue 31.13, the importer half: what one broken part of a file costs.

- A syntax error in the middle of a JSON list (a flipped byte, a NUL, a missing quote or comma) costs
  that one conversation, reported with where it was; the conversations after it are imported (the rest
  of the file used to be dropped).
- A ChatGPT export manifest nested deeper than Python recurses is reported; the conversations import
  (it used to stop the whole folder).
- Two threads with one id in a generic file are never merged without a word: a repeat that adds
  nothing is noted, a later, longer copy adds its new messages (noted), and a different thread under
  the same id is imported as `ID#2` (noted).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from store import Store
from store.importing.pipeline import import_paths
from tests.store.importing.formats.import_helpers import FIXTURES, read
from tests.store.importing.test_repair import _chatgpt, _claude, _generic, _openwebui

MAKERS = {"chatgpt": _chatgpt, "claude": _claude, "openwebui": _openwebui, "generic": _generic}
DAMAGE = {  # in the conversation's last message: its text, a quote, a closing brace
    "nul": lambda t: t.replace('"ok"', "\x00", 1),
    "quote": lambda t: t.replace('"ok"', '"ok', 1),
    "brace": lambda t: t[: t.rindex("}", 0, t.index('"ok"'))] + t[t.rindex("}", 0, t.index('"ok"')) + 1 :],
}


def _list_file(tmp_path: Path, fmt: str, damage: str, n: int = 6) -> Path:
    """A list of `n` conversations; the third one damaged in its text."""
    parts = [json.dumps(MAKERS[fmt](f"message {i}", i)) for i in range(n)]
    parts[2] = DAMAGE[damage](parts[2])
    path = tmp_path / ("conversations.json" if fmt != "openwebui" else "chat-export.json")
    path.write_text("[" + ", ".join(parts) + "]", encoding="utf-8")
    return path


@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize("fmt", sorted(MAKERS))
def test_a_syntax_error_mid_file_costs_one_conversation(tmp_path: Path, fmt: str, damage: str) -> None:
    path = _list_file(tmp_path, fmt, damage)
    r = read(path, fmt)
    assert sorted(str(t.external_id) for t in r.threads) == ["c0", "c1", "c3", "c4", "c5"], r.problems
    [problem] = r.problems
    assert problem.conversation in ("conversation 2", "chat 2", "thread 2")
    assert "characters" in problem.error and "the rest of the file was read" in problem.error


def test_a_broken_bundle_keeps_its_other_threads_and_memories(tmp_path: Path) -> None:
    threads = [json.dumps(_generic(f"message {i}", i)) for i in range(4)]
    threads[1] = threads[1].replace('"ok"', "ok", 1)
    memory = '{"category": "fact", "content": "Lives in Lisbon"}'
    path = tmp_path / "bundle.json"
    path.write_text(
        '{"source": "mine", "threads": [' + ", ".join(threads) + '], "memories": [' + memory + "]}",
        encoding="utf-8",
    )
    with Store(tmp_path / "chat.db", embedder=None) as store:
        report = import_paths(store, [path], embed=False, summarize=False)
        assert (report.threads_added, report.memories_added) == (3, 1)
        assert [e.conversation for e in report.errors] == ["thread 1"]
        assert {t.source for t in store.list_threads()} == {"mine"}


def test_a_deeply_nested_manifest_does_not_stop_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "conversations.json").write_bytes((FIXTURES / "chatgpt" / "conversations.json").read_bytes())
    (folder / "export_manifest.json").write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    r = read(folder, "chatgpt")
    assert len(r.threads) > 0
    [problem] = [p for p in r.problems if "manifest" in p.error]
    assert "unreadable export manifest" in problem.error and "importing the files present" in problem.error


def _thread(tid: str, texts: list[str]) -> dict[str, Any]:
    return {
        "id": tid,
        "messages": [{"id": f"m{i}", "role": "user", "content": t} for i, t in enumerate(texts)],
    }


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_two_threads_with_one_id_are_never_merged_silently(tmp_path: Path, suffix: str) -> None:
    threads = [
        _thread("a", ["one", "two"]),
        _thread("a", ["one", "two"]),  # the same again: nothing new
        _thread("a", ["one", "two", "three"]),  # a later copy that grew
        _thread("a", ["something else"]),  # another thread given the same id
        _thread("a", ["yet another"]),
    ]
    path = tmp_path / f"threads{suffix}"
    if suffix == ".jsonl":
        path.write_text("".join(json.dumps(t) + "\n" for t in threads), encoding="utf-8")
    else:
        path.write_text(json.dumps(threads), encoding="utf-8")
    with Store(tmp_path / "chat.db", embedder=None) as store:
        report = import_paths(store, [path], embed=False, summarize=False)
        assert report.errors == [] and len(report.notes) == 4
        texts = {t.external_id: [m.content for m in store.get_messages(t.id)] for t in store.list_threads()}
        assert texts == {"a": ["one", "two", "three"], "a#2": ["something else"], "a#3": ["yet another"]}
        notes = [n.error for n in report.notes]
        assert "no message the first copy lacks" in notes[0]
        assert "1 more message(s)" in notes[1]
        assert "'a#2'" in notes[2] and "'a#3'" in notes[3]
        again = import_paths(store, [path], embed=False, summarize=False)
        assert (again.threads_added, again.messages_added) == (0, 0)  # the numbering is stable
