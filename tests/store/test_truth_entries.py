"""The same truth rules for every way a memory enters (issue 27): a Claude memories.json import (with and
without vectors), a pasted list (`import --format text`) accepted as suggestions, and MCP add_memory all
go through Store.add_memory, so an update supersedes and a second fact is kept, whichever door it used."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from store import Store
from store.extract.suggestions import accept_suggestion, list_suggestions
from store.importing.pipeline import import_paths


def _claude_memories(path: Path, lines: list[str]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "memories.json").write_text(
        json.dumps([{"conversations_memory": "\n".join(f"- {line}" for line in lines)}]), encoding="utf-8"
    )
    return path


@pytest.mark.parametrize("embed", [True, False])
def test_a_claude_memories_import_supersedes_and_keeps_second_facts(
    store: Store, tmp_path: Path, embed: bool
) -> None:
    berlin = store.add_memory("I live in Berlin.", "fact").memory
    guitar = store.add_memory("I play the guitar.", "fact").memory
    export = _claude_memories(tmp_path / "claude", ["I moved to Lisbon last month.", "I play the piano."])
    import_paths(store, [export], embed=embed, summarize=False)
    current = {m.content for m in store.list_memories(state="current")}
    assert current == {"I moved to Lisbon last month.", "I play the guitar.", "I play the piano."}
    assert store.get_memory(berlin.id).valid_until is not None
    assert store.get_memory(guitar.id).valid_until is None


def test_a_pasted_list_accepted_as_suggestions_goes_through_the_same_rules(
    store: Store, tmp_path: Path
) -> None:
    son = store.add_memory("My son is 7 years old.", "fact").memory
    meat = store.add_memory("I eat meat.", "fact").memory
    pasted = tmp_path / "memories.txt"
    pasted.write_text("- My daughter is 4 years old.\n- I no longer eat meat.\n", encoding="utf-8")
    import_paths(store, [pasted], fmt="text", summarize=False)
    for s in list_suggestions(store):
        accept_suggestion(store, s.id, category="fact")
    assert store.get_memory(son.id).valid_until is None  # another subject: both kept
    assert store.get_memory(meat.id).valid_until is not None  # a denial: superseded
