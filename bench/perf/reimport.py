"""Re-importing an export that has not changed: it must cost a read per thread, not a re-check of every
message. Prints JSON.

    .venv/bin/python -m bench reimport [--quick] [--rounds 7]

Writes 50 threads x 200 messages (ChatGPT-like metadata on every message) into a fresh chat.db without
vectors, then times, alternating rounds in one process:

- `write_thread` of the same 50 threads again (each answers "unchanged" from one read of the thread and
  its message ids, taking no write lock): ms for all 50, and the SQL statements they ran (apsw exec trace);
- beside it, in the same run, the per-message check the write path ran before issue 13 (every message's
  metadata JSON and surrogate scan, `store.threads._check_storable` over all positions) on the same
  threads: what the re-import used to pay on top;
- `import_paths` of the same threads as a generic-format export file (parsing included).

Target (issue 13): the 50 x 200 re-import <= 25 ms (the review measured 244 ms before).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.lib.common import emit

THREADS, MESSAGES = 50, 200


def threads(n_threads: int, n_messages: int) -> list[Any]:
    from store.records import MessageIn, ThreadIn

    out = []
    for h in range(n_threads):
        msgs = [
            MessageIn(
                role="user" if i % 2 == 0 else "assistant",
                content=f"Conversation {h}, turn {i}: how do I keep restic backups of the NAS small? " * 3,
                external_id=f"conv-{h}-{i:03d}",
                created_at=1.7e9 + h * 1000 + i,
                metadata={
                    "model_slug": "gpt-4o",
                    "finish_details": {"type": "stop"},
                    "citations": [],
                    "request_id": f"req-{h}-{i}",
                    "timestamp_": "absolute",
                    "weight": 1.0,
                },
            )
            for i in range(n_messages)
        ]
        out.append(
            ThreadIn(
                "chatgpt",
                f"conv-{h}",
                f"Conversation {h}",
                msgs,
                1.7e9 + h * 1000,
                1.7e9 + h * 1000 + n_messages,
                {"default_model_slug": "gpt-4o"},
            )
        )
    return out


def generic_export(path: Path, items: list[Any]) -> None:
    path.write_text(
        json.dumps(
            {
                "threads": [
                    {
                        "id": t.external_id,
                        "title": t.title,
                        "created_at": t.created_at,
                        "updated_at": t.updated_at,
                        "messages": [
                            {
                                "id": m.external_id,
                                "role": m.role,
                                "content": m.content,
                                "created_at": m.created_at,
                                "metadata": m.metadata,
                            }
                            for m in t.messages
                        ],
                    }
                    for t in items
                ]
            }
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="3 rounds instead of 7")
    ap.add_argument("--rounds", type=int, default=7)
    a = ap.parse_args()
    rounds = 3 if a.quick else a.rounds

    from store import Store
    from store.importing.pipeline import import_paths
    from store.threads import _check_storable

    items = threads(THREADS, MESSAGES)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "chat.db", embedder=None)
        export = Path(tmp) / "export.json"
        generic_export(export, items)
        first = import_paths(store, [export], "generic", embed=False, summarize=False)
        assert first.messages_added == THREADS * MESSAGES, first.to_json()
        source = store.list_threads(limit=1)[0].source
        items = [
            type(t)(source, t.external_id, t.title, t.messages, t.created_at, t.updated_at, t.metadata)
            for t in items
        ]

        statements: list[str] = []

        def trace(_cursor: object, sql: str, _bindings: object) -> bool:
            statements.append(sql)
            return True  # run the statement: the trace only counts

        write_ms, check_ms, import_ms = [], [], []
        for _ in range(rounds):
            statements.clear()
            store.con.exec_trace = trace
            t0 = time.perf_counter()
            results = [store.write_thread(t) for t in items]
            write_ms.append((time.perf_counter() - t0) * 1000)
            store.con.exec_trace = None
            assert not any(r.messages_added or r.created for r in results)
            t0 = time.perf_counter()
            for t in items:
                _check_storable(t, range(len(t.messages)))
            check_ms.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            report = import_paths(store, [export], "generic", embed=False, summarize=False)
            import_ms.append((time.perf_counter() - t0) * 1000)
            assert report.threads_unchanged == THREADS and report.messages_added == 0, report.to_json()
        store.close()

    ms = round(statistics.median(write_ms), 2)
    old_check = round(statistics.median(check_ms), 2)
    result = {
        "threads": THREADS,
        "messages_per_thread": MESSAGES,
        "rounds": rounds,
        "reimport_write_thread_ms": ms,
        "reimport_statements": len(statements),
        "statements_per_thread": len(statements) / THREADS,
        "all_messages_check_ms": old_check,
        "reimport_plus_all_messages_check_ms": round(ms + old_check, 2),
        "speedup_vs_checking_every_message": round((ms + old_check) / ms, 1) if ms else None,
        "import_paths_ms": round(statistics.median(import_ms), 1),
        "target_ms": 25,
        "review_before_ms": 244,
    }
    emit(
        "reimport",
        result,
        f"re-import of {THREADS}x{MESSAGES} unchanged messages: {ms} ms, {len(statements)} statements "
        f"(target <= 25 ms; checking every message as before would add {old_check} ms); "
        f"import_paths of the file {result['import_paths_ms']} ms",
    )


if __name__ == "__main__":
    main()
