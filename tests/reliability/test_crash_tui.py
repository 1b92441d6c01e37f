"""The TUI's own edits, killed (issue 31, figures: kills per writer including the TUI's own edits).

The real app runs headless in a forked `memapp` process (cli_runner.py's @tui-edits) and presses `+`,
`-` and `p` on its Memories screen, journalling each press before it and once its write has finished.
It is SIGKILLed once a few more changes are in memory_history (a point of progress, not a moment),
plus up to 30 ms: then every acknowledged press is in chat.db, the one in flight is whole or absent,
history replays to the rows, and the database passes its checks.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest

from store import Store
from tests.reliability.invariants import checked_store, memory_state
from tests.reliability.processes import Zygote, count_kills

SEED = int(os.environ.get("MEMAPP_CRASH_SEED", "8008"))
EVENTS = "SELECT count(*) FROM memory_history WHERE event IN ('importance', 'pin', 'unpin')"

pytestmark = [pytest.mark.soak, pytest.mark.serial]


def _after(state: dict[str, Any], op: str) -> dict[str, Any]:
    """A memory_state after one press: +/- move importance by one within 1-10, p toggles the pin."""
    new = dict(state)
    if op == "p":
        new["pinned"] = not state["pinned"]
    else:
        new["importance"] = max(1, min(10, state["importance"] + (1 if op == "plus" else -1)))
    return new


def test_tui_edits_killed(tmp_path: Path, soak: bool, figures: dict[str, int]) -> None:
    db = tmp_path / "chat.db"
    with Store(db, embedder=None) as store:
        for i in range(8):
            store.add_memory(f"memory {i} edited in the TUI", "fact", importance=1 + i)
        model = {m.id: memory_state(store, m.id) for m in store.list_memories()}
        expected = int(store.scalar(EVENTS))
    journal = tmp_path / "journal.jsonl"
    rng = random.Random(SEED + 77)
    kills = 10 if soak else 2
    acknowledged = 0
    with Zygote(tmp_path) as zygote:
        for n in range(kills):
            job = zygote.run(["@tui-edits", str(db), str(journal), str(SEED + 700 + n)])
            target = expected + rng.randint(3, 8)
            assert job.kill_when(db, EVENTS, target, extra=rng.uniform(0.0, 0.03), timeout=300), job.stderr()
            lines = [json.loads(x) for x in journal.read_text().splitlines()]
            journal.write_text("")
            begun = [x["begin"] for x in lines if "begin" in x]
            done = [x["done"] for x in lines if "done" in x]
            assert begun[: len(done)] == done and len(begun) - len(done) <= 1
            with checked_store(db) as store:
                for rec in begun:
                    old = model[rec["id"]]
                    assert old is not None
                    new = _after(old, rec["op"])
                    actual = memory_state(store, rec["id"])
                    if rec in done or (actual == new and actual != old):
                        model[rec["id"]] = new
                        expected += new != old
                for mid, state in model.items():
                    assert memory_state(store, mid) == state, f"memory {mid}: an acknowledged press was lost"
                assert store.scalar(EVENTS) == expected
            acknowledged += len(done)
    assert acknowledged >= kills
    count_kills(figures, "TUI edits (+, -, p)", kills)
