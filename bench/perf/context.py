"""Context builder and summariser timings on a long synthetic thread; prints JSON.

    .venv/bin/python bench/bench_context.py [--messages 5000] [--budget 16000] [--runs 50] [--real-model]

The thread alternates user/assistant turns with some tool output and inline reasoning, 30-400 tokens
each, embedded by the fake embedder unless --real-model (retrieval for the latest user message uses its stored
chunk vectors; --query text is embedded per call).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from embeddings import FakeEmbedder  # noqa: E402
from store import Store  # noqa: E402
from store.context.builder import build_context  # noqa: E402
from store.extract.summaries import summarize_thread  # noqa: E402
from store.records import MessageIn, ThreadIn  # noqa: E402

WORDS = """
backup restic storage offsite schedule python asyncio sqlite vector index search token budget memory
summary thread tool output reasoning decide plan deploy server laptop config parser rust lifetime
borrow clone cache latency query model embedding chunk overlap fusion keyword
""".split()  # noqa: SIM905 - a word list reads better as text


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 18))).capitalize() + "."


def message(rng: random.Random, i: int) -> MessageIn:
    if i % 17 == 5:
        return MessageIn("tool", "\n".join(sentence(rng) for _ in range(rng.randint(5, 30))), f"m{i}")
    role = "user" if i % 2 == 0 else "assistant"
    body = " ".join(sentence(rng) for _ in range(rng.randint(2, 25)))
    if role == "assistant" and i % 7 == 1:
        body = f"<think>{' '.join(sentence(rng) for _ in range(10))}</think>" + body
    if i % 50 == 0:
        body += " We decided to use sqlite-vec for the index."
    return MessageIn(role, body, f"m{i}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=5000)
    ap.add_argument("--budget", type=int, default=16000)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--memories", type=int, default=200)
    ap.add_argument("--real-model", action="store_true")
    a = ap.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "chat.db", embedder="auto" if a.real_model else FakeEmbedder())
        t0 = time.perf_counter()
        msgs = [message(rng, i) for i in range(a.messages)]
        tid = store.write_thread(ThreadIn("bench", "long", "long thread", msgs)).thread_id
        write_s = time.perf_counter() - t0
        for j in range(a.memories):
            store.add_memory(
                sentence(rng), ("preference", "project", "skill", "fact")[j % 4], pinned=j < 5, force=True
            )
        t0 = time.perf_counter()
        res = summarize_thread(store, tid)
        summarize_s = time.perf_counter() - t0
        times = {}
        for label, query in (("latest_user_message", None), ("query", "which vector index did we pick")):
            build_context(store, tid, a.budget, query=query, touch=False)  # warm caches (model, tokenizer)
            runs = []
            for _ in range(a.runs):
                t0 = time.perf_counter()
                ctx = build_context(store, tid, a.budget, query=query, touch=False)
                runs.append((time.perf_counter() - t0) * 1000)
            runs.sort()
            times[label] = {
                "p50_ms": round(statistics.median(runs), 2),
                "p95_ms": round(runs[int(0.95 * len(runs)) - 1], 2),
                "total_tokens": ctx.token_stats.total,
                "included": ctx.metadata.included_messages,
                "exact_total": store.tokens.count_messages(ctx.messages),
            }
        print(
            json.dumps(
                {
                    "messages": a.messages,
                    "budget": a.budget,
                    "embedder": store.embedder.name if store.embedder else None,
                    "write_thread_s": round(write_s, 2),
                    "summarize": {
                        "seconds": round(summarize_s, 2),
                        "tokens": res.after_tokens,
                        "method": res.method,
                        "before_tokens": res.before_tokens,
                    },
                    "context": times,
                },
                indent=2,
            )
        )
        store.close()


if __name__ == "__main__":
    main()
