"""Start-up: the first screen is shown before torch / sentence-transformers are imported; the model
then loads in a worker, and the status line goes from 'warming up' to 'ready'.

Runs in a subprocess: the test process may already have torch loaded by other tests.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = r"""
import asyncio, json, sys
from textual import events
from store import Store
from app.app import MemApp

HEAVY = ("torch", "sentence_transformers")
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
        cwd=Path(__file__).resolve().parents[2],
    )
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["at_first_frame"] == []
    assert seen["state_at_first_frame"] == "loading"
    assert seen["state_after"] == "ready"
    assert seen["after"] == ["sentence_transformers", "torch"]
