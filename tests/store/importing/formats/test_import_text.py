"""`--format text`: a pasted list of memories -> suggestions with a guessed category and importance."""

from __future__ import annotations

from pathlib import Path

from store.importing.formats import detect_format, read_export
from store.importing.formats.text_list import parse_text, split_items
from store.records import SuggestionIn
from tests.store.importing.formats.import_helpers import FIXTURES


def _read(path: Path) -> list[tuple[str, str, int]]:
    items = list(read_export(path, "text"))
    assert all(isinstance(i, SuggestionIn) for i in items)
    return [(i.category, i.content, i.importance) for i in items if isinstance(i, SuggestionIn)]


def test_chatgpt_memory_page_copy() -> None:
    path = FIXTURES / "text" / "chatgpt-memories.txt"
    assert detect_format(path) == "text"
    assert _read(path) == [
        ("preference", "Prefers concise answers without bullet-point summaries at the end.", 6),
        ("fact", "Is a hydrographer based in Bergen, Norway.", 6),
        ("project", "Is working on an open-source tide-gauge parser called tide.", 6),
        ("fact", "Is allergic to shellfish; never suggest recipes with shrimp.", 7),
        ("skill", "Knows Python and Rust well, is learning Haskell.", 5),
    ]


def test_markdown_bullets_numbers_continuations_and_duplicates() -> None:
    path = FIXTURES / "text" / "claude-list.md"
    assert detect_format(path) == "text"
    assert [c for _, c, _ in _read(path)] == [
        "You prefer metric units in every answer.",
        "You are building a budgeting app in SvelteKit with a Go backend.",  # indented continuation
        "Your daughter's name is Ingrid.",
        "Writes documentation in British English.",
        "Uses Neovim with a Lua config.",
    ]


def test_first_person_lines_use_the_thread_extractor_rules() -> None:
    [s] = list(parse_text("1. I always want answers in Norwegian when I write in Norwegian\n"))
    assert (s.category, s.importance) == ("preference", 7)


def test_plain_lines_headings_and_checkboxes() -> None:
    text = "# Memories\nAbout you:\n- [x] Runs Arch Linux\n- [ ] Has two cats\n\n---\nok\n"
    assert split_items(text) == ["Runs Arch Linux", "Has two cats"]
    assert split_items("Lives in Oslo\nDrinks tea\n") == ["Lives in Oslo", "Drinks tea"]


def test_binary_input_is_one_problem(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    path.write_bytes(b"\x00\x01\x02 junk")
    [problem] = list(read_export(path, "text"))
    assert "binary" in getattr(problem, "error", "")
