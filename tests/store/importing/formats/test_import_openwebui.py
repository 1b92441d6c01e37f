"""Open WebUI exports: the currentId branch, details blocks out of the text, mixed time units."""

from __future__ import annotations

import pytest

from store.importing.formats import detect_format
from store.importing.formats.openwebui import split_details
from tests.store.importing.formats.import_helpers import FIXTURES, msgs, read

EXPORT = FIXTURES / "openwebui" / "chat-export-1720000000000.json"


def test_detected() -> None:
    assert detect_format(EXPORT) == "openwebui"


def test_items_in_order() -> None:
    r = read(EXPORT)
    assert r.order == ["thread:owui-1", "thread:owui-bare", "thread:owui-nocurrent", "problem:owui-bad"]
    assert r.problems[0].error == "history.messages is list, expected an object"


def test_current_branch_with_reasoning_and_tool_calls_in_metadata() -> None:
    t = read(EXPORT).thread("owui-1")
    assert (t.source, t.title) == ("openwebui", "Haiku")
    assert msgs(t) == [
        ("u1", "user", "Write a haiku"),
        ("a1", "assistant", "Autumn moonlight —\na worm digs silently\ninto the chestnut."),
        ("u2", "user", "Now describe this ![img](data:image/png;base64,(omitted))"),
        ("a2", "assistant", "A moon."),
    ]
    a1 = t.messages[1]
    assert a1.metadata == {
        "reasoning": ["The user wants a <b>haiku</b>."],
        "tool_calls": [{"name": "get_time", "arguments": '{"tz": "UTC"}', "result": '"12:00"'}],
        "model": "qwq",
    }
    assert t.messages[2].metadata == {"files": ["moon.png"]}
    assert t.metadata == {"models": ["llama3"], "tags": ["poetry"], "pinned": True}
    # Row times and message times are seconds.
    assert t.created_at == 1720000000.0
    assert [m.created_at for m in t.messages] == [1720000001.0, 1720000003.0, 1720000004.0, 1720000005.0]


def test_bare_chat_object_with_millisecond_timestamp() -> None:
    t = read(EXPORT).thread("owui-bare")
    assert msgs(t) == [("b1", "user", "Hello there"), ("b2", "assistant", "Hi!")]
    assert t.created_at == 1720000100.0  # chat.timestamp is in ms
    assert t.metadata == {"models": ["mistral"]}


def test_missing_current_id_falls_back_to_last_linear_message() -> None:
    t = read(EXPORT).thread("owui-nocurrent")
    assert msgs(t) == [("c1", "user", "Pick a fruit"), ("c2-a", "assistant", "Apple")]


def test_split_details_nested_unknown_and_unclosed() -> None:
    text = (
        'A<details type="reasoning"><summary>s</summary>outer<details type="x">inner</details>'
        'tail</details>B<details type="other">kept</details>C<details type="code_interpreter" lang="py">'
        "print(1)"
    )
    clean, found = split_details(text)
    assert clean == 'AB<details type="other">kept</details>C'
    assert found == {
        "reasoning": ['outer<details type="x">inner</details>tail'],
        "code_interpreter": [{"lang": "py", "text": "print(1)"}],
    }


@pytest.mark.timeout(120)  # a hang guard: linear takes well under a second
def test_unclosed_summaries_inside_an_unclosed_reasoning_block_are_linear() -> None:
    """Issue 20, D10: `<summary>` tags with no closing tag inside a cut-off reasoning block made the lazy
    summary regex rescan to the end from each one (288 KB took 34 s)."""
    text = "Answer first. " + '<details type="reasoning">' + "<summary>thinking " * 40_000
    visible, found = split_details(text)
    assert visible == "Answer first. "
    assert found["reasoning"][0].startswith("<summary>thinking")
    visible, found = split_details(
        '<details type="reasoning"><summary>Thought</summary>step one</details>done'
    )
    assert (visible, found["reasoning"]) == ("done", ["step one"])


@pytest.mark.timeout(120)  # a hang guard: linear takes milliseconds
def test_a_long_word_inside_a_details_tag_is_linear() -> None:
    """Found by the soak fuzz run: 400 KB of word characters inside a `<details …>` tag made the attribute
    regex rescan the run from every position (minutes for one message)."""
    visible, found = split_details('<details type="reasoning" x' + "x" * 400_000 + ">thinking</details>done")
    assert visible == "done" and found["reasoning"] == ["thinking"]
