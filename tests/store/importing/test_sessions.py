"""Session logs in chat.db: idempotent re-import that writes nothing, incremental reads of a growing
session, a replaced file, a deleted thread; text lists become suggestions, never memories."""

from __future__ import annotations

import shutil
from pathlib import Path

from store import Store
from store.extract.suggestions import accept_suggestion, list_suggestions
from store.importing.pipeline import import_paths
from store.prompt_export import prompt_block
from tests.store.importing.formats.agent_fixtures import claude_session_lines, write_session
from tests.store.importing.formats.import_helpers import FIXTURES
from tests.store.test_importing import snapshot

CLAUDE_DIR = FIXTURES / "claude-code"
CLAUDE = CLAUDE_DIR / "-home-ana-src-tide" / "5f0c7a52-3d0e-4b7a-9c11-2a9b1f3e8d01.jsonl"
CODEX = next((FIXTURES / "codex" / "2025").rglob("rollout-*.jsonl"))


def _messages(store: Store) -> list[tuple[str, str]]:
    return [
        (str(r[0]), str(r[1]))
        for r in store.con.execute("SELECT role, content FROM messages ORDER BY thread_id, seq")
    ]


def test_reimporting_unchanged_sessions_writes_nothing(store: Store, tmp_path: Path) -> None:
    folder = tmp_path / "projects"
    shutil.copytree(CLAUDE_DIR, folder)
    shutil.copytree(FIXTURES / "codex", tmp_path / "codex")
    first = import_paths(store, [folder, tmp_path / "codex"])
    assert (first.threads_added, first.messages_added, first.files_read, first.errors) == (3, 15, 3, [])
    before = snapshot(store)
    changes = store.con.total_changes()
    second = import_paths(store, [folder, tmp_path / "codex"])
    assert (second.messages_added, second.files_read, second.files_unchanged) == (0, 0, 3)
    assert store.con.total_changes() == changes  # not a row written, not even bookkeeping
    assert snapshot(store) == before


def test_a_growing_session_is_read_incrementally(store: Store, tmp_path: Path) -> None:
    data = CLAUDE.read_bytes()
    path = tmp_path / CLAUDE.name
    whole_store_messages = None
    for cut in (len(data) // 3, (2 * len(data)) // 3 + 11):
        path.write_bytes(data[:cut])  # the last line is half-written
        r = import_paths(store, [path])
        assert r.errors == []
    path.write_bytes(data)
    r = import_paths(store, [path])
    assert r.errors == [] and r.files_read == 1
    [t] = store.list_threads()
    assert t.title == "Fix flaky tide-gauge parser test"
    got = _messages(store)
    whole_store_messages = [m for m in got if m[1]]
    fresh = Store(tmp_path / "fresh.db", embedder=store.embedder)
    try:
        import_paths(fresh, [CLAUDE])
        assert [m for m in _messages(fresh) if m[1]] == whole_store_messages
        calls = lambda s: sum(len(m.metadata.get("tool_calls", [])) for m in s.get_messages(1))  # noqa: E731
        assert calls(store) == calls(fresh) == 4
    finally:
        fresh.close()


def test_only_new_lines_are_read(store: Store, tmp_path: Path) -> None:
    lines = claude_session_lines(40, 3)
    path = write_session(tmp_path, lines[:80])
    import_paths(store, [path])
    [(offset,)] = store.con.execute("SELECT offset FROM import_files").fetchall()
    assert offset == path.stat().st_size
    with path.open("a", encoding="utf-8") as fp:
        fp.write("".join(line + "\n" for line in lines[80:]))
    r = import_paths(store, [path])
    assert r.files_read == 1 and r.threads_updated == 1
    assert store.stats()["messages"] == 40 * 3  # prompt, one tool run, answer per turn
    [t] = store.list_threads()
    assert t.title.startswith("Turn 0:")


def test_a_replaced_file_is_read_again_from_the_start(store: Store, tmp_path: Path) -> None:
    path = write_session(tmp_path, claude_session_lines(3, 1))
    import_paths(store, [path])
    other = claude_session_lines(5, 1)
    other[0] = other[0].replace("Turn 0", "A different first prompt")
    path.write_text("".join(line + "\n" for line in other), encoding="utf-8")
    r = import_paths(store, [path])
    assert r.errors == [] and r.messages_added == 2 * 3  # turns 3-4; earlier lines known by uuid


def test_a_deleted_thread_is_imported_again_whole(store: Store, tmp_path: Path) -> None:
    path = write_session(tmp_path, claude_session_lines(2, 1))
    import_paths(store, [path])
    [t] = store.list_threads()
    store.delete_thread(t.id)
    assert store.con.execute("SELECT count(*) FROM import_files").fetchall() == [(0,)]
    r = import_paths(store, [path])
    assert (r.threads_added, r.messages_added) == (1, 6)


def test_text_list_becomes_suggestions_never_memories(store: Store) -> None:
    r = import_paths(store, [FIXTURES / "text" / "claude-list.md"])
    assert (r.suggestions_added, r.memories_added, r.threads_added) == (5, 0, 0)  # one line twice
    assert store.list_memories() == []
    pending = list_suggestions(store)
    assert [(s.category, s.content, s.thread_id) for s in pending][:2] == [
        ("preference", "You prefer metric units in every answer.", None),
        ("project", "You are building a budgeting app in SvelteKit with a Go backend.", None),
    ]
    again = import_paths(store, [FIXTURES / "text" / "claude-list.md"])
    assert (again.suggestions_added, again.suggestions_known) == (0, 5)
    accepted = accept_suggestion(store, pending[0].id)
    assert [m.content for m in store.list_memories()] == [accepted.memory.content]


def test_prompt_export_fits_the_budget_best_first(store: Store) -> None:
    low = store.add_memory("Likes long walks along the fjord on Sundays.", "preference", importance=2).memory
    pinned = store.add_memory("Is allergic to shellfish.", "fact", importance=3, pinned=True).memory
    high = store.add_memory("Is building the tide-gauge parser called tide.", "project", importance=9).memory
    whole = prompt_block(store, 10_000)
    assert [m.id for m in whole.included] == [pinned.id, high.id, low.id] and whole.left_out == 0
    assert "Projects:\n- Is building the tide-gauge parser called tide." in whole.text
    assert whole.tokens == store.tokens.count(whole.text)
    tight = prompt_block(store, whole.tokens - 3)
    assert [m.id for m in tight.included] == [pinned.id, high.id] and tight.left_out == 1
    assert tight.tokens <= tight.budget
    assert prompt_block(store, 5).included == []


def test_missing_vectors_of_one_session_are_found_for_the_hook(store: Store, tmp_path: Path) -> None:
    """A Stop hook imports with --no-embed; the SessionEnd hook embeds what that session lacks (only it)."""
    other = write_session(
        tmp_path / "b", claude_session_lines(2, 1), name="11111111-2222-4333-8444-555555555555"
    )
    import_paths(store, [other], embed=False)
    path = write_session(tmp_path / "a", claude_session_lines(3, 2))
    import_paths(store, [path], embed=False)
    [thread] = [t for t in store.list_threads() if t.external_id == path.stem]
    missing = store.messages_missing_vectors(256, thread_id=thread.id)
    assert [m.role for m in missing] == ["user", "assistant"] * 3  # tool runs have no text to embed
    assert store.embed_messages(missing) == 6
    assert store.messages_missing_vectors(256, thread_id=thread.id) == []
    assert len(store.messages_missing_vectors(256)) == 4  # the other session's, untouched


def test_a_thousand_tool_calls_are_stored_as_one_silent_message(store: Store, tmp_path: Path) -> None:
    path = write_session(tmp_path, claude_session_lines(1, 1000, fail_every=10))
    r = import_paths(store, [path])
    assert (r.threads_added, r.messages_added, r.errors) == (1, 3, [])
    [t] = store.list_threads()
    user, run, answer = store.get_messages(t.id)
    assert (run.role, run.content, run.token_count) == ("tool", "", 0)
    assert len(run.metadata["tool_calls"]) == 1000
    assert sum(1 for c in run.metadata["tool_calls"] if c.get("error")) == 100
    hits = store.con.execute("SELECT count(*) FROM fts_messages WHERE fts_messages MATCH 'pytest'").fetchall()
    assert hits == [(0,)]  # tool inputs are metadata, not indexed prose


def _calls(store: Store) -> list[str]:
    """The input of every tool call stored, in order."""
    return [
        str(c["input"])
        for t in store.list_threads()
        for m in store.get_messages(t.id, limit=10_000)
        for c in m.metadata.get("tool_calls", [])
    ]


def _said(store: Store) -> list[str]:
    return [c for _, c in _messages(store) if c]


def _fresh(tmp_path: Path, store: Store, path: Path) -> Store:
    fresh = Store(tmp_path / "fresh.db", embedder=store.embedder)
    import_paths(fresh, [path])
    return fresh


def test_a_session_that_shrinks_and_grows_back_keeps_each_tool_call_once(
    store: Store, tmp_path: Path
) -> None:
    """28.5: cut in the middle of a run of tool calls, then grown back, the session was read on from the
    cut, and the calls after it were stored a second time (in a run keyed by the first line read)."""
    lines = claude_session_lines(2, 3)
    path = write_session(tmp_path, lines)
    import_paths(store, [path])
    path.write_text("".join(line + "\n" for line in lines[:3]), encoding="utf-8")  # prompt, call 1, result 1
    assert import_paths(store, [path]).errors == []
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    r = import_paths(store, [path])
    assert r.errors == [] and r.messages_added == 0
    fresh = _fresh(tmp_path, store, path)
    try:
        assert _calls(store) == _calls(fresh) and len(_calls(store)) == 6
        assert _said(store) == _said(fresh)
    finally:
        fresh.close()


def test_a_session_edited_shorter_then_grown_loses_no_message(store: Store, tmp_path: Path) -> None:
    """31.4: a line edited shorter after the first kilobyte, then the session grown past the old end: the
    resume point still passed (size and first kilobyte), the read began inside a line ("line is not
    JSON"), that message was never imported, and later runs said the file was unchanged. The resume
    point is now checked by a hash of everything read before it; a file that fails is read again from
    the start, and the messages already stored are known by id."""
    lines = claude_session_lines(3, 1, pad=2000)
    path = write_session(tmp_path, lines[:8])
    import_paths(store, [path])
    edited = [line.replace("x" * 2000, "x" * 500) if i == 2 else line for i, line in enumerate(lines)]
    path.write_text("".join(line + "\n" for line in edited), encoding="utf-8")
    r = import_paths(store, [path])
    assert r.errors == []
    assert import_paths(store, [path]).files_unchanged == 1
    fresh = _fresh(tmp_path, store, path)
    try:
        assert _said(store) == _said(fresh) and len(_said(store)) == 6  # 3 prompts, 3 answers
        assert len(_calls(store)) == len(_calls(fresh)) == 3
    finally:
        fresh.close()


def test_a_rewritten_session_keeps_the_calls_a_run_gained(store: Store, tmp_path: Path) -> None:
    """Read again from the start, a run whose first line is stored already was skipped whole, with the
    calls it had gained since: each call is now known by its own id."""
    lines = claude_session_lines(1, 3)
    path = write_session(tmp_path, lines[:3])  # the prompt, the first call and its result
    import_paths(store, [path])
    assert len(_calls(store)) == 1
    rewritten = [lines[0].replace("please check", "please look at"), *lines[1:]]  # the head changed
    path.write_text("".join(line + "\n" for line in rewritten), encoding="utf-8")
    r = import_paths(store, [path])
    assert r.errors == []
    assert len(_calls(store)) == 3 and len(set(_calls(store))) == 3
    again = import_paths(store, [path])
    assert (again.messages_added, again.files_unchanged) == (0, 1)


def test_a_codex_session_edited_before_its_end_is_not_imported_twice(store: Store, tmp_path: Path) -> None:
    """Codex lines have no ids: messages are keyed by their byte offset, which an edit shifts. Read again
    from the start, a message already stored (same role, text and time) is not added again."""
    path = tmp_path / CODEX.name
    lines = CODEX.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(lines[:-2]) + "\n", encoding="utf-8")
    import_paths(store, [path])
    before = _said(store)
    lines[0] = lines[0].replace('"cwd":"/home/ana/src/tide"', '"cwd":"/home/ana/tide"')  # shorter: all shift
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    r = import_paths(store, [path])
    assert r.errors == []
    fresh = _fresh(tmp_path, store, path)
    try:
        assert _said(store) == _said(fresh) and len(_said(store)) > len(before)
        assert len(_calls(store)) == len(_calls(fresh))
    finally:
        fresh.close()
