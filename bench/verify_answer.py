"""Answer VERIFICATION signals for the answer floor, measured on the evaluation's tuning half (prints JSON).

    .venv/bin/python bench/verify_answer.py [--out FILE] [--tops 1,3,5,10] [--set NAME] [--tune-only]

The answer floor's retrieval signals (store.search.answer, fitted by bench/fit_answer.py) barely separate
near-topic no-answer questions ("what is my cat called" in an archive about a dog) from answerable ones:
every retrieval score says "close". This script asks instead whether each content word of the query is
*supported* by the best results, with the one model we ship (all-MiniLM-L6-v2, int8 ONNX), three ways:

1. counterfactual ablation: embed the query with each content word removed in turn and compare its cosine
   with the top results' stored vectors to the full query's (a supported word's removal lowers it; an
   unsupported one leaves it flat or raises it). No passage is re-encoded.
2. late interaction: the model's token vectors (before mean pooling) for the query and the top results;
   per query content word, the best cosine over the results' tokens (ColBERT-style MaxSim; the model was
   not trained for it).
3. word presence: per content word, whether a top result contains it (the keyword index's own stemming),
   or a word whose single-word embedding is close to it.

Each question's candidate lists and ranking are bench/fit_answer.py's (same cached databases, shipped
ranking and per-hit floor). Then, on TUNE only: each signal's AUC (answerable vs no-answer, over the
questions the per-hit floor lets through), small sets (with and without today's retrieval signals)
scored leave-one-archive-out, the chosen set refitted, its threshold chosen under the issue's cost rule.
The test half is scored only with what tune chose, and the whole curve is printed for both halves beside
today's model ("+agreement+uncovered", refitted in the same run). Cost per search is timed here
(median CPU ms over the tune questions).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import re
import statistics
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from fit_answer import (  # noqa: E402
    SETS,
    Row,
    auc,
    best_point,
    fit,
    loco,
    matrix,
    point,
    prob,
    ranked_for,
    rows_for,
    weights_of,
)
from tune_search import KINDS, NOFILTER, Bench  # noqa: E402

from embeddings.onnx_embedder import make_embedder  # noqa: E402
from embeddings.onnx_export import ensure_onnx  # noqa: E402
from store.search.answer import TOP  # noqa: E402
from store.search.engine import DEPTH  # noqa: E402
from store.search.keyword import TABLES  # noqa: E402
from store.search.query import CJK1, CJK_FUNCTION_CHARS, STOPWORDS, all_phrases, parse_query  # noqa: E402
from store.search.rank import Fusion, order  # noqa: E402
from store.search.terms import document_frequencies  # noqa: E402
from store.vectors.floats import decode  # noqa: E402

TODAY = "+agreement+uncovered"


# -- the model's token vectors --------------------------------------------------------------------------


class Tokens:
    """The int8 ONNX model's token vectors (before pooling), one text per call, unit length."""

    def __init__(self, embedder: Any) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        self.session = ort.InferenceSession(
            str(ensure_onnx(embedder.path, precision="int8")), opts, providers=["CPUExecutionProvider"]
        )
        self.tok = Tokenizer.from_file(str(embedder.path / "tokenizer.json"))
        self.tok.enable_truncation(max_length=embedder.max_tokens)
        self.tok.no_padding()

    def encode(self, text: str) -> tuple[np.ndarray, list[tuple[int, int]]]:
        """(unit token vectors without [CLS]/[SEP], their character offsets)."""
        e = self.tok.encode(text)
        ids = np.array([e.ids], dtype=np.int64)
        mask = np.ones_like(ids)
        (out,) = self.session.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        )
        vecs = out[0, 1:-1]
        vecs = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-9)
        return vecs.astype(np.float32), list(e.offsets[1:-1])


# -- content words ---------------------------------------------------------------------------------------


def words_of(phrases: tuple[str, ...]) -> list[str]:
    """The query's content words as the search reads them (stop words already dropped); a CJK pair
    "a b" is the two characters."""
    out = [p.replace(" ", "") if CJK1.match(p[:1]) else p.strip('?!.,;:"()') for p in phrases]
    return [w or p for w, p in zip(out, phrases, strict=True)]


def without(text: str, word: str) -> str:
    """`text` with every occurrence of `word` (and an English possessive after it) removed."""
    if CJK1.match(word[:1]):
        return text.replace(word, "")
    pat = re.compile(r"(?<!\w)" + re.escape(word) + r"(?:['\u2019]s)?(?!\w)", re.IGNORECASE)
    return re.sub(r"\s+", " ", pat.sub("", text)).strip()


def idfs(con: Any, phrases: tuple[str, ...]) -> list[float]:
    table = TABLES["message"]
    n = int(con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]) or 1
    dfs = document_frequencies(con, table, phrases)
    return [math.log((n - df + 0.5) / (df + 0.5) + 1.0) for df in dfs]


def spans_of(text: str, word: str) -> list[tuple[int, int]]:
    if CJK1.match(word[:1]):
        return [(m.start(), m.end()) for m in re.finditer(re.escape(word), text)]
    return [(m.start(), m.end()) for m in re.finditer(r"(?<!\w)" + re.escape(word), text, re.IGNORECASE)]


# -- the signals -----------------------------------------------------------------------------------------


@dataclass
class Timing:
    ablation: list[float]
    late: list[float]
    presence: list[float]
    embeds: list[int]  # query embeddings the ablation ran
    synonym_embeds: list[int]  # single-word embeddings a search would need (words of the query and results)


WORD_VECS: dict[str, np.ndarray] = {}  # single-word embeddings, cached across questions (bench only)


def word_vec(embedder: Any, word: str) -> np.ndarray:
    if word not in WORD_VECS:
        WORD_VECS[word] = embedder.embed_query(word)
    return WORD_VECS[word]


def passage_words(text: str) -> list[str]:
    """A passage's content words, as the query's are read (CJK as pairs), casefolded."""
    out = []
    for p in all_phrases(text):
        if CJK1.match(p[:1]):
            w = p.replace(" ", "")
            if not all(c in CJK_FUNCTION_CHARS for c in w):
                out.append(w)
        else:
            w = p.casefold().strip("?!.,;:\"()'")
            if w and w not in STOPWORDS and not w.isdigit():
                out.append(w)
    return list(dict.fromkeys(out))


def stored_vectors(con: Any, ids: list[int]) -> np.ndarray:
    rows = {
        int(m): decode(b)
        for m, b in con.execute(
            f"SELECT message_id, embedding FROM vec_chunks WHERE message_id IN ({','.join('?' * len(ids))})",
            ids,
        )
    }
    mat = np.stack([rows[i] for i in ids])
    return mat / np.linalg.norm(mat, axis=1, keepdims=True)


def window(con: Any, mid: int) -> list[int]:
    """The message and the turns right before and after it in its thread."""
    return [
        int(r[0])
        for r in con.execute(
            "SELECT n.id FROM messages m JOIN messages n ON n.thread_id = m.thread_id "
            "AND n.seq BETWEEN m.seq - 1 AND m.seq + 1 WHERE m.id = ?",
            (mid,),
        )
    ]


def ablation(
    q_text: str, words: list[str], w_idf: np.ndarray, ids: list[int], con: Any, embedder: Any
) -> dict[str, float]:
    """1. Counterfactual ablation against the stored vectors of the top results (no passage re-encoded)."""
    vecs = stored_vectors(con, ids)
    texts = [q_text, *(without(q_text, w) or "?" for w in words)]
    qv = np.stack([embedder.embed_query(t) for t in texts])
    drops = (qv[0] @ vecs.T)[None, :] - qv[1:] @ vecs.T  # (words, k): > 0 when removing the word lowers it
    rel = w_idf[:, None] / (w_idf.mean() or 1.0)
    best = drops.max(axis=1)  # per word, its best support among the top k
    # the same passage must support every word: per passage its worst word, then the best passage; or its
    # window (the passage and the turns right before and after it: an answer spans turns)
    win_ids = [window(con, i) for i in ids]
    flat = sorted({j for w in win_ids for j in w})
    wv = stored_vectors(con, flat)
    wdrops = (qv[0] @ wv.T)[None, :] - qv[1:] @ wv.T
    col = {j: n for n, j in enumerate(flat)}
    per_win = np.stack([wdrops[:, [col[j] for j in w]].max(axis=1) for w in win_ids], axis=1)
    return {
        "abl_min": float(best.min()),
        "abl_idfmin": float((best * rel[:, 0]).min()),
        "abl_mean": float(best.mean()),
        "abl_joint": float(drops.min(axis=0).max()),
        "abl_joint_idf": float((drops * rel).min(axis=0).max()),
        "abl_win_joint": float(per_win.min(axis=0).max()),
        "abl_win_joint_idf": float((per_win * rel).min(axis=0).max()),
    }


def late(
    q_text: str, words: list[str], w_idf: np.ndarray, texts: list[str], tokens: Tokens
) -> dict[str, float]:
    """2. Late interaction: per query word (its word pieces), the best token cosine in each top result."""
    qtok, qoff = tokens.encode(q_text)
    ptoks = [tokens.encode(t)[0] for t in texts]
    per_pass: list[list[float]] = []
    kept: list[float] = []
    for w, idf in zip(words, w_idf, strict=True):
        sp = spans_of(q_text, w)
        rows = [i for i, (a, b) in enumerate(qoff) if any(a < e and b > s for s, e in sp)]
        if rows:
            per_pass.append(
                [float((qtok[rows] @ pt.T).max(axis=1).mean()) if len(pt) else 0.0 for pt in ptoks]
            )
            kept.append(idf)
    if not per_pass:
        return {}
    arr = np.array(per_pass)  # (words, k)
    rel = np.array(kept)[:, None] / (np.mean(kept) or 1.0)
    best = arr.max(axis=1)
    return {
        "li_min": float(best.min()),
        "li_idfmin": float((best * rel[:, 0]).min()),
        "li_mean": float(best.mean()),
        "li_joint": float(arr.min(axis=0).max()),
        "li_joint_idf": float((arr * rel).min(axis=0).max()),
    }


def synonyms(words: list[str], texts: list[str], embedder: Any) -> tuple[dict[str, float], int]:
    """3b. Near-synonyms: per query word, its best single-word cosine to a content word of each result
    (an exact word scores 1). Returns the signals and how many single-word embeddings a search needs."""
    qw = [w.casefold() for w in words]
    pw = [passage_words(t) for t in texts]
    qm = np.stack([word_vec(embedder, w) for w in qw])
    syn = np.array(
        [
            (qm @ np.stack([word_vec(embedder, w) for w in words_j]).T).max(axis=1)
            if words_j
            else np.zeros(len(qw))
            for words_j in pw
        ]
    ).T  # (words, k)
    out = {
        "syn_min": float(syn.max(axis=1).min()),
        "syn_joint": float(syn.min(axis=0).max()),
        "syn_unsup6": float((syn < 0.6).mean(axis=0).min()),  # 0.6: the best of 0.5/0.6/0.7 on tune
    }
    return out, len(qw) + sum(len(x) for x in pw)


def presence(phrases: tuple[str, ...], w_idf: np.ndarray, ids: list[int], con: Any) -> dict[str, float]:
    """3. The share of the query's words (plain and IDF-weighted) that no top result contains."""
    table = TABLES["message"]
    missing = np.zeros(len(phrases))
    for n, p in enumerate(phrases):
        expr = '"' + p.replace('"', '""') + '"'
        hit = con.execute(
            f"SELECT 1 FROM {table} WHERE {table} MATCH ? AND rowid IN (SELECT value FROM json_each(?)) LIMIT 1",
            (expr, json.dumps(ids)),
        ).fetchone()
        missing[n] = not hit
    return {
        "miss_share": float(missing.mean()),
        "miss_idf": float((missing * w_idf).sum() / (w_idf.sum() or 1.0)),
    }


def verify(
    q_text: str,
    phrases: tuple[str, ...],
    top_ids: list[int],
    con: Any,
    embedder: Any,
    tokens: Tokens,
    k: int,
    timing: Timing,
) -> dict[str, float]:
    """Every verification signal of one query against its `k` best results (timed per family)."""
    words = words_of(phrases)
    if not words or not top_ids:
        return {}
    ids = top_ids[:k]
    out: dict[str, float] = {}
    t0 = time.process_time()
    w_idf = np.array(idfs(con, phrases))
    out |= ablation(q_text, words, w_idf, ids, con, embedder)
    timing.ablation.append(time.process_time() - t0)
    timing.embeds.append(len(words) + 1)
    t0 = time.process_time()
    texts = [str(con.execute("SELECT content FROM messages WHERE id = ?", (i,)).fetchone()[0]) for i in ids]
    out |= late(q_text, words, w_idf, texts, tokens)
    timing.late.append(time.process_time() - t0)
    syn, n_embeds = synonyms(words, texts, embedder)
    out |= syn
    timing.synonym_embeds.append(n_embeds)
    t0 = time.process_time()
    out |= presence(phrases, w_idf, ids, con)
    timing.presence.append(time.process_time() - t0)
    return out


# -- the study -------------------------------------------------------------------------------------------


def add_signals(bench: Bench, fusion: Fusion, rows: list[Row], nonsense: list[Row], k: int) -> Timing:
    """The verification signals of every question (and nonsense query) the per-hit floor lets through."""
    embedder = make_embedder()
    embedder.load()
    tokens = Tokens(embedder)
    timing = Timing([], [], [], [], [])
    for q, row in zip(bench.qs, rows, strict=True):
        if not q.parsed.phrases or not row.returned:
            continue
        cid = q.q["conversation"]
        ranked, _ = ranked_for(q.kw[(fusion.b, fusion.k1)], q.sem, q.parsed, fusion, bench.context[cid])
        top = [r.key[1] for r in order(ranked)[:TOP] if r.key[0] == "message"]
        row.sig.update(
            verify(q.q["query"], q.parsed.phrases, top, bench.stores[cid].con, embedder, tokens, k, timing)
        )
    pairs = itertools.product(bench.nonsense, bench.stores.items())
    for ((text, vec), (cid, store)), row in zip(pairs, nonsense, strict=True):
        parsed = parse_query(text)
        if not row.returned:
            continue
        kw = store.keyword_hits(parsed, KINDS, NOFILTER, DEPTH, fusion)
        sem = [(key, c) for key, c, _ in store.semantic_candidates(vec, KINDS, NOFILTER, DEPTH)]
        ranked, _ = ranked_for(kw, sem, parsed, fusion, bench.context[cid])
        top = [r.key[1] for r in order(ranked)[:TOP] if r.key[0] == "message"]
        row.sig.update(
            verify(text, parsed.phrases, top, store.con, embedder, tokens, k, Timing([], [], [], [], []))
        )
    return timing


ABLATION_ALL = [
    "abl_min",
    "abl_idfmin",
    "abl_mean",
    "abl_joint",
    "abl_joint_idf",
    "abl_win_joint",
    "abl_win_joint_idf",
]
LATE_ALL = ["li_min", "li_idfmin", "li_mean", "li_joint", "li_joint_idf"]
NEW = [*ABLATION_ALL, *LATE_ALL, "syn_min", "syn_joint", "syn_unsup6", "miss_share", "miss_idf"]
ABLATION = ["abl_joint", "abl_joint_idf", "abl_min", "abl_mean"]
LATE = ["li_joint", "li_joint_idf", "li_min", "li_mean"]
SYNONYMS = ["syn_joint", "syn_min", "syn_unsup6"]
PRESENCE = ["miss_share", "miss_idf"]
SIGNAL_SETS = {
    "today": SETS[TODAY],
    "ablation": ABLATION,
    "late": LATE,
    "synonyms": SYNONYMS,
    "presence": PRESENCE,
    "verify": [*ABLATION, *LATE, *SYNONYMS, *PRESENCE],
    "today+ablation": [*SETS[TODAY], *ABLATION],
    "today+late": [*SETS[TODAY], *LATE],
    "today+verify": [*SETS[TODAY], *ABLATION, *LATE, *SYNONYMS, *PRESENCE],
}
KIND_SIGNALS = [
    "conc",
    "kwz",
    "uncovered",
    "abl_joint",
    "abl_min",
    "li_joint",
    "li_min",
    "syn_joint",
    "syn_min",
]


def ms(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    return {
        "median": round(statistics.median(values) * 1000, 2),
        "min": round(min(values) * 1000, 2),
        "max": round(max(values) * 1000, 2),
    }


def tune_study(rows: list[Row], nonsense: list[Row], timing: Timing, k: int) -> dict[str, Any]:
    """Signal AUCs (overall and per answerable kind against the no-answer questions) and the sets
    leave-one-archive-out, all on tune, for one `k`."""
    tune = [r for r in rows if r.split == "tune"]
    ret = [r for r in tune if r.returned]
    y_ret = np.array([1.0 * r.answerable for r in ret])
    none = [r for r in ret if not r.answerable]
    per_embed = statistics.median(t / n for t, n in zip(timing.ablation, timing.embeds, strict=True))
    n_syn = statistics.median(timing.synonym_embeds)
    sets = {}
    for name, feats in SIGNAL_SETS.items():
        p = loco(tune, feats, 1.0)
        sets[name] = {"loco_auc": auc(p[[r.returned for r in tune]], y_ret)} | best_point(
            tune, p, None, nonsense
        )
    return {
        "top": k,
        "questions_tune_returned": len(ret),
        "no_answer_tune_returned": len(none),
        "cost_cpu_ms": {
            "ablation": ms(timing.ablation),
            "late_interaction": ms(timing.late),
            "presence": ms(timing.presence),
            "one_query_embedding": round(per_embed * 1000, 2),
            "synonyms_single_word_embeddings": n_syn,
            "synonyms_uncached_estimate": round(n_syn * per_embed * 1000, 1),
        },
        "signal_auc_tune": {n: auc(matrix(ret, [n])[:, 0], y_ret) for n in [*SETS["all"], *NEW]},
        "signal_auc_tune_by_kind": {
            kind: {
                n: auc(matrix(sel + none, [n])[:, 0], np.array([1.0] * len(sel) + [0.0] * len(none)))
                for n in KIND_SIGNALS
            }
            for kind in sorted({r.kind for r in ret if r.answerable})
            for sel in [[r for r in ret if r.kind == kind]]
        },
        "sets_loco_tune": sets,
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    fusion = Fusion()
    bench = Bench(ROOT / "bench" / "eval" / "longmem", [fusion.b], [fusion.k1])
    base, base_nonsense = rows_for(bench, fusion)
    per_k: dict[int, tuple[list[Row], list[Row]]] = {}
    studies = []
    for k in (int(x) for x in args.tops.split(",")):
        rows = [replace(r, sig=dict(r.sig)) for r in base]
        nonsense = [replace(r, sig=dict(r.sig)) for r in base_nonsense]
        timing = add_signals(bench, fusion, rows, nonsense, k)
        per_k[k] = rows, nonsense
        studies.append(tune_study(rows, nonsense, timing, k))
    # the (k, set) with the best leave-one-archive-out AUC on tune
    best = max(
        ((s, n) for s in studies for n in SIGNAL_SETS if n != "today" and (not args.set or n == args.set)),
        key=lambda p: p[0]["sets_loco_tune"][p[1]]["loco_auc"],
    )
    out: dict[str, Any] = {"studies": studies, "chosen": {"top": best[0]["top"], "set": best[1]}}
    if not args.tune_only:
        rows, nonsense = per_k[best[0]["top"]]
        tune = [r for r in rows if r.split == "tune"]
        test = [r for r in rows if r.split == "test"]
        out["curves"] = {n: curve(tune, test, nonsense, SIGNAL_SETS[n]) for n in ("today", best[1])}
    for store in bench.stores.values():
        store.close()
    return out


def curve(tune: list[Row], test: list[Row], nonsense: list[Row], feats: list[str]) -> dict[str, Any]:
    """The set refitted on all of tune; its tune pick (the issue's cost rule) and the curve on both halves."""
    ret = [r for r in tune if r.returned]
    bias, coef = fit(matrix(ret, feats), np.array([1.0 * r.answerable for r in ret]), weights_of(ret), 1.0)
    p_tune, p_test = prob(bias, coef, matrix(tune, feats)), prob(bias, coef, matrix(test, feats))
    p_non = prob(bias, coef, matrix(nonsense, feats))
    pick = best_point(tune, p_tune, p_non, nonsense)
    pts = []
    for th in sorted({0.0, *np.linspace(0.1, 0.9, 17).round(3).tolist(), pick["threshold"]}):
        a, b = point(tune, p_tune, th), point(test, p_test, th)
        pts.append(
            {
                "answer_floor": th,
                "tune_fh": a["false_hit_rate"],
                "tune_r10": a["recall@10_above_floor"],
                "test_fh": b["false_hit_rate"],
                "test_r10": b["recall@10_above_floor"],
                "nonsense_answered": int(
                    sum(1 for r, q in zip(nonsense, p_non, strict=True) if r.returned and q >= th)
                ),
            }
        )
    return {
        "model": {
            "bias": round(bias, 6),
            "weights": {n: round(float(c), 6) for n, c in zip(feats, coef, strict=True)},
        },
        "test_auc": auc(
            p_test[[r.returned for r in test]], np.array([1.0 * r.answerable for r in test if r.returned])
        ),
        "tune_pick": pick,
        "test_at_pick": point(test, p_test, pick["threshold"]),
        "curve": pts,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out")
    parser.add_argument(
        "--tops", default="1,3,5,10", help="how many of the best results verify the query (tried)"
    )
    parser.add_argument("--tune-only", action="store_true", help="signals and sets on tune; no curves")
    parser.add_argument("--set", help="the signal set to curve (default: best leave-one-archive-out AUC)")
    args = parser.parse_args(argv)
    report = run(args)
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
