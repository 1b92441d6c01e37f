"""A long Claude Code session: import with embeddings and summaries, re-import, grow; prints JSON.

    .venv/bin/python -m bench transcript [--turns 1000] [--tools 3] [--pad 3600]

Generates one Claude Code transcript (`<session>.jsonl`) of `--turns` exchanges: a prompt, `--tools`
tool calls each followed by a tool result carrying `--pad` characters of output (tool output is what
makes real sessions megabytes), and an answer. The defaults give 1,000 turns in about 15 MB. Then, in
this process, with the real model (loaded first, timed apart):

1. `import_paths` of the file with embeddings, then the thread's summary and topics (target: < 30 s on
   2 cores for the 15 MB session); the baseline beside it is the model alone (`embed_documents`) on a
   sample of 400 of the same texts, scaled to all of them: what no import can beat,
2. the same import again, unchanged: the per-file bookkeeping (size, mtime) skips it; the baseline beside
   it is what a re-import without bookkeeping costs at least: parsing the whole file again,
3. 10 more turns appended and imported (what the hook does after each turn): only the new lines are read.

Also reported: the machine's load average before and after (the machine is shared) and the CPU seconds
this process used, steadier than wall time when other work runs.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.lib.common import emit, machine

SESSION = "6b1f0c2e-8a4d-4e1f-9b7c-3d5e7f9a1b2c"


def _line(kind: str, n: int, parent: str | None, message: dict[str, Any], ts: int) -> tuple[str, str]:
    uuid = f"00000000-0000-4000-8000-{n:012d}"
    obj = {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/ana/src/tide",
        "sessionId": SESSION,
        "version": "2.0.31",
        "gitBranch": "main",
        "type": kind,
        "message": message,
        "uuid": uuid,
        "timestamp": f"2025-10-02T{ts // 3600 % 24:02d}:{ts // 60 % 60:02d}:{ts % 60:02d}.000Z",
    }
    return json.dumps(obj) + "\n", uuid


def transcript(first: int, turns: int, tools: int, pad: int) -> str:
    """Turns `first`..`first + turns - 1` of the session, as JSON lines."""
    out: list[str] = []
    parent: str | None = None
    n = first * (2 * tools + 2)
    filler = ("tide station reading 12.4 m at 06:00 UTC, flagged ok; " * (pad // 54 + 1))[:pad]
    for t in range(first, first + turns):
        n += 1
        line, parent = _line(
            "user",
            n,
            parent,
            {
                "role": "user",
                "content": f"Station {t} reports odd tide heights after midnight; can you find out "
                f"why the parser shifts them by an hour and fix it without touching the public API?",
            },
            n,
        )
        out.append(line)
        for k in range(tools):
            cid = f"toolu_{t:05d}_{k}"
            n += 1
            use = {
                "type": "tool_use",
                "id": cid,
                "name": ("Read", "Bash", "Edit")[k % 3],
                "input": {"command": f"pytest tests/test_station_{t}.py -k midnight_{k}"},
            }
            line, parent = _line(
                "assistant",
                n,
                parent,
                {"role": "assistant", "model": "claude-sonnet-4-5", "content": [use]},
                n,
            )
            out.append(line)
            n += 1
            result = {
                "type": "tool_result",
                "tool_use_id": cid,
                "content": filler,
                "is_error": k == 1 and t % 5 == 0,
            }
            line, parent = _line("user", n, parent, {"role": "user", "content": [result]}, n)
            out.append(line)
        n += 1
        answer = (
            f"Station {t}: the parser applied the daylight-saving offset twice for readings taken just "
            f"after midnight. I moved the offset into parse_time, added a regression test for station {t}, "
            "and the public API is unchanged; all tests pass."
        )
        line, parent = _line(
            "assistant",
            n,
            parent,
            {
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": answer}],
            },
            n,
        )
        out.append(line)
    return "".join(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=1000)
    ap.add_argument("--tools", type=int, default=3)
    ap.add_argument("--pad", type=int, default=3600)
    a = ap.parse_args()

    from store.extract.summaries import summarize_thread
    from store.importing.formats.claude_code import read_session
    from store.importing.pipeline import import_paths
    from store.store import Store

    load_before = os.getloadavg()
    cpu0 = time.process_time()
    with tempfile.TemporaryDirectory(prefix="memapp-bench-") as tmp:
        folder = Path(tmp) / "projects" / "-home-ana-src-tide"
        folder.mkdir(parents=True)
        path = folder / f"{SESSION}.jsonl"
        path.write_text(transcript(0, a.turns, a.tools, a.pad), encoding="utf-8")
        size = path.stat().st_size

        store = Store(Path(tmp) / "chat.db")
        t0 = time.perf_counter()
        embedder = store.embedder
        assert embedder is not None and store.vector_problem is None, store.vector_problem
        embedder.load()  # type: ignore[attr-defined]
        model_s = time.perf_counter() - t0
        t0, c0 = time.perf_counter(), time.process_time()
        report = import_paths(store, [path], summarize=False)
        import_s, import_cpu = time.perf_counter() - t0, time.process_time() - c0
        [thread] = store.list_threads()
        t0, c0 = time.perf_counter(), time.process_time()
        summarize_thread(store, thread.id)
        summary_s, summary_cpu = time.perf_counter() - t0, time.process_time() - c0
        chunks = int(store.scalar("SELECT count(*) FROM message_chunks"))
        # Baseline, same run: the model alone on a sample of the very texts the import embedded (every
        # text message here is one chunk), scaled to all of them: the import's physical limit.
        texts = [m.content for m in store.get_messages(thread.id, limit=1_000_000) if m.content]
        sample = texts[:: max(1, len(texts) // 400)][:400]
        t0, c0 = time.perf_counter(), time.process_time()
        embedder.embed_documents(sample)
        encode_s = (time.perf_counter() - t0) * len(texts) / len(sample)
        encode_cpu = (time.process_time() - c0) * len(texts) / len(sample)

        changes = store.con.total_changes()
        t0 = time.perf_counter()
        again = import_paths(store, [path])
        unchanged_s = time.perf_counter() - t0
        wrote = store.con.total_changes() - changes
        t0 = time.perf_counter()
        read_session(path, 0)
        reparse_s = time.perf_counter() - t0

        with path.open("a", encoding="utf-8") as fp:
            fp.write(transcript(a.turns, 10, a.tools, a.pad))
        t0 = time.perf_counter()
        grown = import_paths(store, [path])
        grow_s = time.perf_counter() - t0
        store.close()

    result = {
        "session": {
            "turns": a.turns,
            "tool_calls": a.turns * a.tools,
            "bytes": size,
            "messages": report.messages_added,
            "chunks": chunks,
        },
        "model_load_s": round(model_s, 2),
        "import_embed_s": round(import_s, 2),
        "summary_s": round(summary_s, 2),
        "import_and_summary_s": round(import_s + summary_s, 2),
        "import_and_summary_cpu_s": round(import_cpu + summary_cpu, 1),
        "import_cpu_s": round(import_cpu, 1),
        "baseline_encode_alone_s": round(encode_s, 2),
        "baseline_encode_alone_cpu_s": round(encode_cpu, 1),
        "import_vs_encode_alone": round(import_s / encode_s, 2),
        "summary_cpu_s": round(summary_cpu, 1),
        "cores": os.cpu_count(),
        "target_s": 30,
        "reimport_unchanged": {
            "s": round(unchanged_s, 4),
            "rows_written": wrote,
            "files_unchanged": again.files_unchanged,
            "baseline_full_parse_s": round(reparse_s, 3),
        },
        "append_10_turns": {"s": round(grow_s, 2), "messages_added": grown.messages_added},
        "cpu_s": round(time.process_time() - cpu0, 1),
        "load_avg_before": [round(x, 2) for x in load_before],
        "load_avg_after": [round(x, 2) for x in os.getloadavg()],
        "machine": machine(),
    }
    emit(
        "transcript",
        result,
        f"{size / 1e6:.1f} MB, {a.turns} turns: import+summary {import_s + summary_s:.1f} s "
        f"({import_cpu + summary_cpu:.0f} CPU s; target 30 s), "
        f"unchanged re-import {unchanged_s * 1000:.1f} ms vs full parse {reparse_s * 1000:.0f} ms, "
        f"+10 turns {grow_s:.2f} s; load {load_before[0]:.1f} -> {os.getloadavg()[0]:.1f}",
    )


if __name__ == "__main__":
    main()
