"""The stemmed keyword index against the unstemmed one it replaced: size, build time, query time (JSON).

    .venv/bin/python bench/keyword_index.py [--copies 10]

Indexes the evaluation's 4,047 turns (bench/eval/longmem, `--copies` times over, so about 40,000 rows)
twice, in two files, with the tokenizer before issue 14 (`unicode61 …`) and today's (`porter unicode61 …`),
through store.text.index_text as the store does, then runs the evaluation's 613 questions through
store.search.keyword.keyword_hits (FTS5 candidates + our own BM25) against each. Same process, same rows,
alternating, so the ratio is what counts on a noisy machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from store.db import connect  # noqa: E402
from store.search.engine import Filters  # noqa: E402
from store.search.keyword import keyword_hits  # noqa: E402
from store.search.query import parse_query  # noqa: E402
from store.text import FTS_TOKENIZE, rebuild_fts  # noqa: E402

OLD = "unicode61 remove_diacritics 2 categories 'L* N* Co So'"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--copies", type=int, default=10)
    a = ap.parse_args()
    data = ROOT / "bench" / "eval" / "longmem"
    conversations = (data / "conversations.jsonl").read_text(encoding="utf-8").splitlines()
    texts = [m["content"] for line in conversations for m in json.loads(line)["messages"]]
    queries = [
        json.loads(line)["query"]
        for line in (data / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    out: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        cons = {}
        for name, tokenize in (("unstemmed", OLD), ("porter", FTS_TOKENIZE)):
            path = Path(tmp) / f"{name}.db"
            con = connect(path)
            with con:
                con.execute(
                    "INSERT INTO threads(id, source, external_id, created_at, updated_at) VALUES (1, 'b', 'b', 0, 0)"
                )
                con.executemany(
                    "INSERT INTO messages(thread_id, seq, role, content) VALUES (1, ?, 'user', ?)",
                    [(i, t) for i, t in enumerate(texts * a.copies)],
                )
            t = time.perf_counter()
            with con:
                rebuild_fts(con, tokenize)
            build = time.perf_counter() - t
            con.execute("VACUUM")
            pages = sum(
                int(r[1])
                for r in con.execute(
                    "SELECT name, sum(pgsize) FROM dbstat WHERE name LIKE 'fts_messages%' GROUP BY name"
                )
            )
            cons[name] = con
            out[name] = {
                "rows": len(texts) * a.copies,
                "index_bytes": pages,
                "build_seconds": round(build, 2),
            }
        parsed = [parse_query(q) for q in queries]
        times: dict[str, list[float]] = {n: [] for n in cons}
        for _ in range(3):
            for name, con in cons.items():
                t = time.perf_counter()
                for p in parsed:
                    keyword_hits(con, p, "message", Filters(), 100, k1=1.2, b=0.1)
                times[name].append(time.perf_counter() - t)
        plain = []  # the old path: FTS5's own bm25, best 100, no re-scoring (on the porter index)
        for _ in range(3):
            t = time.perf_counter()
            for p in parsed:
                if p.expression:
                    cons["porter"].execute(
                        "SELECT rowid, rank FROM fts_messages WHERE fts_messages MATCH ? ORDER BY rank LIMIT 100",
                        (p.expression,),
                    ).fetchall()
            plain.append(time.perf_counter() - t)
        out["porter"]["ms_per_query_fts5_bm25_only"] = round(1000 * min(plain) / len(parsed), 2)
        for name in cons:
            out[name]["ms_per_query"] = round(1000 * min(times[name]) / len(parsed), 2)
            cons[name].close()
    out["ratio"] = {
        "index_bytes": round(out["porter"]["index_bytes"] / out["unstemmed"]["index_bytes"], 3),
        "ms_per_query": round(out["porter"]["ms_per_query"] / out["unstemmed"]["ms_per_query"], 3),
    }
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
