"""Read-modify-write load on a few memories, counted, for the lost-update tests (issue 31, 5).

    python rmw_worker.py DB SECONDS SEED THREADS OUT.json ID...     # a process of THREADS workers

Each worker repeats, on a random memory of IDS: importance +1 then -1 (`change_importance`, the TUI's
`+`/`-`), a pin toggle twice (`toggle_pin`, the TUI's `p`), and one access (`touch_memories`, what a
search counts). The memories start at importance 2 and unpinned, and at most eight workers run at once,
so no +1 is ever capped at 10: when nothing is lost, every memory ends where it started, memory_history
holds exactly one row per importance change and per toggle, and access_count equals the accesses made.
Each worker also records the longest time one call took (the waits are bounded, issue 31, 1).
"""

from __future__ import annotations

import json
import random
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from store import Store

START_IMPORTANCE = 2
MAX_WORKERS = 8  # START_IMPORTANCE + MAX_WORKERS <= 10: a +1 is never capped


@dataclass
class Tally:
    """What one or more workers did."""

    importance_changes: int = 0
    toggles: int = 0
    accesses: Counter[int] = field(default_factory=Counter)
    slowest: float = 0.0
    errors: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        self.importance_changes += other.importance_changes
        self.toggles += other.toggles
        self.accesses.update(other.accesses)
        self.slowest = max(self.slowest, other.slowest)
        self.errors += other.errors

    def to_json(self) -> dict[str, object]:
        return {
            "importance_changes": self.importance_changes,
            "toggles": self.toggles,
            "accesses": {str(k): v for k, v in self.accesses.items()},
            "slowest": self.slowest,
            "errors": self.errors,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Tally:
        t = cls(int(data["importance_changes"]), int(data["toggles"]))
        t.accesses = Counter({int(k): int(v) for k, v in data["accesses"].items()})
        t.slowest = float(data["slowest"])
        t.errors = [str(e) for e in data["errors"]]
        return t


def work(store: Store, ids: list[int], deadline: float, seed: int) -> Tally:
    """One worker's loop on `store` (a store.Store) until `deadline` (time.monotonic())."""
    rng = random.Random(seed)
    tally = Tally()

    def timed(call: Callable[..., object], *args: object) -> None:
        t = time.monotonic()
        call(*args)
        tally.slowest = max(tally.slowest, time.monotonic() - t)

    try:
        while time.monotonic() < deadline:
            mid = rng.choice(ids)
            timed(store.change_importance, mid, +1)
            timed(store.change_importance, mid, -1)
            tally.importance_changes += 2
            timed(store.toggle_pin, mid)
            timed(store.toggle_pin, mid)
            tally.toggles += 2
            timed(store.touch_memories, [mid])
            tally.accesses[mid] += 1
    except Exception as exc:  # reported, and the test fails on it
        tally.errors.append(f"{type(exc).__name__}: {exc}")
    return tally


def run_threads(store: Store, ids: list[int], seconds: float, seed: int, threads: int) -> Tally:
    deadline = time.monotonic() + seconds
    tallies: list[Tally] = []
    lock = threading.Lock()

    def one(n: int) -> None:
        t = work(store, ids, deadline, seed * 100 + n)
        with lock:
            tallies.append(t)

    workers = [threading.Thread(target=one, args=(n,)) for n in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    total = Tally()
    for t in tallies:
        total.add(t)
    return total


def main(argv: list[str]) -> int:
    db, seconds, seed, threads, out, *ids = argv
    from store import Store

    with Store(Path(db), embedder=None) as store:
        tally = run_threads(store, [int(i) for i in ids], float(seconds), int(seed), int(threads))
    # written after close: the access counts still waiting in memory were flushed by it
    Path(out).write_text(json.dumps(tally.to_json()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
