"""Incremental, extractive thread summaries, offline (no LLM).

Why extractive: with no language model we cannot write new sentences, but we can choose the ones that
carry the thread. A sentence is worth keeping when it is *central* (close to the centroid of the
part's sentence embeddings: it is about what the conversation is about) and *says something that
lasts*: a decision, a preference, an open task, a named thing. Maximal marginal relevance then picks
central sentences that do not repeat each other until the token cap is spent. Without a model, TF-IDF
vectors stand in for embeddings (same algorithm, weaker notion of similarity), so summaries never fail.

Why incremental: a summary covers messages up to `last_message_seq`. A run summarises only the messages
after that and appends them; when old summary + new part would exceed `summary.max_tokens`, the old part
is first compressed to about a third (the same selection, run over its own lines), then merged, and if
that is still too long the whole is compressed once more. Each run writes one `compression_history` row,
the summary row and its `fts_summaries` row, and the thread's topics, in one transaction.

Each summary line is `- role: sentence`, in the order the sentences were said.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from store.extract import sentences, topics
from store.records import Summary, iso, json_dumps, json_loads, now
from store.text import fts_put

if TYPE_CHECKING:
    from store.store import Store

MAX_CANDIDATES = 400  # sentences embedded per run; more are pre-filtered cheaply (SumBasic + cues)
BLOCK_MESSAGES = 40  # pre-filter quota is spread over blocks of this many messages
SUMMARY_SHARE = 0.25  # a new part's summary is at most this share of its source tokens
MIN_PART_TOKENS = 80
MMR_LAMBDA = 0.7
REDUNDANT = 0.92  # a sentence this similar to one already chosen adds nothing
MAX_SENTENCE_WORDS = 60
_LINE = re.compile(r"^- (system|user|assistant|tool): (.*)$")

# Cue patterns: what makes a sentence worth keeping beyond being central. Weights add to centrality
# (normalised to 0..1): a decision, an open task or a stated preference outranks any merely central
# remark, because that is what a reader of the summary comes back for. Matched against lowercased
# text (case-insensitive matching of these alternations is several times slower).
_CUES: list[tuple[float, re.Pattern[str]]] = [
    (
        1.0,
        re.compile(
            r"\b(?:we|i)(?:'ll| will| have| had|'ve)? (?:decided|agreed|chose|settled on|picked|went with|"
            r"are going with|'re going with|will go with|'ll go with|'ll use|will use|'re using|are using)\b"
            r"|\blet'?s (?:use|go with|stick with|switch to|keep|drop)\b|\bdecision\b|\bdecided\b|"
            r"\bgoing with\b|\bfinal(?:ly)? (?:choice|plan)\b|\bsettled\b|决定|就用|选定|采用|确定|定了|最终"
        ),
    ),
    (
        0.8,
        re.compile(
            r"\btodo\b|\bto-do\b|\bnext steps?\b|\baction items?\b|\bfollow[- ]up\b|\bremaining\b|\bstill need|"
            r"\b(?:i|we) (?:need|have) to\b|\b(?:i|we)(?:'ll| will) (?:add|write|fix|implement|test|check|try|set up|move)\b|"
            r"\bdeadline\b|\bby (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|next week)\b|"
            r"待办|下一步|还要|还需要|记得|计划|打算|截止"
        ),
    ),
    (
        0.8,
        re.compile(
            r"\bi (?:prefer|always|never|usually|like|love|hate|want|don't want|do not want)\b|\bmy favou?rite\b|"
            r"^(?:please )?(?:don't|do not|never|always|avoid)\b|我喜欢|我更喜欢|偏好|习惯|不要|别放|尽量|总是|从不"
        ),
    ),
    (
        0.15,
        re.compile(r"\b(?:because|so that|the reason|trade-?off|instead of|rather than)\b|因为|所以|而不是"),
    ),
]
# Every cue pattern needs one of these fragments: most sentences have none and skip the regexes.
_CUE_HINTS = (
    "we",
    "i ",
    "i'",
    "let",
    "decid",
    "decision",
    "final",
    "settled",
    "going with",
    "todo",
    "to-do",
    "next step",
    "action item",
    "follow",
    "remaining",
    "still need",
    "deadline",
    "by ",
    "don't",
    "do not",
    "never",
    "always",
    "avoid",
    "my fav",
    "because",
    "so that",
    "reason",
    "trade",
    "instead of",
    "rather than",
    "决定",
    "就用",
    "选定",
    "采用",
    "确定",
    "定了",
    "最终",
    "待办",
    "下一步",
    "还要",
    "还需要",
    "记得",
    "计划",
    "打算",
    "截止",
    "喜欢",
    "偏好",
    "习惯",
    "不要",
    "别放",
    "尽量",
    "总是",
    "从不",
    "因为",
    "所以",
    "而不是",
)
# Named things: `code`, CamelCase and ALLCAPS names, a capitalised word after a lowercase one (a proper
# noun), numbers.
_NAMED = re.compile(
    r"`[^`]+`|\b[A-Z][a-z]*[A-Z][\w-]*|\b[A-Z]{2,}\w*|(?<=[a-z,;:] )[A-Z][a-z]+\b|\b\d+(?:[.,]\d+)*"
)
_FILLER = re.compile(
    r"^(?:sure|ok(?:ay)?|thanks?|thank you|great|cool|nice|got it|hi|hello|hey|yes|no|right|perfect|"
    r"great question|good question|happy to help|i hope this helps|hope this helps|let me know\b.*|"
    r"here(?:'s| is) (?:a|an|the|how)\b.*:|certainly|of course|absolutely|好的|谢谢|明白了?|收到|没问题)[.!。！]*$",
    re.I,
)


@dataclass(frozen=True, slots=True)
class Unit:
    """One candidate sentence: where it came from, its summary line, and its cue bonus."""

    order: tuple[int, int]  # (message seq, sentence index): output order
    role: str
    text: str
    line: str
    tokens: int
    cue: float


@dataclass(frozen=True, slots=True)
class SummaryResult:
    """What one summarise run did (also the CLI's JSON)."""

    thread_id: int
    action: str  # "created" | "updated" | "unchanged"
    summary: Summary | None
    messages_covered: int = 0
    strategy: str | None = None  # "extractive" | "incremental" | "recursive"
    method: str | None = None  # "embedding" | "tfidf"
    before_tokens: int = 0
    after_tokens: int = 0
    topics: list[tuple[str, int]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "thread_id": self.thread_id,
            "action": self.action,
            "messages_covered": self.messages_covered,
            "strategy": self.strategy,
            "method": self.method,
            "before_tokens": self.before_tokens,
            "after_tokens": self.after_tokens,
            "summary": None if self.summary is None else self.summary.to_json(),
            "topics": [{"topic": t, "mention_count": c} for t, c in self.topics],
        }


# -- units ---------------------------------------------------------------------------------------------


def cue_score(text: str) -> float:
    low = text.lower()
    score = sum(w for w, pat in _CUES if pat.search(low)) if any(h in low for h in _CUE_HINTS) else 0.0
    score += min(0.15, 0.05 * len(_NAMED.findall(text)))
    end = text.rstrip()[-1:]
    if end in ("?", "？"):
        score -= 0.15
    elif end in (":", "："):  # it introduced a list or code that the summary does not carry
        score -= 0.3
    return score


def _trim(sentence: str) -> str:
    words = sentence.split(" ")
    if len(words) > MAX_SENTENCE_WORDS:
        return " ".join(words[:MAX_SENTENCE_WORDS]) + " …"
    return sentence


def message_units(store: Store, seq: int, role: str, content: str) -> list[Unit]:
    """The summary-worthy sentences of one message (tool output and system text are not summarised)."""
    if role not in ("user", "assistant"):
        return []
    out = []
    for i, sent in enumerate(sentences.split_sentences(content)):
        if _FILLER.match(sent) or sentences.size(sent) < 4:
            continue
        text = _trim(sent)
        line = f"- {role}: {text}"
        out.append(Unit((seq, i), role, text, line, store.tokens.count(line) + 1, cue_score(text)))
    return out


def summary_units(store: Store, content: str) -> list[Unit]:
    """An existing summary's lines as units, so it can be compressed by the same selection."""
    out = []
    for i, line in enumerate(ln for ln in content.splitlines() if ln.strip()):
        m = _LINE.match(line)
        role, text = (m.group(1), m.group(2)) if m else ("assistant", line.lstrip("- "))
        out.append(Unit((-1, i), role, text, line, store.tokens.count(line) + 1, cue_score(text)))
    return out


def _prefilter(units: list[Unit], limit: int) -> list[Unit]:
    """At most `limit` units, chosen cheaply (SumBasic word probability + cues), spread over the thread."""
    if len(units) <= limit:
        return units
    feats = [sentences.features(u.text) for u in units]
    counts = Counter(f for fs in feats for f in fs)
    total = sum(counts.values()) or 1
    cheap = {
        id(u): (sum(counts[f] for f in fs) / (len(fs) * total) if fs else 0.0) * 100 + u.cue
        for u, fs in zip(units, feats, strict=True)
    }
    blocks: dict[int, list[Unit]] = {}
    for u in units:
        blocks.setdefault(u.order[0] // BLOCK_MESSAGES, []).append(u)
    quota = max(3, limit // len(blocks))
    chosen: list[Unit] = []
    for block in blocks.values():
        chosen += sorted(block, key=lambda u: cheap[id(u)], reverse=True)[:quota]
    chosen = sorted(chosen, key=lambda u: cheap[id(u)], reverse=True)[:limit]
    return sorted(chosen, key=lambda u: u.order)


def _vectors(store: Store, texts: Sequence[str], use_model: bool = True) -> tuple[np.ndarray, str]:
    """Sentence embeddings when a model is usable (and `use_model`), else TF-IDF rows: (vectors, method)."""
    if use_model and store.vector_problem is None:
        vecs = store.embed_texts(list(texts))
        if vecs is not None:
            return vecs, "embedding"
    return sentences.tfidf_vectors(texts), "tfidf"


def select(units: Sequence[Unit], vecs: np.ndarray, cap: int) -> list[Unit]:
    """Central, non-redundant units within `cap` tokens (maximal marginal relevance), in said order."""
    n = len(units)
    if n == 0 or cap <= 0:
        return []
    centroid = vecs.mean(axis=0)
    norm = float(np.linalg.norm(centroid))
    central = vecs @ (centroid / norm) if norm > 0 else np.zeros(n, dtype=np.float32)
    spread = float(central.max() - central.min())
    central = (central - central.min()) / spread if spread > 1e-9 else np.ones(n, dtype=np.float32)
    relevance = central + np.array([u.cue for u in units], dtype=np.float32)
    tokens = np.array([u.tokens for u in units])
    sims = vecs @ vecs.T
    closest = np.zeros(n, dtype=np.float32)
    open_ = np.ones(n, dtype=bool)
    chosen: list[int] = []
    used = 0
    while True:
        open_ &= (tokens <= cap - used) & (closest < REDUNDANT)
        if not open_.any():
            break
        score = np.where(open_, MMR_LAMBDA * relevance - (1 - MMR_LAMBDA) * closest, -np.inf)
        i = int(np.argmax(score))
        chosen.append(i)
        used += int(tokens[i])
        open_[i] = False
        closest = np.maximum(closest, sims[i])
    return sorted((units[i] for i in chosen), key=lambda u: u.order)


def _render(units: Sequence[Unit]) -> str:
    return "\n".join(u.line for u in units)


def _fit(store: Store, text: str, cap: int) -> str:
    """Drop the oldest lines until the text fits (a guard: the sums above are per line)."""
    lines = text.splitlines()
    while lines and store.tokens.count("\n".join(lines)) > cap:
        lines.pop(0)
    return "\n".join(lines)


def _compress(store: Store, units: list[Unit], cap: int, use_model: bool = True) -> tuple[list[Unit], str]:
    vecs, method = _vectors(store, [u.text for u in units], use_model)
    return select(units, vecs, cap), method


# -- runs ----------------------------------------------------------------------------------------------


def unsummarised_count(store: Store, thread_id: int) -> int:
    """Messages after the summary's last_message_seq (all of them when there is no summary)."""
    summary = store.get_summary(thread_id)
    last = -1 if summary is None else summary.last_message_seq
    return int(
        store.scalar("SELECT count(*) FROM messages WHERE thread_id = ? AND seq > ?", (thread_id, last))
    )


def threads_to_summarize(store: Store, *, min_new: int = 1) -> list[int]:
    """Ids of threads with at least `min_new` messages after their summary (or with none yet)."""
    rows = store.con.execute(
        "SELECT t.id FROM threads t LEFT JOIN thread_summaries s ON s.thread_id = t.id "
        "WHERE (SELECT count(*) FROM messages m WHERE m.thread_id = t.id "
        "       AND m.seq > coalesce(s.last_message_seq, -1)) >= ? ORDER BY t.id",
        (max(1, min_new),),
    )
    return [int(r[0]) for r in rows]


def maybe_summarize(store: Store, thread_id: int, *, use_model: bool = True) -> SummaryResult | None:
    """Summarise when at least `summary.trigger_messages` messages are new (after an import). Else None."""
    if unsummarised_count(store, thread_id) < max(1, store.config.summary.trigger_messages):
        return None
    return summarize_thread(store, thread_id, use_model=use_model)


def summarize_thread(
    store: Store, thread_id: int, force: bool = False, *, use_model: bool = True
) -> SummaryResult:
    """Bring the thread's summary up to its last message (on demand: any number of new messages).

    `force` rebuilds the summary from the first message instead of continuing from last_message_seq.
    `use_model=False` (an import with --no-embed) never loads the embedding model: TF-IDF stands in.
    """
    thread = store.get_thread(thread_id)
    cap = store.config.summary.max_tokens
    existing = store.get_summary(thread_id)
    old = None if force else existing
    last_seq = -1 if old is None else old.last_message_seq
    rows = list(
        store.con.execute(
            "SELECT seq, role, content, token_count FROM messages WHERE thread_id = ? AND seq > ? ORDER BY seq",
            (thread_id, last_seq),
        )
    )
    if not rows:
        return SummaryResult(thread_id, "unchanged", existing, topics=store.get_topics(thread_id))

    units = [u for seq, role, content, _ in rows for u in message_units(store, seq, role, content)]
    source_tokens = sum(int(r[3]) for r in rows)
    old_text = old.content if old is not None else ""
    if old_text:
        share = round(cap * len(rows) / max(1, thread.message_count))
        part_cap = max(cap // 3, share)
    else:
        part_cap = cap
    part_cap = min(part_cap, cap, max(MIN_PART_TOKENS, int(source_tokens * SUMMARY_SHARE)))

    candidates = _prefilter(units, MAX_CANDIDATES)
    vecs, method = _vectors(store, [u.text for u in candidates], use_model)
    part = select(candidates, vecs, part_cap)
    details: dict[str, Any] = {
        "from_seq": int(rows[0][0]),
        "to_seq": int(rows[-1][0]),
        "sentences": len(units),
        "candidates": len(candidates),
        "selected": len(part),
        "part_tokens": store.tokens.count(_render(part)),
        "old_tokens": store.tokens.count(old_text),
        "method": method,
        "passes": 0,
    }
    strategy = "extractive"
    content = _render(part)
    if old_text:
        strategy = "incremental"
        content = "\n".join(x for x in (old_text, content) if x)
        if store.tokens.count(content) > cap:
            strategy = "recursive"
            old_part, _ = _compress(
                store, summary_units(store, old_text), max(1, details["old_tokens"] // 3), use_model
            )
            details["compressed_old_tokens"] = store.tokens.count(_render(old_part))
            details["passes"] = 1
            merged = old_part + part
            content = _render(merged)
            if store.tokens.count(content) > cap:
                again, _ = _compress(store, summary_units(store, content), cap, use_model)
                content = _render(again)
                details["passes"] = 2
    content = _fit(store, content, cap)
    before = details["old_tokens"] + source_tokens
    return _write(
        store, thread_id, existing, content, int(rows[-1][0]), len(rows), before, strategy, method, details
    )


def _write(
    store: Store,
    thread_id: int,
    existing: Summary | None,
    content: str,
    last_seq: int,
    covered: int,
    before: int,
    strategy: str,
    method: str,
    details: dict[str, Any],
) -> SummaryResult:
    after = store.tokens.count(content)
    terms = topics.thread_topics(store, thread_id)
    t = now()
    with store.con:
        # Another process may have summarised this thread meanwhile: its summary stands, ours is dropped.
        current = store.get_summary(thread_id)
        if (current is None) != (existing is None) or (
            current is not None and existing is not None and current.updated_at != existing.updated_at
        ):
            return SummaryResult(thread_id, "unchanged", current, topics=store.get_topics(thread_id))
        store.con.execute(
            "INSERT INTO thread_summaries(thread_id, content, last_message_seq, token_count, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(thread_id) DO UPDATE SET content = excluded.content, "
            "last_message_seq = excluded.last_message_seq, token_count = excluded.token_count, "
            "updated_at = excluded.updated_at",
            (thread_id, content, last_seq, after, t, t),
        )
        fts_put(store.con, "fts_summaries", thread_id, content)
        store.con.execute(
            "INSERT INTO compression_history(thread_id, before_tokens, after_tokens, ratio, messages_compressed, "
            "strategy, created_at, details) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                thread_id,
                before,
                after,
                round(after / before, 4) if before else 0.0,
                covered,
                strategy,
                t,
                json_dumps(details),
            ),
        )
        topics.write_topics(store.con, thread_id, terms)
    summary = store.get_summary(thread_id)
    return SummaryResult(
        thread_id,
        "created" if existing is None else "updated",
        summary,
        covered,
        strategy,
        method,
        before,
        after,
        [(x.topic, x.mention_count) for x in terms],
    )


def compression_history(store: Store, thread_id: int, limit: int = 20) -> list[dict[str, Any]]:
    """The thread's summarise runs, newest first (for the TUI and `summarize --json`)."""
    rows = store.con.execute(
        "SELECT id, before_tokens, after_tokens, ratio, messages_compressed, strategy, created_at, details "
        "FROM compression_history WHERE thread_id = ? ORDER BY id DESC LIMIT ?",
        (thread_id, limit),
    )
    return [
        {
            "id": r[0],
            "before_tokens": r[1],
            "after_tokens": r[2],
            "ratio": r[3],
            "messages_compressed": r[4],
            "strategy": r[5],
            "created_at": iso(r[6]),
            "details": json_loads(r[7]),
        }
        for r in rows
    ]
