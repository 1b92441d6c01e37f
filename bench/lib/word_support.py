"""The per-question signals of bench/tune/verify_answer.py: does each content word of a query have support in
its best results? (Bench only: the answer floor ships none of these; bench/tune/verify_answer.py says why.)

Three families, with the one model we ship (all-MiniLM-L6-v2, int8 ONNX, one text per call):
counterfactual ablation (the query re-embedded without each content word, against the results' stored
vectors), late interaction (the model's token vectors before pooling, MaxSim per query word) and word
presence (the keyword index's own stemming; or a single-word embedding close to the word).
"""

from __future__ import annotations

import json
import math
import re
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from embeddings.onnx_export import ensure_onnx
from store.search.keyword import TABLES
from store.search.query import CJK1, CJK_FUNCTION_CHARS, STOPWORDS, all_phrases
from store.search.terms import document_frequencies
from store.vectors.floats import decode

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
