"""How much the TUI's live-data poll costs (issue 18): `Store.data_version()` (SQLite's PRAGMA data_version,
what the app calls twice a second on the UI thread), beside what a refresh-by-timer without it would cost
(the status line's counts, `Store.stats()`), measured in the same run on one database.

    .venv/bin/python -m bench live_poll [--threads 2000]

Also checks the poll's point: a write from another connection changes the value, and nothing else does.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from bench.lib.common import emit, timing
from embeddings import FakeEmbedder
from store import MessageIn, Store, ThreadIn

REPEAT = 2000


def _fill(store: Store, threads: int) -> None:
    for i in range(threads):
        msgs = [
            MessageIn("user" if j % 2 == 0 else "assistant", f"message {j} of thread {i}", f"m{j}")
            for j in range(10)
        ]
        store.write_thread(ThreadIn("generic", f"t{i}", f"Thread {i}", msgs), embed=False)


def _per_call_ms(fn, repeat: int) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        db = Path(d) / "chat.db"
        store = Store(db, embedder=FakeEmbedder())
        _fill(store, args.threads)
        poll = timing(_per_call_ms(store.data_version, REPEAT))
        counts = timing(_per_call_ms(store.stats, max(50, REPEAT // 20)))
        before = store.data_version()
        unchanged = store.data_version() == before
        other = Store(db, embedder=FakeEmbedder())
        other.add_memory("written by another connection", "fact")
        noticed = store.data_version() != before
        other.close()
        store.close()
    ratio = counts["p50_ms"] / max(poll["p50_ms"], 1e-9)
    emit(
        "live_poll",
        {
            "threads": args.threads,
            "messages": args.threads * 10,
            "data_version": poll,
            "baseline_stats": counts,
            "stats_over_poll": round(ratio, 1),
            "idle_poll_cpu_ms_per_s": round(poll["mean_ms"] * 2, 4),
            "unchanged_when_idle": unchanged,
            "changes_after_another_write": noticed,
        },
        f"data_version p50 {poll['p50_ms'] * 1000:.1f} µs vs stats() p50 {counts['p50_ms']:.2f} ms "
        f"({ratio:,.0f}x); idle cost {poll['mean_ms'] * 2:.4f} ms of CPU per second; "
        f"noticed another write: {noticed}",
    )


if __name__ == "__main__":
    main()
