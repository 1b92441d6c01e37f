"""The keyword half ranked in process (store.search.held) against FTS5's own ranking, same rows (JSON).

    .venv/bin/python -m bench keyword_held [--quick] [--copies 10]

What the TUI and the MCP server run for the keyword half of every search, against what one-shot
commands run (store.search.candidates: FTS5 scores and sorts the matches), on two archives:

- synthetic: the search bench's chat.db (bench/lib/search_data.py: 145,000 messages, 100,000 memories,
  10,000 summaries; `--quick`: 10k + 20k), every kind searched at once, as a hybrid search does, with
  the hybrid bench's questions ("what did we say about ..."), single words from the commonest terms of
  the index down (the worst case for both), and typing: each question's last word typed a letter at a
  time from its third letter on, searched as a prefix at every key.
- real text: the longmem evaluation's conversations (bench/eval/longmem, written `--copies` times:
  about 44,000 turns of real English), its 678 questions and the same typing.

Three ways for each query, in alternating order, CPU seconds per query: `fts5` (the path before),
`held` (the postings of common terms kept between searches, as in a session) and `held_cold` (those
postings dropped before each query: the first search of a session). Every query's hits are compared
between the paths: they must be the same rows with the same scores, in the same order.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.lib.common import ROOT, Precomputed, Words, emit, timing
from bench.lib.search_data import search_db
from store import MessageIn, Store, ThreadIn
from store.search.candidates import TABLES
from store.search.engine import DEPTH
from store.search.filters import Filters
from store.search.held import HeldKeywords
from store.search.query import STOPWORDS, parse_query

MODES = ("fts5", "held", "held_cold")


def run_set(store: Store, queries: list[tuple[str, bool]]) -> dict[str, Any]:
    """Each (text, prefix) through the three modes, alternating which goes first; the hits compared."""
    kept = store.held_keywords() or _held(store)
    kinds = Filters().kinds("all")
    ms: dict[str, list[float]] = {m: [] for m in MODES}
    same = 0

    def one(mode: str, text: str, prefix: bool) -> Any:
        store.in_memory_keywords = mode != "fts5"
        if mode == "held_cold":
            kept.drop_postings()
        t0 = time.process_time()
        hits = store.keyword_hits(parse_query(text, prefix_last=prefix), kinds, Filters(), DEPTH)
        ms[mode].append((time.process_time() - t0) * 1000)
        return hits

    one("held", *queries[0])  # the row lengths are read once a session (and after a write): not timed here
    ms["held"].clear()
    for i, (text, prefix) in enumerate(queries):
        order = MODES if i % 2 == 0 else MODES[::-1]
        got = {m: one(m, text, prefix) for m in order}
        same += got["fts5"] == got["held"] == got["held_cold"]
    out: dict[str, Any] = {m: timing(ms[m]) for m in MODES}
    out["max_ms"] = {m: round(max(ms[m]), 2) for m in MODES}
    for m in ("held", "held_cold"):
        out[f"{m}_vs_fts5"] = {
            "p50": round(out[m]["p50_ms"] / out["fts5"]["p50_ms"], 3),
            "p95": round(out[m]["p95_ms"] / out["fts5"]["p95_ms"], 3),
            "max": round(out["max_ms"][m] / out["max_ms"]["fts5"], 3),
        }
    out["queries"] = len(queries)
    out["identical_hits"] = same
    return out


def lengths_read_ms(store: Store) -> float:
    """CPU to read every keyword index's row lengths, as the first held search (and the first after a
    write to an index) does."""
    fresh = HeldKeywords()
    t0 = time.process_time()
    for table in TABLES.values():
        fresh.lengths(store.con, table)
    return round((time.process_time() - t0) * 1000, 1)


def _held(store: Store) -> Any:
    store.hold_keywords()
    kept = store.held_keywords()
    assert kept is not None
    return kept


def typing(questions: list[str], n: int) -> list[tuple[str, bool]]:
    """Each of the first `n` questions with its last word typed a letter at a time (from the third),
    every key searched with the last word as a prefix; then the whole question."""
    out: list[tuple[str, bool]] = []
    for q in questions[:n]:
        head, _, last = q.rpartition(" ")
        out += [((head + " " + last[:j]).strip(), True) for j in range(3, len(last) + 1)]
        out.append((q, False))
    return out


def common_words(store: Store, n: int) -> list[tuple[str, bool]]:
    """The `n` commonest index terms of the messages that a query keeps (not stop words), one a query."""
    con = store.con
    con.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.bench_vocab USING fts5vocab(main, fts_messages, row)"
    )
    terms = [str(t) for (t,) in con.execute("SELECT term FROM temp.bench_vocab ORDER BY doc DESC LIMIT 500")]
    kept = [t for t in terms if t.isalpha() and t not in STOPWORDS and parse_query(t).phrases]
    return [(t, False) for t in kept[:n]]


def synthetic(quick: bool, nq: int) -> dict[str, Any]:
    n_mem, n_chunks = (10_000, 20_000) if quick else (100_000, 200_000)
    path, _, chunks, _ = search_db(n_mem, n_chunks)
    store = Store(path, embedder=Precomputed())
    words = Words()
    rng = np.random.default_rng(5)
    _, threads = chunks.queries(nq, seed=3)
    questions = [words.query(chunks, int(h), rng) for h in threads]
    messages = int(store.con.execute("SELECT count(*) FROM messages").fetchone()[0])  # type: ignore[index]
    out = {
        "rows": {"memories": n_mem, "chunks": n_chunks, "messages": messages},
        "questions": run_set(store, [(q, False) for q in questions]),
        "common_words": run_set(store, common_words(store, 30)),
        "typing": run_set(store, typing(questions, 40)),
        "held_bytes": store.keyword_memory_bytes(),
        "lengths_read_ms": lengths_read_ms(store),
    }
    store.close()
    return out


def real_text(copies: int) -> dict[str, Any]:
    data = ROOT / "bench" / "eval" / "longmem"
    threads = [json.loads(line) for line in (data / "conversations.jsonl").read_text("utf-8").splitlines()]
    questions = [
        str(json.loads(line)["query"]) for line in (data / "questions.jsonl").read_text("utf-8").splitlines()
    ]
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "chat.db", embedder=None)
        for c in range(copies):
            for t in threads:
                msgs = [MessageIn(m["role"], m["content"], f"{m['id']}-{c}") for m in t["messages"]]
                store.write_thread(ThreadIn("eval", f"{t['id']}-{c}", t.get("title", ""), msgs))
        turns = int(store.con.execute("SELECT count(*) FROM messages").fetchone()[0])  # type: ignore[index]
        out = {
            "copies": copies,
            "turns": turns,
            "questions": run_set(store, [(q, False) for q in questions]),
            "typing": run_set(store, typing(questions, 120)),
            "held_bytes": store.keyword_memory_bytes(),
            "lengths_read_ms": lengths_read_ms(store),
        }
        store.close()
    return out


def _line(name: str, s: dict[str, Any]) -> str:
    f, h, c = s["fts5"], s["held"], s["held_cold"]
    return (
        f"{name} p50 {h['p50_ms']:.1f} ms (cold {c['p50_ms']:.1f}) vs FTS5 {f['p50_ms']:.1f} = "
        f"{s['held_vs_fts5']['p50']:.2f}x (cold {s['held_cold_vs_fts5']['p50']:.2f}x), p95 "
        f"{s['held_vs_fts5']['p95']:.2f}x, worst {s['max_ms']['held_cold']:.0f} vs {s['max_ms']['fts5']:.0f} ms, "
        f"identical {s['identical_hits']}/{s['queries']}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="the 10k + 20k archive, 50 questions, 2 copies")
    ap.add_argument("--copies", type=int, help="times the longmem conversations are written (default 10)")
    a = ap.parse_args()
    t0 = time.perf_counter()
    syn = synthetic(a.quick, 50 if a.quick else 200)
    real = real_text(a.copies or (2 if a.quick else 10))
    every = [syn["questions"], syn["common_words"], syn["typing"], real["questions"], real["typing"]]
    targets = {
        "identical_hits_everywhere": all(s["identical_hits"] == s["queries"] for s in every),
        "held_p50_le_fts5_p50_everywhere": all(s["held_vs_fts5"]["p50"] <= 1.0 for s in every),
        "held_cold_p95_le_fts5_p95_everywhere": all(s["held_cold_vs_fts5"]["p95"] <= 1.0 for s in every),
    }
    missed = [k for k, v in targets.items() if not v]
    emit(
        "keyword_held",
        {
            "clock": "cpu",
            "synthetic": syn,
            "real_text": real,
            "targets": targets,
            "seconds": round(time.perf_counter() - t0, 1),
        },
        f"keyword half, held vs FTS5 ({syn['rows']['messages'] // 1000}k messages): "
        + "; ".join(
            [
                _line("questions", syn["questions"]),
                _line("common words", syn["common_words"]),
                _line("typing", syn["typing"]),
            ]
        )
        + f"; longmem x{real['copies']} ({real['turns'] // 1000}k turns): "
        + "; ".join([_line("questions", real["questions"]), _line("typing", real["typing"])])
        + f"; row lengths read in {syn['lengths_read_ms']:.0f} ms CPU once a session (and after a write); targets {'met' if not missed else 'MISSED: ' + ', '.join(missed)}",
    )


if __name__ == "__main__":
    main()
