"""Sync through a folder (issue 29): an initial sync of a 50,000-message archive to an empty device, and
the changeset of 1,000 memory edits. Prints JSON.

    .venv/bin/python -m bench sync [--quick]

Device a imports a generated archive (1,000 threads x 50 messages of 40-120 words, plus 2,000
memories) from a generic-format export, without vectors (the model's cost is the same for an import and
for a sync: `memapp embed` after either). Measured, each beside a baseline from the same run:

- initial sync: a's `memapp sync` (capture + file), then b's (apply into an empty chat.db): seconds
  (wall and CPU), beside importing the same export file into an empty chat.db; bytes in the sync folder
  beside a's chat.db (and beside the export file);
- 1,000 memory edits on a: the changeset file's bytes, a's capture+write and b's apply (ms), beside the
  1,000 edits themselves through Store.edit_memory on a;
- a sync with nothing new (the cost of `--watch` finding nothing): ms.

CPU is the process's (time.process_time), wall is perf_counter; the machine is shared, so the ratios to
the same-run baselines are what to compare. `uptime` is recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.lib.common import emit


def _vocabulary(n: int = 20000, seed: int = 7) -> list[str]:
    """Made-up words of 2-10 letters: text that compresses about as real chat text does (a handful of
    real words repeated would make the files look far smaller than they are)."""
    rng = random.Random(seed)
    return [
        "".join(
            rng.choice("etaoinshrdlucmfwypvbgkjqxz"[: rng.randint(8, 26)]) for _ in range(rng.randint(2, 10))
        )
        for _ in range(n)
    ]


VOCABULARY = _vocabulary()
ZIPF = [1 / (i + 1) for i in range(len(VOCABULARY))]


def words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choices(VOCABULARY, weights=ZIPF, k=n))


def write_archive(path: Path, threads: int, per_thread: int, seed: int = 29) -> int:
    rng = random.Random(seed)
    n = 0
    with path.open("w", encoding="utf-8") as fh:
        for t in range(threads):
            messages = []
            for i in range(per_thread):
                text = words(rng, rng.randint(40, 120))
                messages.append(
                    {"id": f"t{t}m{i}", "role": "user" if i % 2 == 0 else "assistant", "content": text}
                )
                n += 1
            fh.write(json.dumps({"id": f"t{t}", "title": f"Thread {t}", "messages": messages}) + "\n")
    return n


def clocks() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def since(start: tuple[float, float]) -> dict[str, float]:
    wall, cpu = clocks()
    return {"wall_s": round(wall - start[0], 3), "cpu_s": round(cpu - start[1], 3)}


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*.memsync"))


def db_bytes(path: Path) -> int:
    return sum(Path(f"{path}{s}").stat().st_size for s in ("", "-wal") if Path(f"{path}{s}").exists())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="100 threads x 50 messages")
    args = ap.parse_args()
    threads, per_thread, memories, edits = (100, 50, 500, 200) if args.quick else (1000, 50, 2000, 1000)

    from embeddings import TokenCounter
    from store import Store
    from store.importing.pipeline import import_paths
    from store.sync import engine

    tokens = TokenCounter()
    root = Path(tempfile.mkdtemp(prefix="memapp-bench-sync-"))
    try:
        export = root / "archive.jsonl"
        n_messages = write_archive(export, threads, per_thread)
        a = Store(root / "a.db", embedder=None, tokens=tokens)
        t = clocks()
        import_paths(a, [export], embed=False, summarize=False, count_process=False)
        import_cost = since(t)
        for i in range(memories):
            a.add_memory(f"memory {i}: " + words(random.Random(i), 12), "fact", embed=False)
        folder = root / "folder"
        engine.init(a, folder, "laptop")
        a.con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        a_size = db_bytes(root / "a.db")

        t = clocks()
        sent = engine.sync(a, None, embed=False)
        send_cost = since(t)
        b = Store(root / "b.db", embedder=None, tokens=tokens)
        engine.init(b, folder, "desktop")
        t = clocks()
        got = engine.sync(b, None, embed=False)
        apply_cost = since(t)
        assert b.scalar("SELECT count(*) FROM messages") == n_messages
        b.con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        initial: dict[str, Any] = {
            "messages": n_messages,
            "threads": threads,
            "memories": memories,
            "files": len(sent.sent),
            "send": send_cost,
            "apply": apply_cost,
            "baseline_import_of_the_export": import_cost,
            "apply_vs_import": round(apply_cost["cpu_s"] / max(import_cost["cpu_s"], 1e-9), 2),
            "folder_bytes": folder_bytes(folder),
            "note": "chat.db here has no vectors (no model in the benchmark); with all-MiniLM's it is larger",
            "chat_db_bytes": a_size,
            "export_file_bytes": export.stat().st_size,
            "folder_vs_chat_db": round(folder_bytes(folder) / a_size, 3),
            "receiving_chat_db_bytes": db_bytes(root / "b.db"),
            "applied_files": len(got.applied),
        }

        ids = [
            int(r[0])
            for r in a.con.execute("SELECT id FROM long_term_memories ORDER BY id LIMIT ?", (edits,))
        ]
        before = folder_bytes(folder)
        t = clocks()
        for i, mid in enumerate(ids):
            a.edit_memory(mid, content=f"edited memory {i}: " + words(random.Random(-i), 12))
        edit_cost = since(t)
        t = clocks()
        sent = engine.sync(a, None, embed=False)
        send_edits = since(t)
        t = clocks()
        engine.sync(b, None, embed=False)
        apply_edits = since(t)
        t = clocks()
        engine.sync(b, None, embed=False)
        idle = since(t)
        edited: dict[str, Any] = {
            "edits": len(ids),
            "changeset_file_bytes": folder_bytes(folder) - before,
            "bytes_per_edit": round((folder_bytes(folder) - before) / max(1, len(ids))),
            "send": send_edits,
            "apply": apply_edits,
            "baseline_the_edits_themselves": edit_cost,
            "apply_vs_edits": round(apply_edits["cpu_s"] / max(edit_cost["cpu_s"], 1e-9), 3),
        }
        a.close()
        b.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    result: dict[str, Any] = {
        "load": os.getloadavg(),
        "initial_sync": initial,
        "memory_edits": edited,
        "sync_with_nothing_new": idle,
    }
    emit(
        "sync",
        result,
        f"sync: {n_messages:,} messages sent in {initial['send']['wall_s']} s and applied in "
        f"{initial['apply']['wall_s']} s (import of the export {initial['baseline_import_of_the_export']['wall_s']} s); "
        f"folder {initial['folder_vs_chat_db']:.0%} of chat.db; {len(ids)} edits: "
        f"{edited['changeset_file_bytes']:,} bytes, applied in {edited['apply']['wall_s']} s",
    )


if __name__ == "__main__":
    main()
