"""Promise 3, bad input: every importer, fed broken exports through the real `memapp import`.

Hypothesis mutates the real fixtures of each format (a subtree replaced by a wrong-typed, huge, deeply
nested or unpaired-surrogate value), then may cut the file short or splice in bytes that are not UTF-8;
llm's logs.db gets wrong-typed cells. Each variant goes through `app.cli.main(["import", …])` into a
fresh chat.db, and then:
- the exit code is 0 or 1 (1 exactly when something was skipped), stdout is the JSON report, and no
  traceback reaches stderr;
- what is in chat.db is exactly what the parser accepted and the store did not reject: every reported
  thread is absent, every accepted one has exactly its messages (nothing written for rejected parts);
- the database passes its integrity and index checks, and importing the same file again adds nothing.
Plus the fixed cases: zip bombs refused by the size limit, a 10 MB message, nesting deeper than Python's
recursion limit in JSON and JSONL.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import random
import shutil
import zipfile
from collections import Counter
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import apsw
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.cli import main
from store import Store
from store.importing.formats import ImportFormatError, ImportProblem, read_export
from store.importing.pipeline import import_paths
from store.importing.run import _memory_name
from store.records import MemoryIn, ThreadIn
from tests.reliability.invariants import database_problems
from tests.reliability.processes import SOAK

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "import"
JSON_FIXTURES = {
    "chatgpt": FIXTURES / "chatgpt" / "conversations.json",
    "claude": FIXTURES / "claude" / "conversations.json",
    "openwebui": FIXTURES / "openwebui" / "chat-export-1720000000000.json",
    "generic": FIXTURES / "generic" / "bundle.json",
}
FUZZ = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


# -- running an import and checking what it left --------------------------------------------------


def run_import(db: Path, path: Path, fmt: str = "auto") -> tuple[int, dict[str, Any], str]:
    """`memapp import` in this process, keyword-only (--no-embed still embeds imported memories)."""
    config = db.parent / "no-embed.toml"
    config.write_text("[embedding]\nenabled = false\n", encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(
            [
                "--db",
                str(db),
                "--config",
                str(config),
                "import",
                str(path),
                "--format",
                fmt,
                "--no-embed",
                "--json",
            ]
        )
    assert "Traceback" not in err.getvalue(), err.getvalue()
    assert code in (0, 1), (code, err.getvalue())
    report = json.loads(out.getvalue())
    assert (code == 1) == bool(report["errors"]), report
    return code, report, err.getvalue()


def _expected(
    path: Path, fmt: str, report: dict[str, Any]
) -> tuple[dict[tuple[str, str], list[str]], set[Any]]:
    """What chat.db must hold after importing `path`: the parser's threads (messages merged by external
    id, as re-importing does) minus those the store rejected, and the memories it accepted."""
    try:
        items = list(read_export(path, fmt))
    except ImportFormatError as exc:  # the whole file was refused: the report says so, nothing is written
        assert [e["error"] for e in report["errors"]] == [str(exc)]
        return {}, set()
    notes = [(i.file, i.conversation, i.error) for i in items if isinstance(i, ImportProblem) and i.note]
    assert [(e["file"], e["conversation"], e["note"]) for e in report["notes"]] == notes
    reported = Counter((e["file"], e["conversation"], e["error"]) for e in report["errors"])
    reported.subtract(
        (i.file, i.conversation, i.error) for i in items if isinstance(i, ImportProblem) and not i.note
    )
    assert all(n >= 0 for n in reported.values()), "a parse problem is missing from the report"
    rejected = {conversation for (_, conversation, _), n in reported.items() if n > 0}  # by the store
    threads: dict[tuple[str, str], list[tuple[str | None, str]]] = {}
    memories = set()
    for item in items:
        if isinstance(item, ThreadIn):
            if item.external_id in rejected:
                continue
            have = threads.setdefault((item.source, str(item.external_id)), [])
            known = {ext for ext, _ in have if ext is not None}
            for m in item.messages:
                if m.external_id is None or m.external_id not in known:
                    have.append((m.external_id, m.content))
                    if m.external_id is not None:
                        known.add(m.external_id)
        elif isinstance(item, MemoryIn) and _memory_name(item) not in rejected:
            memories.add((item.category, item.content.strip()))
    return {k: [c for _, c in v] for k, v in threads.items()}, memories


def _stored(db: Path) -> tuple[dict[tuple[str, str], list[str]], set[Any]]:
    with Store(db, embedder=None) as store:
        assert database_problems(store) == []
        threads: dict[tuple[str, str], list[str]] = {
            (src, str(ext)): [] for src, ext in store.con.execute("SELECT source, external_id FROM threads")
        }
        for src, ext, content in store.con.execute(
            "SELECT t.source, t.external_id, m.content FROM messages m JOIN threads t ON t.id = m.thread_id "
            "ORDER BY t.id, m.seq"
        ):
            threads[(src, str(ext))].append(content)
        memories = {(c, t) for c, t in store.con.execute("SELECT category, content FROM long_term_memories")}
    return threads, memories


def check_import(tmp: Path, path: Path, fmt: str = "auto") -> dict[str, Any]:
    """Import into a fresh chat.db, compare with the parser's view, import again: nothing new."""
    db = tmp / "fuzz.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    _, report, _ = run_import(db, path, fmt)
    expected_threads, expected_memories = _expected(path, fmt, report)
    stored_threads, stored_memories = _stored(db)
    assert stored_threads == expected_threads
    assert stored_memories == expected_memories
    _, again, _ = run_import(db, path, fmt)
    assert (again["threads_added"], again["messages_added"], again["memories_added"]) == (0, 0, 0), again
    assert _stored(db) == (stored_threads, stored_memories)
    return report


# -- hypothesis: mutated fixtures -------------------------------------------------------------------

_nasty_text = st.sampled_from(
    [
        "",
        " ",
        "\x00",
        "\ud800 unpaired",
        "x\udfff",
        "\ufeff",
        "[red]markup[/red]",
        "\x1b[2J",
        "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 😀",
        "中文对话",
        "a" * 100_000,
        "line\r\nbreak\rcr",
    ]
)
_scalar = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True)
    | st.text(max_size=20)
    | _nasty_text
)
_value = st.recursive(
    _scalar,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


def _deep(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = [value]
    return value


@st.composite
def mutated(draw: st.DrawFn, doc: Any) -> Any:
    """`doc` with 1-4 subtrees replaced: a random walk down the tree picks each place."""
    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(1, 4))):
        parent, key = None, None
        node = doc
        while isinstance(node, dict | list) and node and (parent is None or draw(st.integers(0, 4)) > 0):
            keys = sorted(node) if isinstance(node, dict) else list(range(len(node)))
            parent, key = node, draw(st.sampled_from(keys))
            node = parent[key]
        if parent is None:
            continue
        choice = draw(st.integers(0, 9))
        if choice == 0 and isinstance(parent, dict):
            del parent[key]
        elif choice == 1:
            parent[key] = _deep(draw(st.sampled_from([50, 500])))  # type: ignore[index]
        else:
            parent[key] = draw(_value)  # type: ignore[index]
    return doc


@st.composite
def damaged_bytes(draw: st.DrawFn, text: bytes) -> bytes:
    kind = draw(st.sampled_from(["whole", "whole", "cut", "bad-utf8", "broken"]))
    if kind == "cut":
        return text[: draw(st.integers(0, len(text)))]
    if kind == "broken":  # a syntax error mid-file (31.13): only that conversation may be lost
        at = draw(st.integers(0, len(text)))
        return text[:at] + draw(st.sampled_from([b"\x00", b'"', b"}", b"]", b",,"])) + text[at:]
    if kind == "bad-utf8":
        at = draw(st.integers(0, len(text)))
        return (
            text[:at]
            + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00\x80\xfe"]))
            + text[at:]
        )
    return text


def _dump(doc: Any) -> bytes:
    """JSON as exporters write it: unpaired surrogates become "\\ud800" escapes, which are valid JSON."""
    return json.dumps(doc, ensure_ascii=True).encode("ascii")


def _fuzz_format(tmp: Path, fmt: str, data: st.DataObject, write: Callable[[Path, bytes], Path]) -> None:
    doc = json.loads(JSON_FIXTURES[fmt].read_text(encoding="utf-8"))
    raw = data.draw(damaged_bytes(_dump(data.draw(mutated(doc)))))
    case = tmp / "case"
    shutil.rmtree(case, ignore_errors=True)
    case.mkdir()
    check_import(tmp, write(case, raw), fmt=data.draw(st.sampled_from(["auto", fmt])))


def _as_file(name: str) -> Callable[[Path, bytes], Path]:
    def write(case: Path, raw: bytes) -> Path:
        (case / name).write_bytes(raw)
        return case / name

    return write


@FUZZ
@given(data=st.data())
def test_fuzz_chatgpt(tmp_path: Path, data: st.DataObject) -> None:
    _fuzz_format(tmp_path, "chatgpt", data, _as_file("conversations.json"))


@FUZZ
@given(data=st.data())
def test_fuzz_claude_export_folder(tmp_path: Path, data: st.DataObject) -> None:
    def write(case: Path, raw: bytes) -> Path:
        (case / "conversations.json").write_bytes(raw)
        memories = json.loads((FIXTURES / "claude" / "memories.json").read_text(encoding="utf-8"))
        (case / "memories.json").write_bytes(_dump(data.draw(mutated(memories))))
        shutil.copy(FIXTURES / "claude" / "users.json", case / "users.json")
        return case

    _fuzz_format(tmp_path, "claude", data, write)


@FUZZ
@given(data=st.data())
def test_fuzz_openwebui(tmp_path: Path, data: st.DataObject) -> None:
    _fuzz_format(tmp_path, "openwebui", data, _as_file("chat-export.json"))


@FUZZ
@given(data=st.data())
def test_fuzz_generic_json(tmp_path: Path, data: st.DataObject) -> None:
    _fuzz_format(tmp_path, "generic", data, _as_file("bundle.json"))


@FUZZ
@given(data=st.data())
def test_fuzz_generic_jsonl(tmp_path: Path, data: st.DataObject) -> None:
    """JSONL lines each mutated on their own, and a line that is cut short or not UTF-8."""
    threads = json.loads(JSON_FIXTURES["generic"].read_text(encoding="utf-8"))["threads"]
    lines = [_dump(data.draw(mutated(t))) if data.draw(st.booleans()) else _dump(t) for t in threads]
    lines.insert(
        data.draw(st.integers(0, len(lines))), data.draw(damaged_bytes(b'{"id": "x", "messages": ['))
    )
    path = tmp_path / "threads.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    check_import(tmp_path, path)


_cell = (
    st.none()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=True)
    | st.text(max_size=30)
    | st.binary(max_size=30)
    | _nasty_text.filter(lambda s: "\ud800" not in s and "\udfff" not in s)
    | st.sampled_from(["{", "[]", '{"text_ref": 99}', '{"text_ref": "h1"}', "null", "2024-13-45"])
)


@FUZZ
@given(data=st.data())
def test_fuzz_llm_logs_db(tmp_path: Path, data: st.DataObject) -> None:
    """llm's logs.db with wrong-typed cells (SQLite lets any column hold any type)."""
    case = tmp_path / "logs.db"
    case.unlink(missing_ok=True)
    con = apsw.Connection(str(case))
    con.execute((FIXTURES / "llm" / "logs.sql").read_text(encoding="utf-8"))
    tables = ["responses", "conversations", "threads", "turns", "messages", "parts", "fragments"]
    for _ in range(data.draw(st.integers(1, 6))):
        table = data.draw(st.sampled_from(tables))
        columns = [r[1] for r in con.execute(f'PRAGMA table_info("{table}")')]
        rowids = [r[0] for r in con.execute(f'SELECT rowid FROM "{table}"')]
        if not rowids:
            continue
        column = data.draw(st.sampled_from(columns))
        # A key collision or a non-integer rowid cannot be stored in that file either: skip the change.
        value = data.draw(_cell)
        # Bytes stored as TEXT: not UTF-8 (a program other than llm wrote them); apsw refuses to decode them
        as_text = isinstance(value, bytes) and data.draw(st.booleans())
        with contextlib.suppress(apsw.ConstraintError, apsw.MismatchError):
            con.execute(
                f'UPDATE "{table}" SET "{column}" = {"CAST(? AS TEXT)" if as_text else "?"} WHERE rowid = ?',
                (value, data.draw(st.sampled_from(rowids))),
            )
    con.close()
    check_import(tmp_path, case, fmt=data.draw(st.sampled_from(["auto", "llm"])))


# -- fixed cases ------------------------------------------------------------------------------------


def test_surrogate_escapes_are_repaired_and_noted(tmp_path: Path) -> None:
    """A JSON "\\ud800" escape is valid JSON but not text SQLite can store: the half character becomes
    U+FFFD wherever it is (content, title), every thread imports, one note says so, exit 0 (it used to
    stop the import with a traceback, then to skip the thread)."""
    path = tmp_path / "threads.jsonl"
    path.write_text(
        '{"id": "bad", "messages": [{"id": "m1", "role": "user", "content": "x \\ud800 y"}]}\n'
        '{"id": "good", "messages": [{"id": "m1", "role": "user", "content": "fine"}]}\n'
        '{"id": "t3", "title": "\\udfff", "messages": [{"id": "m1", "role": "user", "content": "ok"}]}\n',
        encoding="utf-8",
    )
    report = check_import(tmp_path, path)
    assert report["threads_added"] == 3 and report["errors"] == []
    [note] = report["notes"]
    assert note["conversation"] == "bad" and "lone UTF-16 surrogates" in note["note"]
    with Store(tmp_path / "fuzz.db", embedder=None) as store:
        assert store.get_messages(store.find_thread("jsonl", "bad").id)[0].content == "x \ufffd y"  # type: ignore[union-attr]
        assert store.find_thread("jsonl", "t3").title == "\ufffd"  # type: ignore[union-attr]


def test_deeply_nested_jsonl_line_is_one_problem(tmp_path: Path) -> None:
    """A line nested deeper than Python's recursion limit is that line's problem; the lines after it
    still import (it used to stop the rest of the file)."""
    path = tmp_path / "threads.jsonl"
    deep = "[" * 100_000 + "]" * 100_000
    path.write_text(
        '{"id": "a", "messages": [{"role": "user", "content": "first"}]}\n'
        '{"id": "b", "messages": [{"role": "user", "content": ' + deep + "}]}\n"
        '{"id": "c", "messages": [{"role": "user", "content": "last"}]}\n',
        encoding="utf-8",
    )
    report = check_import(tmp_path, path)
    assert report["threads_added"] == 2
    assert [e["conversation"] for e in report["errors"]] == ["line 2"]


def test_deeply_nested_json_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    deep = "[" * 100_000 + "]" * 100_000
    path.write_text(
        '[{"id": "a", "messages": [{"role": "user", "content": "first"}]}, '
        '{"id": "b", "messages": [{"role": "user", "content": ' + deep + "}]}]",
        encoding="utf-8",
    )
    report = check_import(tmp_path, path)
    assert report["threads_added"] == 1
    assert "nested too deeply" in report["errors"][0]["error"]


def test_zip_bomb_is_refused_before_it_is_read(tmp_path: Path) -> None:
    bomb = tmp_path / "export.zip"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("conversations.json", b"[" + b" " * (40 * 1024**2) + b"]")
    assert bomb.stat().st_size < 200_000
    code, report, _ = run_import(tmp_path / "chat.db", bomb)
    assert code == 1 and report["threads_added"] == 0
    assert "zip bomb" in report["errors"][0]["error"]
    with Store(tmp_path / "chat.db", embedder=None) as store:
        assert store.stats()["threads"] == 0


def test_archive_claiming_more_than_the_limit_is_refused(tmp_path: Path) -> None:
    """Members whose declared sizes add up past the 2 GiB cap (each one compressing plausibly) are refused
    from the archive's directory alone: nothing is decompressed."""
    archive = tmp_path / "export.zip"
    rng = random.Random(8)
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_STORED) as zf:
        for i in range(3):
            zf.writestr(f"conversations-{i:03d}.json", rng.randbytes(1000))
    data = bytearray(archive.read_bytes())
    with zipfile.ZipFile(archive) as zf:
        infos = zf.infolist()
    for info in infos:  # declare 1 GiB per member in the central directory
        at = _central_entry(data, info.filename)
        data[at + 20 : at + 24] = (900 * 1024**2).to_bytes(4, "little")
        data[at + 24 : at + 28] = (1024**3).to_bytes(4, "little")
    archive.write_bytes(bytes(data))
    code, report, _ = run_import(tmp_path / "chat.db", archive, "chatgpt")
    assert code == 1 and report["threads_added"] == 0
    assert "refusing to decompress" in report["errors"][0]["error"]


def _central_entry(data: bytearray, name: str) -> int:
    """Offset of the central-directory header of member `name`."""
    at = 0
    while (at := data.find(b"PK\x01\x02", at)) >= 0:
        n = int.from_bytes(data[at + 28 : at + 30], "little")
        if bytes(data[at + 46 : at + 46 + n]).decode() == name:
            return at
        at += 4
    raise AssertionError(name)


def test_ten_megabyte_message_imports_whole(tmp_path: Path) -> None:
    text = ("A very long pasted log line with words. " * 262_144)[: 10 * 1024**2]
    path = tmp_path / "big.json"
    path.write_text(
        json.dumps(
            [
                {
                    "id": "big",
                    "messages": [
                        {"id": "m", "role": "user", "content": text},
                        {"id": "r", "role": "assistant", "content": "ok"},
                    ],
                }
            ]
        ),
        encoding="utf-8",
    )
    report = check_import(tmp_path, path)
    assert report["messages_added"] == 2
    with Store(tmp_path / "fuzz.db", embedder=None) as store:
        assert store.get_messages(1)[0].content == text


@pytest.mark.parametrize("fmt", sorted(JSON_FIXTURES))
def test_every_fixture_imports_cleanly(tmp_path: Path, fmt: str) -> None:
    """The baseline the fuzzing starts from: each fixture imports with exit 0 and round-trips."""
    report = check_import(tmp_path, JSON_FIXTURES[fmt], fmt)
    assert report["threads_added"] > 0


# -- coding-agent sessions read in pieces -------------------------------------------------------------

SESSIONS = {
    "claude-code": next((FIXTURES / "claude-code").rglob("*.jsonl")),
    "codex": next((FIXTURES / "codex" / "2025").rglob("*.jsonl")),
}
SESSION_FUZZ = settings(
    max_examples=300 if SOAK else 12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _said_and_calls(db: Path) -> tuple[dict[tuple[str, str], str], list[str]]:
    """{(external id, role): text} of the messages with words, and every tool call's input."""
    with Store(db, embedder=None) as store:
        assert database_problems(store) == []
        said = {
            (str(r[0]), str(r[1])): str(r[2])
            for r in store.con.execute("SELECT external_id, role, content FROM messages WHERE role != 'tool'")
        }
        calls = [
            str(r[0])
            for r in store.con.execute(
                "SELECT j.value ->> '$.input' FROM messages m, json_each(m.metadata, '$.tool_calls') j "
                "ORDER BY m.id, j.key"
            )
        ]
    return said, calls


@st.composite
def session_damage(draw: st.DrawFn, lines: list[bytes]) -> list[bytes]:
    """The session's lines with a few text fields ending in half a character (a lone surrogate escape,
    issue 28.1) or a byte that is not UTF-8."""
    out = list(lines)
    for _ in range(draw(st.integers(0, 3))):
        i = draw(st.integers(0, len(out) - 1))
        at = out[i].find(b'"text":"')
        if at < 0:
            at = out[i].find(b'"content":"')
        if at < 0:
            continue
        at = out[i].index(b'"', out[i].index(b":", at) + 2)  # the closing quote of that string
        piece = draw(st.sampled_from([b"\\ud83d", b"\\udc00 tail", b"\xff", b"\xed\xa0\x80"]))
        out[i] = out[i][:at] + piece + out[i][at:]
    return out


@SESSION_FUZZ
@given(data=st.data())
def test_fuzz_sessions_read_in_pieces_equal_one_read(
    tmp_path: Path, data: st.DataObject, figures: dict[str, int]
) -> None:
    """A session imported as it grows, cut anywhere (even inside a line or a run of tool calls), shrunk
    and grown back, or edited before its end, ends up exactly as one import of its final text: the same
    messages, each tool call once, nothing lost (issues 28.1, 28.5, 31.4); and no traceback, ever."""
    agent = data.draw(st.sampled_from(sorted(SESSIONS)))
    source = SESSIONS[agent]
    lines = data.draw(session_damage(source.read_bytes().splitlines(keepends=True)))
    final = b"".join(lines)
    case = tmp_path / "case"
    shutil.rmtree(case, ignore_errors=True)
    case.mkdir()
    path = case / source.name
    db = case / "pieces.db"
    steps = data.draw(st.lists(st.integers(0, len(final)), min_size=1, max_size=4))
    with Store(db, embedder=None) as store:
        for cut in steps:
            shape = data.draw(st.sampled_from(["prefix", "prefix", "edited"]))
            text = final[:cut]
            if shape == "edited" and b'"text":"' in text:  # an earlier line shortened: everything shifts
                at = text.index(b'"text":"') + 8
                text = text[:at] + text[at + 1 :] if text[at : at + 1] not in (b"\\", b'"') else text
            path.write_bytes(text)
            report = import_paths(store, [path], embed=False, summarize=False)
            assert all("Traceback" not in e.error for e in report.errors)
        path.write_bytes(final)
        import_paths(store, [path], embed=False, summarize=False)
    whole = case / "whole.db"
    with Store(whole, embedder=None) as store:
        import_paths(store, [path], embed=False, summarize=False)
    pieces_said, pieces_calls = _said_and_calls(db)
    whole_said, whole_calls = _said_and_calls(whole)
    # Every message once. One imported while its line was edited keeps that first text (a stored message
    # is never rewritten): at most one per edit differs. Claude Code keys them by uuid; Codex by byte
    # offset, which an edit shifts, so there they are compared by role and text.
    missing = Counter(whole_said.values()) - Counter(pieces_said.values())
    extra = Counter(pieces_said.values()) - Counter(whole_said.values())
    assert sum(missing.values()) <= len(steps) and sum(extra.values()) <= 2 * len(steps), (missing, extra)
    if agent == "claude-code":
        assert set(pieces_said) == set(whole_said), set(pieces_said) ^ set(whole_said)
    assert sorted(pieces_calls) == sorted(whole_calls)  # each tool call once
    figures["fuzz cases (sessions read in pieces)"] = (
        figures.get("fuzz cases (sessions read in pieces)", 0) + 1
    )
