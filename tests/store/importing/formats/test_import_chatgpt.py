"""ChatGPT exports: the active branch only, no scaffolding or plumbing, clean text, split files, archives."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from store.importing.formats import UnknownFormatError, detect_format
from store.importing.formats import _common as common
from store.importing.formats.chatgpt import strip_citations
from tests.store.importing.formats.import_helpers import FIXTURES, make_zip, msgs, read

CONV = FIXTURES / "chatgpt" / "conversations.json"
SPLIT = FIXTURES / "chatgpt" / "split"


def test_detected() -> None:
    assert detect_format(CONV) == "chatgpt"
    assert detect_format(SPLIT) == "chatgpt"


def test_items_in_order_with_the_malformed_conversation_reported() -> None:
    r = read(CONV)
    # conv-hidden-only has nothing visible: skipped silently, not an error.
    assert r.order == [
        "thread:conv-branches",
        "memory",
        "thread:conv-no-current",
        "problem:conv-bad-mapping",
        "thread:conv-cycle",
    ]
    assert r.problems[0].file == str(CONV)
    assert r.problems[0].error == "mapping is str, expected an object"


def test_active_branch_skips_regenerations_edits_hidden_and_plumbing() -> None:
    t = read(CONV).thread("conv-branches")
    assert t.source == "chatgpt"
    assert t.title == "Boiling eggs"
    assert msgs(t) == [
        ("u1", "user", "How do I boil an egg?\nQuickly, please."),
        ("a1", "assistant", "Boil it for 9 minutes. Then cool it."),
        ("u2", "user", "Remember that I like my eggs soft."),
        ("code", "assistant", "```python\nprint(6 * 60)\n```"),
        ("exec", "tool", "360"),
        ("a3", "assistant", "Noted: 6 minutes for soft eggs."),
    ]
    text = " ".join(m.content for m in t.messages)
    for gone in (
        "OLD REGENERATED ANSWER",
        "OLD EDITED QUESTION",
        "web results dump",
        "Model set context",
        "User prefers soft-boiled eggs.",
    ):
        assert gone not in text


def test_timestamps_float_ms_string_and_missing() -> None:
    t = read(CONV).thread("conv-branches")
    times = [m.created_at for m in t.messages]
    assert times == [1700000010.0, 1700000030.0, 1700000050.5, 1700000060.0, 1700000061.0, 1700000061.0]
    assert t.messages[-1].metadata["time_estimated"] is True  # null create_time: previous message's time
    assert (t.created_at, t.updated_at) == (1700000000.0, 1700000500.0)


def test_metadata_keeps_custom_instructions_models_reasoning_and_tools() -> None:
    t = read(CONV).thread("conv-branches")
    assert t.metadata == {
        "model": "gpt-4o",
        "custom_instructions": {"user_profile": "I am a cook.", "user_instructions": "Be brief."},
    }
    by_id = {m.external_id: m for m in t.messages}
    assert by_id["a1"].metadata == {"model": "gpt-4o"}
    assert by_id["code"].metadata == {"code": "python"}  # the code the interpreter ran, kept with its output
    assert by_id["exec"].metadata == {"tool": "python"}
    assert by_id["a3"].metadata["reasoning"] == ["The user wants soft eggs."]
    assert by_id["a3"].metadata["model"] == "gpt-4o-mini"


def test_bio_writes_become_memories() -> None:
    [memory] = read(CONV).memories
    assert (memory.category, memory.content, memory.origin, memory.created_at) == (
        "preference",
        "User prefers soft-boiled eggs.",
        "chatgpt-bio",
        1700000057.0,
    )


def test_missing_current_node_takes_newest_leaf_and_keeps_multimodal_text() -> None:
    t = read(CONV).thread("conv-no-current")
    assert msgs(t) == [("m1", "user", "What is in this picture?"), ("r-new", "assistant", "A cat on a mat.")]
    assert t.messages[0].metadata == {"attachments": ["cat.png"], "assets": ["file-AbC123"]}
    assert t.title == "What is in this picture?"  # title null: first user line
    assert t.created_at == 1709287200.0  # ISO string


def test_parent_cycle_does_not_hang() -> None:
    t = read(CONV).thread("conv-cycle")
    assert msgs(t) == [("y", "user", "question in a loop"), ("x", "assistant", "answer in a loop")]


def test_strip_citations() -> None:
    assert strip_citations("Paris \ue200cite\ue202turn0search3\ue202turn1news2\ue201.") == "Paris."
    assert strip_citations("See【12†L1-L5】 and【3†source】.") == "See and."
    assert strip_citations("stray \ue203marker") == "stray marker"
    assert strip_citations("brackets 【not a citation】 stay") == "brackets 【not a citation】 stay"


def test_split_files_with_manifest_report_missing_part_and_dedupe() -> None:
    r = read(SPLIT)
    assert [t.external_id for t in r.threads] == ["split-1", "split-2", "split-3"]
    assert msgs(r.thread("split-3")) == [
        ("split-3-q", "user", "Question three"),
        ("split-3-a", "assistant", "Answer three"),
    ]
    [problem] = r.problems
    assert problem.file == str(SPLIT / "export_manifest.json")
    assert problem.conversation is None
    assert "conversations-002.json" in problem.error


def test_zip_matches_folder_even_inside_a_top_folder(tmp_path: Path) -> None:
    archive = make_zip(
        tmp_path / "chatgpt.zip",
        {
            "Export/conversations-000.json": SPLIT / "conversations-000.json",
            "Export/conversations-001.json": SPLIT / "conversations-001.json",
            "Export/chat.html": b"<html></html>",
            "Export/file-AbC123-cat.png": b"\x89PNG....",
        },
    )
    assert detect_format(archive) == "chatgpt"
    r = read(archive)
    assert [t.external_id for t in r.threads] == ["split-1", "split-2", "split-3"]
    assert r.problems == []


def test_wrapped_and_single_conversation_roots(tmp_path: Path) -> None:
    convs = json.loads(CONV.read_text(encoding="utf-8"))
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text(json.dumps({"conversations": convs}), encoding="utf-8")
    single = tmp_path / "one.json"
    single.write_text(json.dumps(convs[-1]), encoding="utf-8")
    assert detect_format(wrapped) == "chatgpt"
    assert [t.external_id for t in read(wrapped).threads] == [
        "conv-branches",
        "conv-no-current",
        "conv-cycle",
    ]
    assert detect_format(single) == "chatgpt"
    assert [t.external_id for t in read(single).threads] == ["conv-cycle"]


def test_reading_twice_gives_identical_items() -> None:
    assert read(CONV) == read(CONV)


def test_truncated_file_keeps_complete_conversations(tmp_path: Path) -> None:
    data = CONV.read_bytes()
    cut = tmp_path / "conversations.json"
    cut.write_bytes(data[: data.index(b'"conv-bad-mapping"') - 20])
    r = read(cut)
    assert [t.external_id for t in r.threads] == ["conv-branches", "conv-no-current"]
    [problem] = r.problems
    assert problem.conversation is None and "truncated" in problem.error


def test_zip_without_conversations(tmp_path: Path) -> None:
    archive = make_zip(tmp_path / "photos.zip", {"a.png": b"x", "notes.txt": b"hello"})
    with pytest.raises(UnknownFormatError, match="no conversations.json"):
        detect_format(archive)
    r = read(archive, "chatgpt")
    assert r.threads == [] and len(r.problems) == 1
    assert "no conversations.json" in r.problems[0].error


@pytest.mark.parametrize(
    "name",
    [
        "../evil/conversations.json",
        "/etc/conversations.json",
        "C:/conversations.json",
        "a/../../conversations.json",
    ],
)
def test_zip_slip_paths_are_refused(tmp_path: Path, name: str) -> None:
    archive = tmp_path / "slip.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("conversations.json", "[]")
        zf.writestr(zipfile.ZipInfo(name), "[]")
    r = read(archive, "chatgpt")
    assert r.threads == []
    [problem] = r.problems
    assert "unsafe member path" in problem.error


def test_zip_symlink_member_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "link.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        info = zipfile.ZipInfo("conversations.json")
        info.external_attr = 0o120777 << 16
        zf.writestr(info, "/etc/passwd")
    [problem] = read(archive, "chatgpt").problems
    assert "symlink" in problem.error


def test_zip_bomb_member_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "bomb.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("conversations.json", b"[" + b" " * (20 * 1024**2) + b"]")
    r = read(archive, "chatgpt")
    assert r.threads == []
    assert "zip bomb" in r.problems[0].error


def test_total_uncompressed_size_is_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(common, "MAX_READ_TOTAL", 1000)
    archive = make_zip(tmp_path / "big.zip", {"conversations.json": CONV})
    r = read(archive, "chatgpt")
    assert r.threads == []
    assert "limit 2 GiB" in r.problems[0].error


@pytest.mark.timeout(120)  # a hang guard: linear takes well under a second
def test_a_many_branch_tree_without_current_node_is_linear(tmp_path: Path) -> None:
    """Issue 20, D10: a leaf off every node of a long spine made the newest-leaf walk quadratic
    (a 5 MB conversation took 150 s). 40,000 spine nodes, each with a regenerated leaf."""
    n = 40_000
    mapping: dict[str, object] = {}
    for i in range(n):
        spine, leaf = f"s{i}", f"l{i}"
        mapping[spine] = {
            "parent": f"s{i - 1}" if i else None,
            "children": [f"s{i + 1}", leaf] if i < n - 1 else [leaf],
            "message": {
                "author": {"role": "user"},
                "content": {"content_type": "text", "parts": [f"q{i}"]},
                "create_time": 1_700_000_000 + i,
            },
        }
        mapping[leaf] = {
            "parent": spine,
            "children": [],
            "message": {
                "author": {"role": "assistant"},
                "content": {"content_type": "text", "parts": [f"a{i}"]},
                "create_time": 1_700_000_000 + i + 0.5,
            },
        }
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([{"id": "wide", "title": "wide", "mapping": mapping}]))
    t = read(path, "chatgpt").thread("wide")
    assert len(t.messages) == n + 1 and t.messages[-1].content == f"a{n - 1}"
