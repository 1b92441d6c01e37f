"""How long a place switch keeps the TUI's UI thread busy: from pressing the place's digit until the
arriving screen is drawn, for the first visit of each place and for a return visit; prints JSON.

    .venv/bin/python -m bench tui_switch [--runs 5]

Each run is a fresh process (a first visit happens once per process) on a copy of the bundled demo, at
120x40, the fake embedder (the model plays no part in switching). Two variants alternate in the same
runs: `imported`, the app as shipped (every place's screen module is imported in a background thread once
the first screen has its data, and the run waits for that before switching), and `baseline`, the same app
with that import turned off (each first visit imports its module on the UI thread, as before issue 28.7).
What remains in both is Textual's own work on the UI thread: parsing the new widgets' CSS, applying the
stylesheet to every widget, composing and laying out. Report the load (`uptime`): on the shared 2-core
machine every figure scales with it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.lib.common import ROOT, emit

ORDER = ["2", "3", "4", "5", "1", "2"]  # memories, search, cleanup, import; back to threads and memories
NAMES = ["memories", "search", "cleanup", "import", "threads (return)", "memories (return)"]

ONE_RUN = r"""
import asyncio, json, sys, time
from pathlib import Path
from embeddings import FakeEmbedder
from store import Store
from app.tui.app import MemApp

async def main():
    store = Store(Path(sys.argv[1]), embedder=FakeEmbedder())
    app = MemApp(store, greet=False, import_screens=sys.argv[2] == "imported")
    out = []
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(300):
            if app.screens_imported.is_set():
                break
            await pilot.pause(0.05)
        await app.workers.wait_for_complete()
        await pilot.pause(0.2)
        for key in json.loads(sys.argv[3]):
            t0 = time.perf_counter()
            await pilot.press(key)
            await pilot.pause()
            out.append(time.perf_counter() - t0)
            await app.workers.wait_for_complete()
            await pilot.pause(0.1)
    store.close()
    print(json.dumps(out))

asyncio.run(main())
"""


def run_once(db: Path, variant: str) -> list[float]:
    out = subprocess.run(
        [sys.executable, "-c", ONE_RUN, str(db), variant, json.dumps(ORDER)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={**os.environ, "TZ": "UTC"},
    )
    times: list[float] = json.loads(out.stdout.strip().splitlines()[-1])
    return times


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    runs = ap.parse_args().runs
    from store import Store
    from store.importing import load_demo

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "chat.db"
        with Store(db) as s:
            load_demo(s)
        found: dict[str, list[list[float]]] = {"imported": [], "baseline": []}
        run_once(db, "imported")  # warm-up: bytecode, disk caches
        for _ in range(runs):
            for variant in ("baseline", "imported"):
                found[variant].append(run_once(db, variant))

    def medians(variant: str) -> dict[str, float]:
        rows = found[variant]
        return {name: round(statistics.median(r[i] for r in rows) * 1000) for i, name in enumerate(NAMES)}

    result = {
        "runs": runs,
        "load": os.getloadavg()[0],
        "switch_ms": {"imported": medians("imported"), "baseline": medians("baseline")},
        "all_runs": found,
    }
    new, old = result["switch_ms"]["imported"], result["switch_ms"]["baseline"]
    first = [n for n in NAMES if "return" not in n]
    summary = (
        "tui switch (ms, median; modules imported in the background vs on first visit): "
        + ", ".join(f"{n} {new[n]} vs {old[n]}" for n in first)
        + f"; returns {new['memories (return)']} vs {old['memories (return)']}; load {result['load']:.1f}"
    )
    emit("tui_switch", result, summary)


if __name__ == "__main__":
    main()
