"""Bad input never escapes as a traceback: it is an ImportProblem, or an ImportFormatError up front."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store.errors import StoreError
from store.importing.formats import FORMATS, ImportFormatError, UnknownFormatError, detect_format, read_export
from store.records import ThreadIn
from tests.store.importing.formats.import_helpers import FIXTURES, make_zip, read

JSON_FIXTURES = {
    "chatgpt": FIXTURES / "chatgpt" / "conversations.json",
    "claude": FIXTURES / "claude" / "conversations.json",
    "openwebui": FIXTURES / "openwebui" / "chat-export-1720000000000.json",
    "generic": FIXTURES / "generic" / "bundle.json",
}


def test_error_types_are_store_errors() -> None:
    assert issubclass(UnknownFormatError, ImportFormatError)
    assert issubclass(ImportFormatError, StoreError)


def test_missing_path_and_unknown_format_name(tmp_path: Path) -> None:
    with pytest.raises(ImportFormatError, match="no such file"):
        read_export(tmp_path / "nope.json")
    with pytest.raises(ImportFormatError, match="unknown format 'word'"):
        read_export(FIXTURES / "generic" / "bundle.json", "word")


@pytest.mark.parametrize("fmt", sorted(JSON_FIXTURES))
def test_truncated_json_is_detected_and_reported(tmp_path: Path, fmt: str) -> None:
    data = JSON_FIXTURES[fmt].read_bytes()
    cut = tmp_path / JSON_FIXTURES[fmt].name
    cut.write_bytes(data[: len(data) // 2])
    assert detect_format(cut) == fmt  # from the keys near the start
    r = read(cut)
    assert any("truncated" in p.error for p in r.problems)
    assert all(isinstance(t, ThreadIn) and t.messages for t in r.threads)


def test_binary_junk(tmp_path: Path) -> None:
    junk = tmp_path / "export.json"
    junk.write_bytes(random.Random(3).randbytes(4096))
    with pytest.raises(UnknownFormatError) as info:
        detect_format(junk)
    assert "ChatGPT" in str(info.value) and "Open WebUI" in str(info.value)  # names what we read
    for fmt in FORMATS:
        r = read(junk, fmt)
        assert r.threads == [] and r.memories == []
        assert len(r.problems) == 1 and r.problems[0].conversation is None, fmt


@pytest.mark.parametrize("fmt", sorted(JSON_FIXTURES))
def test_invalid_utf8(tmp_path: Path, fmt: str) -> None:
    data = JSON_FIXTURES[fmt].read_bytes()
    middle = data.index(b'"', len(data) // 2)
    bad = tmp_path / JSON_FIXTURES[fmt].name
    bad.write_bytes(data[: middle + 1] + b"\xff\xfe\xc3" + data[middle + 1 :])
    r = read(bad, fmt)
    assert any("UTF-8" in p.error for p in r.problems)


def test_invalid_utf8_line_in_jsonl_is_kept(tmp_path: Path) -> None:
    """A byte that is not UTF-8 is shown as U+FFFD and noted; its line is kept (it used to be dropped)."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(
        b'{"id": "a", "messages": [{"role": "user", "content": "caf\xff"}]}\n'
        b'{"id": "b", "messages": [{"role": "user", "content": "fine"}]}\n'
    )
    r = read(path)
    assert [(t.external_id, t.messages[0].content) for t in r.threads] == [("a", "caf\ufffd"), ("b", "fine")]
    [note] = r.problems
    assert note.note and "UTF-8 in line 1" in note.error


@pytest.mark.parametrize("content", ["42", '"text"', "null", "{}", "[1, 2]", '[{"mapping": []}]', "", "   "])
@pytest.mark.parametrize("fmt", ["chatgpt", "claude", "openwebui", "generic"])
def test_wrong_types_become_problems(tmp_path: Path, fmt: str, content: str) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(content, encoding="utf-8")
    r = read(path, fmt)
    assert r.threads == [] and r.memories == []
    assert r.problems, (fmt, content)


def test_wrong_types_inside_conversations(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(
        json.dumps(
            [
                [],
                "x",
                {"id": "c1", "mapping": {"n": "not a node"}, "current_node": "n"},
                {
                    "id": "c2",
                    "mapping": {
                        "n": {
                            "message": {
                                "author": {"role": "user"},
                                "content": {"content_type": "text", "parts": "oops"},
                            }
                        }
                    },
                    "current_node": "n",
                },
                {
                    "id": "ok",
                    "mapping": {
                        "n": {
                            "message": {
                                "author": {"role": "user"},
                                "content": {"content_type": "text", "parts": ["fine"]},
                            }
                        }
                    },
                },
            ]
        ),
        encoding="utf-8",
    )
    r = read(path, "chatgpt")
    assert [t.external_id for t in r.threads] == ["ok"]
    assert [p.conversation for p in r.problems] == [None, None, "c1", "c2"]


def test_empty_folder_and_zip_of_junk(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(UnknownFormatError):
        detect_format(tmp_path / "empty")
    archive = make_zip(tmp_path / "x.zip", {"conversations.json": b"\x00\x01\x02 junk"})
    assert detect_format(archive) == "chatgpt"  # by name; the reader reports what is wrong
    r = read(archive)
    assert r.threads == [] and len(r.problems) == 1


def test_corrupt_zip(tmp_path: Path) -> None:
    good = make_zip(
        tmp_path / "good.zip", {"conversations.json": FIXTURES / "chatgpt" / "conversations.json"}
    )
    data = bytearray(good.read_bytes())
    data[40:200] = b"\x00" * 160  # damage the compressed member, keep the directory
    bad = tmp_path / "bad.zip"
    bad.write_bytes(bytes(data))
    r = read(bad, "chatgpt")
    assert r.problems and r.threads == []


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "id",
                    "uuid",
                    "mapping",
                    "current_node",
                    "message",
                    "parent",
                    "children",
                    "author",
                    "role",
                    "content",
                    "parts",
                    "chat_messages",
                    "sender",
                    "text",
                    "type",
                    "chat",
                    "history",
                    "messages",
                    "currentId",
                    "parentId",
                    "threads",
                    "memories",
                    "category",
                    "created_at",
                    "create_time",
                    "timestamp",
                    "conversations_memory",
                    "attachments",
                ]
            ),
            inner,
            max_size=6,
        )
    ),
    max_leaves=30,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=_json, fmt=st.sampled_from(["chatgpt", "claude", "openwebui", "generic"]))
def test_fuzzed_json_never_raises(tmp_path: Path, value: object, fmt: str) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([value, value]), encoding="utf-8")
    read(path, fmt)  # any exception here fails the test


def test_memapp_backup_is_named_not_misread(tmp_path: Path) -> None:
    backup = tmp_path / "backup.json"
    backup.write_text(
        json.dumps(
            {"format": "memapp-export", "schema_version": 3, "tables": {"threads": [], "messages": []}}
        ),
        encoding="utf-8",
    )
    with pytest.raises(UnknownFormatError, match="memapp export"):
        read_export(backup)


def _patch_zip(path: Path, *, flag: int | None = None, method: int | None = None) -> Path:
    """Rewrite every member's general-purpose flags and/or compression method in both the local headers
    and the central directory (zipfile can't write an encrypted or Deflate64 archive itself)."""
    data = bytearray(path.read_bytes())
    for sig, flag_at, method_at in ((b"PK\x03\x04", 6, 8), (b"PK\x01\x02", 8, 10)):
        at = data.find(sig)
        while at != -1:
            if flag is not None:
                data[at + flag_at : at + flag_at + 2] = flag.to_bytes(2, "little")
            if method is not None:
                data[at + method_at : at + method_at + 2] = method.to_bytes(2, "little")
            at = data.find(sig, at + 4)
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize(
    ("patch", "said"), [({"flag": 1}, "password-protected"), ({"method": 9}, "Deflate64")]
)
def test_encrypted_or_deflate64_zip_is_one_clear_error(
    tmp_path: Path, patch: dict[str, int], said: str
) -> None:
    """Issue 20, D12: both crashed format detection with a traceback."""
    archive = make_zip(
        tmp_path / "export.zip", {"conversations.json": FIXTURES / "chatgpt" / "conversations.json"}
    )
    _patch_zip(archive, **patch)
    try:
        detect_format(archive)
    except ImportFormatError as exc:
        assert said in str(exc)
    r = read(archive, "chatgpt")
    assert r.threads == [] and any(said in p.error for p in r.problems)


def test_a_zip_bomb_is_refused_before_detection_reads_it(tmp_path: Path) -> None:
    """Issue 20, D9: detection peeked into the member without the size checks the readers make."""
    import tracemalloc

    archive = tmp_path / "export.zip"
    import zipfile

    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("conversations.json", b"[" + b" " * (40 * 1024**2))
    assert archive.stat().st_size < 200_000
    tracemalloc.start()
    with pytest.raises(ImportFormatError, match="zip bomb"):
        detect_format(archive)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 5 * 1024**2


@pytest.mark.parametrize("fmt", sorted(JSON_FIXTURES))
def test_a_bad_byte_mid_file_is_reported_and_the_rest_still_imports(tmp_path: Path, fmt: str) -> None:
    """Issue 20, D19: one bad byte ended the file there (1,729 of 3,000 conversations dropped)."""
    good = read(JSON_FIXTURES[fmt], fmt)
    data = JSON_FIXTURES[fmt].read_bytes()
    said = next(
        m.content for t in good.threads for m in t.messages if len(m.content) > 8 and m.content.isascii()
    )
    at = data.index(said[:8].encode()) + 4  # inside the text of a message
    bad = tmp_path / JSON_FIXTURES[fmt].name
    bad.write_bytes(data[:at] + b"\xff" + data[at:])
    r = read(bad, fmt)
    assert [t.external_id for t in r.threads] == [t.external_id for t in good.threads]
    [problem] = [p for p in r.problems if "UTF-8" in p.error]
    assert "rest of the file was imported" in problem.error and problem.conversation is None
    assert any("\ufffd" in m.content or "\ufffd" in (t.title or "") for t in r.threads for m in t.messages)
