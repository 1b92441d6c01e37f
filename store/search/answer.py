"""Does the archive answer this query at all? A query-level decision on top of the per-hit floor.

Why: the per-hit floor (store.search.rank `evidence`) stops queries nothing is about ("quantum
chromodynamics lattice"), but not near-topic questions the archive has no answer to ("what is my cat
called" in an archive with a dog): their best cosine and keyword coverage look like an answerable
question's. This module turns a search's candidate lists into a handful of generic signals (nothing
about any wording: the best cosine and its margin over the tenth, keyword coverage, how far the best BM25
stands out, how many of the top ten both retrievers found, how many share the best one's thread, the
share of query words the archive uses but no top result contains, the share it never uses), and a
logistic model over them, fitted on the evaluation's tuning half by bench/tune/fit_answer.py, says how likely
it is that the list holds an answer. Below `answer_floor` the results are not answers: the search returns
them under a separate "weak" label (CLI and TUI show them as weak; MCP never sends them) or not at all.

Measured (docs/guide/search.md has the curve on both halves): together the signals barely separate near-topic
no-answer questions from answerable ones (AUC about 0.60, leave-one-archive-out on tune); no threshold
gets the no-answer false-hit rate near 10% without losing half the recall. So `answer_floor` ships at 0
(off); the machinery is there for a user who prefers "no good match" (with the weak list) more often.

Cheap on purpose: the signals are arithmetic over lists the search already holds (about 35 µs), and the
two that read the index (`uncovered_share`, `absent_share`: an FTS5 lookup or two per query word, each
stopping at the first row) run only when the answer floor is on and the model uses them.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import apsw

from store.db import id_table
from store.search.keyword import TABLES, Key, KeywordHit
from store.search.query import CJK1, ParsedQuery
from store.search.rank import KEYWORD, SEMANTIC, Context, Fusion, Ranked, cjk_lean

TOP = 10  # the results a user (or a model) reads: the signals look at these


@dataclass(frozen=True, slots=True)
class Model:
    """A logistic model: p = 1 / (1 + exp(-(bias + sum of weight x signal))), in the signals' own units."""

    bias: float
    weights: Mapping[str, float]

    def probability(self, signals: Mapping[str, float]) -> float:
        z = self.bias + sum(w * signals.get(name, 0.0) for name, w in self.weights.items())
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


# Fitted on the tuning half by bench/tune/fit_answer.py (`--set "+agreement+uncovered"`, the set with the best
# leave-one-archive-out AUC on tune; `absent` and the query's CJK share added nothing). Its AUC is only
# about 0.60: on near-topic no-answer questions it is barely better than chance, so the shipped
# `answer_floor` is 0 (off) and this model only acts when a user raises it (docs/guide/search.md: the curve).
MODEL = Model(
    bias=-2.700627,
    weights={
        "cos1": 1.776507,
        "cov1": -0.065298,
        "cos_gap10": 2.891126,
        "kwz": 0.264771,
        "both10": -0.272144,
        "conc": 2.888802,
        "uncovered": 1.858817,
    },
)


def _countable(phrase: str) -> bool:
    """A CJK pair is no word when it is found nowhere (two characters across a word boundary)."""
    return not CJK1.match(phrase[:1])


def absent_share(con: apsw.Connection, parsed: ParsedQuery, kinds: Sequence[str]) -> float:
    """The share of the query's (non-CJK) words that no row of the searched kinds contains at all: a word
    the archive never uses is a strong hint that the archive is not about the question ("marathon" in an
    archive without one). The word being typed (a prefix) is not counted."""
    words = [p for p in parsed.phrases if _countable(p) and p != parsed.prefix]
    if not words:
        return 0.0
    absent = 0
    for phrase in words:
        expr = '"' + phrase.replace('"', '""') + '"'
        if not any(
            con.execute(f"SELECT 1 FROM {TABLES[k]} WHERE {TABLES[k]} MATCH ? LIMIT 1", (expr,)).fetchone()
            for k in kinds
        ):
            absent += 1
    return absent / len(words)


def uncovered_share(con: apsw.Connection, parsed: ParsedQuery, top: Sequence[Ranked]) -> float:
    """The share of the query's words that the archive uses but none of the top results contains: a
    question about something the archive never says ("what is Freya's job") often has its entity in the
    results and its attribute nowhere among them. One FTS5 lookup per word and kind, each stopping early."""
    ids: dict[str, list[int]] = {}
    for r in top[:TOP]:
        ids.setdefault(r.key[0], []).append(r.key[1])
    words = [p for p in parsed.phrases if p != parsed.prefix]
    if not words or not ids:
        return 0.0
    listed_ids = {k: id_table(keys) for k, keys in ids.items()}
    used = uncovered = 0
    for phrase in words:
        expr = '"' + phrase.replace('"', '""') + '"'
        if not any(
            con.execute(f"SELECT 1 FROM {TABLES[k]} WHERE {TABLES[k]} MATCH ? LIMIT 1", (expr,)).fetchone()
            for k in ids
        ):
            continue
        used += 1
        if not any(
            con.execute(
                f"SELECT 1 FROM {TABLES[k]} WHERE {TABLES[k]} MATCH ? AND rowid IN (SELECT value FROM {listed}) "
                "LIMIT 1",
                (expr, param),
            ).fetchone()
            for k, (listed, param) in listed_ids.items()
        ):
            uncovered += 1
    return uncovered / used if used else 0.0


def sessions(context: Context) -> Mapping[int, Hashable]:
    """Each message's session (store.search.conversation), or its thread when the context has no sessions:
    the concentration signal counts the top results that share the best one's session. Per thread, it
    was 1.0 for every question in an archive that is one long thread (issue 30)."""
    return context.hood.session_of if context.hood is not None else context.thread_of


def signals(
    keyword: Sequence[KeywordHit],
    semantic: Sequence[tuple[Key, float]],
    top: Sequence[Ranked],
    thread_of: Mapping[int, Hashable],
    *,
    absent: float,
    lean: float,
    uncovered: float = 0.0,
) -> dict[str, float]:
    """The query-level signals (each 0 when its retriever found nothing)."""
    cos = sorted((c for _, c in semantic), reverse=True)
    bm = [h.bm25 for h in keyword]
    out: dict[str, float] = {"absent": absent, "lean": lean, "uncovered": uncovered}
    out["cos1"] = cos[0] if cos else 0.0
    out["cos_gap10"] = cos[0] - cos[min(len(cos), TOP) - 1] if cos else 0.0
    out["cos_gap_mean"] = cos[0] - sum(cos) / len(cos) if cos else 0.0
    out["cov1"] = max((h.coverage for h in keyword), default=0.0)
    if len(bm) >= 3:
        mean = sum(bm) / len(bm)
        std = math.sqrt(sum((v - mean) ** 2 for v in bm) / len(bm)) or 1.0
        out["kwz"] = (max(bm) - mean) / std
    else:
        out["kwz"] = 0.0
    head = list(top[:TOP])
    out["cov_top1"] = (head[0].coverage or 0.0) if head else 0.0
    out["cos_top1"] = (head[0].cosine or 0.0) if head else 0.0
    both = [r for r in head if KEYWORD in r.matched and SEMANTIC in r.matched]
    out["both10"] = len(both) / TOP
    out["both1"] = 1.0 if head and head[0] in both else 0.0
    threads = [thread_of.get(r.key[1]) if r.key[0] == "message" else None for r in head]
    first = threads[0] if threads else None
    out["conc"] = sum(1 for t in threads if t is not None and t == first) / TOP if first is not None else 0.0
    out["cos1_en"] = out["cos1"] * (1.0 - lean)
    return out


def answers(
    con: apsw.Connection,
    keyword: Sequence[KeywordHit],
    semantic: Sequence[tuple[Key, float, object]],
    kept: Sequence[Ranked],
    context: Context,
    parsed: ParsedQuery,
    kinds: Sequence[str],
    fusion: Fusion,
) -> bool:
    """Whether the ranked results that passed the per-hit floor (`kept`, best first) answer the query:
    the model's probability is at least `fusion.answer_floor` (0 turns the check off)."""
    if fusion.answer_floor <= 0 or not kept:
        return True
    found = signals(
        keyword,
        [(key, cos) for key, cos, _ in semantic],
        kept,
        sessions(context),
        absent=absent_share(con, parsed, kinds) if "absent" in MODEL.weights else 0.0,
        lean=cjk_lean(parsed, fusion),
        uncovered=uncovered_share(con, parsed, kept) if "uncovered" in MODEL.weights else 0.0,
    )
    return MODEL.probability(found) >= fusion.answer_floor


__all__ = ["MODEL", "TOP", "Model", "absent_share", "answers", "sessions", "signals", "uncovered_share"]
