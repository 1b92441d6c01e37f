"""Doing things (issue 18): cleanup thresholds and keep/pin per candidate, "Moved 1 memory", the theme
saved and restored, $EDITOR for a long memory, the context preview copied and saved, and an import that
says which phase it is in with counts from the start."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest

from app.tui.import_progress import ImportPhases, clock
from app.tui.screens.cleanup import CleanupScreen
from app.tui.screens.context_preview import ContextPreviewScreen
from app.tui.screens.import_screen import ImportScreen
from app.tui.screens.memory_edit import MemoryEditScreen
from app.tui.screens.prompt import PromptScreen
from app.tui.screens.thread_view import ThreadViewScreen
from app.tui.screens.thresholds import ThresholdsScreen
from store import Store
from store.importing.run import ImportProgress, ImportTotals
from tests.app.tui.tui_helpers import go_to, make_app, screen_text, settle, write_generic


def _notes(app) -> list[str]:  # type: ignore[no-untyped-def]
    return [n.message for n in app._notifications]  # noqa: SLF001 - what the toasts said


async def _set_thresholds(pilot, importance: str, uses: str, days: str) -> None:  # type: ignore[no-untyped-def]
    await pilot.press("T")
    await settle(pilot)
    assert isinstance(pilot.app.screen, ThresholdsScreen)
    for value in (importance, uses):
        await pilot.press("ctrl+a", "ctrl+k", *value, "tab")
    await pilot.press("ctrl+a", "ctrl+k", *days, "enter")
    await settle(pilot)


async def test_cleanup_thresholds_keep_pin_and_one_memory_moved(tui_store: Store) -> None:
    ids = [
        tui_store.add_memory(f"Faded note number {i} about {w}", "fact", importance=2).memory.id
        for i, w in enumerate(("kites", "lamps", "ropes"))
    ]
    app = make_app(tui_store, greet=False)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await go_to(pilot, "4", CleanupScreen)
        assert screen.candidates == []  # all new: not untouched for 90 days
        assert "(T changes this)" in " ".join(screen_text(app).split())
        await _set_thresholds(pilot, "3", "2", "0")
        assert [c.memory.id for c in screen.candidates] == ids
        assert "untouched for over 0 days (set here)" in " ".join(screen_text(app).split())
        await pilot.press("k")  # keep the first: importance raised to the threshold
        await settle(pilot)
        assert tui_store.get_memory(ids[0]).importance == 3
        assert "importance 2 → 3" in _notes(app)[-1]
        await pilot.press("p")  # pin the (new) first
        await settle(pilot)
        assert tui_store.get_memory(ids[1]).pinned
        assert [c.memory.id for c in screen.candidates] == [ids[2]]
        await pilot.press("a")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert any(n.startswith("Moved 1 memory to the trash") for n in _notes(app)), _notes(app)
        assert tui_store.get_memory(ids[2]).deleted_at is not None
        await _set_thresholds(pilot, "x", "2", "0")  # refused, said why
        assert isinstance(app.screen, ThresholdsScreen) and "Not applied" in screen_text(app)


async def test_the_chosen_theme_is_saved_and_restored(tui_store: Store) -> None:
    app = make_app(tui_store, greet=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p", *"theme")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause(0.3)
        await pilot.press(*"nord")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot)
        assert app.theme == "nord"
    assert tui_store.get_setting("tui.theme") == "nord"
    again = make_app(tui_store, greet=False)
    async with again.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert again.theme == "nord"


async def test_editor_edits_a_long_memory(
    tui_store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import sys\np = sys.argv[1]\ntext = open(p, encoding='utf-8').read()\n"
        "open(p, 'w', encoding='utf-8').write(text + ' and a second paragraph written in the editor\\n')\n"
    )
    monkeypatch.setenv("VISUAL", f"{sys.executable} {editor}")
    app = make_app(tui_store, greet=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert isinstance(app.screen, MemoryEditScreen)
        await pilot.press(*"First paragraph")
        await pilot.press("ctrl+o")
        await pilot.pause(0.5)
        await pilot.press("ctrl+s")
        await settle(pilot)
    assert [m.content for m in tui_store.list_memories()] == [
        "First paragraph and a second paragraph written in the editor"
    ]


async def test_context_preview_copies_and_saves_to_a_file(demo_store: Store, tmp_path: Path) -> None:
    app = make_app(demo_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await go_to(pilot, "enter", ThreadViewScreen)
        await pilot.press("c")
        await settle(pilot)
        assert isinstance(app.screen, ContextPreviewScreen)
        await pilot.press("ctrl+y")
        assert app.clipboard.startswith("## ") and "## user" in app.clipboard
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, PromptScreen)
        await pilot.press("ctrl+a", "ctrl+k", *"ctx.json", "enter")
        await settle(pilot)
        # a bare name lands beside chat.db (the data folder), not in the current folder; private (0600)
        saved_file = tmp_path / "contexts" / "ctx.json"
        saved = json.loads(saved_file.read_text(encoding="utf-8"))
        assert saved["messages"] and saved["messages"][-1]["role"] in ("user", "assistant")
        assert stat.S_IMODE(saved_file.stat().st_mode) == 0o600
        assert stat.S_IMODE(saved_file.parent.stat().st_mode) == 0o700
        await pilot.press("ctrl+s")
        await settle(pilot)
        await pilot.press("enter")  # the default name: text
        await settle(pilot)
        [text_file] = (tmp_path / "contexts").glob("context-thread-*.md")
        assert text_file.read_text(encoding="utf-8").startswith("## ")
        await pilot.press("ctrl+s")
        await settle(pilot)
        await pilot.press("ctrl+a", "ctrl+k", *str(tmp_path / "elsewhere" / "given.md"), "enter")
        await settle(pilot)
        assert (tmp_path / "elsewhere" / "given.md").read_text(encoding="utf-8").startswith("## ")


async def test_an_import_names_its_phases_with_counts_from_the_start(
    tui_store: Store, tmp_path: Path
) -> None:
    threads = [
        {
            "id": f"t{i}",
            "title": f"Thread {i}",
            "messages": [
                {
                    "role": "user" if j % 2 == 0 else "assistant",
                    "content": f"line {j} of {i}. We decided to test.",
                }
                for j in range(32)
            ],
        }
        for i in range(3)
    ]
    export = write_generic(tmp_path / "three.json", threads)
    app = make_app(tui_store, greet=False)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await go_to(pilot, "5", ImportScreen)
        said: list[str] = []
        original = screen._say  # noqa: SLF001 - record every label the screen shows

        def record(text: str) -> None:
            said.append(text)
            original(text)

        screen._say = record  # type: ignore[method-assign]  # noqa: SLF001
        await pilot.press(*str(export), "enter")
        await settle(pilot, rounds=8)
    assert said[0].startswith("Step 1 of 3 · reading three.json")
    assert said[1].startswith("Step 2 of 3") and "0/3 threads · 0/96 messages · about" in said[1]
    assert "first estimate" in said[1]
    assert any(s.startswith("Step 3 of 3 · summarising the threads that grew") for s in said), said
    assert said[-1].startswith("Done in")
    assert tui_store.get_summary(tui_store.list_threads()[0].id) is not None


def test_the_estimate_follows_the_measured_rate() -> None:
    phases = ImportPhases(embed=True, first_rate=100.0)
    assert "about 0:50 (first estimate, at 100 msg/s)" in phases.counted(ImportTotals(10, 5000))
    early = ImportProgress("f", 1, 10, 100, 5000, 100, 1.0)
    assert "about 0:49 left (first estimate)" in phases.progressed(early)
    measured = ImportProgress("f", 5, 10, 2500, 5000, 2500, 10.0)  # 250 msg/s measured
    assert "250 msg/s · about 0:10 left" in phases.progressed(measured)
    assert clock(3725) == "1:02:05"
    fresh = ImportPhases(embed=False, first_rate=100.0)
    assert fresh.tick() is None  # nothing counted yet
    fresh.counted(ImportTotals(2, 1000))
    assert "0/2 threads · 0/1,000 messages" in (fresh.tick() or "")  # ticks before the first thread
    fresh.progressed(ImportProgress("f", 1, 2, 400, 1000, 400, 4.0))
    fresh.last_at -= 6.0  # six seconds without a new snapshot: the rate shown falls, the line is alive
    assert "40 msg/s" in (fresh.tick() or "")
