"""Start-up: the first screen is shown before the model's runtime is imported; the model then loads in a
worker (onnxruntime: torch and sentence-transformers are never imported), and the status line goes from
'warming up' to 'ready'. As `memapp` starts it,
the first frame also comes before numpy, the store's vector code, the tokenizer and the other screens.

Runs in a subprocess: the test process may already have torch loaded by other tests.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# serial: times the first frame and quitting
pytestmark = pytest.mark.serial

SCRIPT = r"""
import asyncio, json, sys
from textual import events
from store import Store
from app.tui.app import MemApp

HEAVY = ("onnxruntime", "torch", "sentence_transformers")
seen = {}

def hook(message):
    if isinstance(message, events.Ready) and "at_first_frame" not in seen:
        seen["at_first_frame"] = sorted(m for m in HEAVY if m in sys.modules)
        seen["state_at_first_frame"] = app.status.semantic

async def main():
    global app
    store = Store(sys.argv[1])  # embedder="auto": all-MiniLM-L6-v2 from the installed package, not loaded
    app = MemApp(store, greet=False)
    async with app.run_test(message_hook=hook):
        for _ in range(1200):
            if app.status.semantic != "loading":
                break
            await asyncio.sleep(0.1)
        seen["state_after"] = app.status.semantic
        seen["after"] = sorted(m for m in HEAVY if m in sys.modules)
    store.close()
    print(json.dumps(seen))

asyncio.run(main())
"""


@pytest.mark.model
def test_first_frame_before_torch_then_the_model_loads(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "chat.db")],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        cwd=Path(__file__).resolve().parents[3],
    )
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["at_first_frame"] == []
    assert seen["state_at_first_frame"] == "loading"
    assert seen["state_after"] == "ready"
    assert seen["after"] == ["onnxruntime"]  # the model runs without torch (issue 19)


# -- `memapp` itself: chat.db checked, first frame, then the store (issue 7, benchmark 4) ------------------

OPENER_SCRIPT = r"""
import argparse, asyncio, json, sys
from textual import events
from textual.widgets import DataTable
from app.tui.app import MemApp, StoreOpener
from app.cli.common import Context

LATER = ("numpy", "store.store", "store.vectors.rows", "tiktoken", "torch", "app.cli.memory", "app.tui.screens.memories",
         "app.tui.screens.memory_list",
         "app.tui.screens.search", "app.tui.screens.cleanup", "app.tui.screens.import_screen", "app.tui.screens.thread_view")
seen = {}

def hook(message):
    if isinstance(message, events.Ready) and "at_first_frame" not in seen:
        seen["at_first_frame"] = sorted(m for m in LATER if m in sys.modules)
        seen["store_ready_at_first_frame"] = app.store_ready
        seen["status_at_first_frame"] = [app.status.threads, app.status.semantic]

async def main():
    global app
    ctx = Context(argparse.Namespace(db=sys.argv[1], config=None))
    ctx.check_database()  # what `memapp` does before the app starts
    app = MemApp(StoreOpener(ctx.db_path, lambda: ctx.store))
    async with app.run_test(size=(100, 30), message_hook=hook) as pilot:
        for _ in range(300):
            await app.workers.wait_for_complete()
            await pilot.pause(0.02)
            if app.screen.query_one("#threads-table", DataTable).row_count and app.status.threads is not None:
                break
        table = app.screen.query_one("#threads-table", DataTable)
        seen["rows"] = table.row_count
        seen["first_title"] = str(table.get_row_at(0)[0])
        seen["status"] = [app.status.threads, app.status.memories, app.status.tokens_exact, app.status.semantic]
        seen["later"] = sorted(m for m in ("numpy", "store.store") if m in sys.modules)
        await pilot.press("2")  # a mode imported on first use, and back to the one shown first
        await app.workers.wait_for_complete()
        await pilot.pause()
        seen["second_screen"] = type(app.screen).__name__
        await pilot.press("1")
        await pilot.pause()
        seen["back"] = type(app.screen).__name__
    ctx.close()
    print(json.dumps(seen))

asyncio.run(main())
"""


def test_memapp_paints_before_the_store_is_built_then_lists_threads(tmp_path: Path) -> None:
    """The first frame needs neither numpy, the vector code, the tokenizer nor the other screens; the
    store is then built in a worker and the Threads list and counts arrive."""
    from embeddings import FakeEmbedder
    from store import MessageIn, Store, ThreadIn

    db = tmp_path / "chat.db"
    with Store(db, embedder=FakeEmbedder()) as s:
        for i in range(3):
            s.write_thread(ThreadIn("generic", f"t{i}", f"Thread {i}", [MessageIn("user", "hello", "m1", i)]))
        s.add_memory("I prefer tabs", "preference")
    config = tmp_path / "config.toml"
    config.write_text("[embedding]\nenabled = false\n")
    out = subprocess.run(
        [sys.executable, "-c", OPENER_SCRIPT, str(db)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        cwd=Path(__file__).resolve().parents[3],
        env={**os.environ, "MEMAPP_CONFIG": str(config)},
    )
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["at_first_frame"] == []
    assert seen["store_ready_at_first_frame"] is False
    assert seen["status_at_first_frame"] == [None, "loading"]  # "counting…", "warming up…"
    assert seen["rows"] == 3 and seen["first_title"] == "Thread 2"
    assert seen["status"][:3] == [3, 1, True]
    assert seen["status"][3].startswith("unavailable") and "disabled" in seen["status"][3]
    assert seen["later"] == ["numpy", "store.store"]
    assert seen["second_screen"] == "MemoriesScreen" and seen["back"] == "ThreadsScreen"


async def test_a_store_that_fails_to_open_ends_the_app_with_the_reason(tmp_path: Path) -> None:
    from app.tui.app import MemApp, StoreOpener
    from store.errors import StoreError

    def fail() -> Any:
        raise StoreError("the disk went away")

    app = MemApp(StoreOpener(tmp_path / "chat.db", fail))
    async with app.run_test() as pilot:
        for _ in range(50):
            if app.return_code is not None:
                break
            await pilot.pause(0.02)
    assert app.return_code == 1


TUI_ARGS_SCRIPT = r"""
import json, sys
import app.tui
from app.cli import main

def run(args):
    print(json.dumps({"db": args.db, "command": args.command,
                      "modules": sorted(m for m in sys.modules if m.startswith("app.cli.") or m == "numpy")}))
    return 0

app.tui.run = run
sys.exit(main(sys.argv[1:]))
"""


def test_memapp_without_a_command_skips_the_subcommand_parsers(tmp_path: Path) -> None:
    """`memapp --db x` is told apart from a subcommand before the subcommand modules (which import most
    of the store) are imported."""
    out = subprocess.run(
        [sys.executable, "-c", TUI_ARGS_SCRIPT, "--db", str(tmp_path / "chat.db")],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        cwd=Path(__file__).resolve().parents[3],
    )
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["db"] == str(tmp_path / "chat.db") and seen["command"] is None
    assert seen["modules"] == ["app.cli.common"]


@pytest.mark.model
def test_quitting_while_the_model_loads_does_not_wait_for_it(tmp_path: Path) -> None:
    """ctrl+q in the first seconds (the model still importing torch in its thread) ends memapp at once,
    not when the load finishes (it used to wait 5-10 s); chat.db is intact afterwards."""
    import time

    from store import Store
    from tests.app.tui.pty_helpers import memapp_in_pty

    db = tmp_path / "chat.db"
    with Store(db, embedder=None) as s:
        s.add_memory("I prefer uv over pip", "preference")
    with memapp_in_pty(db, tmp_path / "none.toml") as run:
        assert run.wait_for(b"warming", 60), "memapp never showed its first screen"
        time.sleep(1.5)  # the first counts are in and the model thread has started loading
        quit_s = run.quit_seconds()
    assert run.proc.returncode == 0
    assert quit_s < 3.0, f"quitting took {quit_s:.1f} s"
    with Store(db, embedder=None) as s:
        assert [m.content for m in s.list_memories()] == ["I prefer uv over pip"]
        assert s.con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"  # type: ignore[index]
