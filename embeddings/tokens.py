"""Token counts with tiktoken, offline.

tiktoken normally downloads its BPE file on first use, which fails with no network. We read the file that
ships in `data/` ourselves, check its sha256, and build the `tiktoken.Encoding` from it, so no URL is
ever touched. If the file is missing or corrupt, counting falls back to a documented estimate and every
count is flagged as estimated (`TokenCounter.exact is False`), so the UI can say so.

The estimate (see README, "Token counts"): one token per CJK character (Han, kana, Hangul), plus one per
four other non-space characters, rounded up. On English prose it is within ~15% of cl100k; on Chinese
it errs high, which is the safe side for a budget.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import math
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from embeddings.locations import data_file

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EncodingSpec:
    name: str
    filename: str
    sha256: str
    pat_str: str
    special_tokens: dict[str, int]


ENCODINGS: dict[str, EncodingSpec] = {
    "cl100k_base": EncodingSpec(
        name="cl100k_base",
        filename="cl100k_base.tiktoken",
        sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        pat_str=r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
        special_tokens={
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
}

# OpenAI chat format overhead, as in the design notes: 4 tokens per message, 2 for the reply primer.
TOKENS_PER_MESSAGE = 4
TOKENS_PER_CONVERSATION = 2

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_SPACE = re.compile(r"\s+")


def estimate_tokens(text: str) -> int:
    """The documented fallback when the BPE file is unavailable (CJK-aware)."""
    if not text:
        return 0
    cjk = len(_CJK.findall(text))
    other = len(_SPACE.sub("", _CJK.sub("", text)))
    return cjk + math.ceil(other / 4)


_ENCODINGS_LOADED: dict[tuple[str, str], Any] = {}
_ENCODINGS_LOCK = threading.Lock()


def _load_encoding(spec: EncodingSpec, path: Path) -> Any:
    """Parse and verify the BPE file once per process (it takes ~0.3 s), then share the Encoding."""
    key = (spec.name, str(path.resolve()))
    with _ENCODINGS_LOCK:
        if key not in _ENCODINGS_LOADED:
            _ENCODINGS_LOADED[key] = _read_encoding(spec, path)
        return _ENCODINGS_LOADED[key]


def _read_encoding(spec: EncodingSpec, path: Path) -> Any:
    import tiktoken  # light (a Rust extension); imported here so a broken install degrades to estimates

    raw = path.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    if digest != spec.sha256:
        raise ValueError(
            f"{path} has sha256 {digest[:12]}…, expected {spec.sha256[:12]}… (corrupt or wrong file)"
        )
    ranks: dict[bytes, int] = {}
    for line in raw.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return tiktoken.Encoding(
        name=spec.name, pat_str=spec.pat_str, mergeable_ranks=ranks, special_tokens=spec.special_tokens
    )


class TokenCounter:
    """Counts tokens exactly when the shipped BPE file loads, else estimates (and says so)."""

    def __init__(self, encoding: str = "cl100k_base", bpe_file: str | Path | None = None) -> None:
        self.encoding_name = encoding
        self.problem: str | None = None
        self._enc: Any = None
        spec = ENCODINGS.get(encoding)
        if spec is None:
            self.problem = f"unknown encoding {encoding!r} (known: {', '.join(ENCODINGS)})"
        else:
            path = Path(bpe_file) if bpe_file else data_file(spec.filename)
            try:
                if path is None or not path.is_file():
                    raise FileNotFoundError(f"tokenizer file {spec.filename} not found in data/")
                self._enc = _load_encoding(spec, path)
            except Exception as exc:  # any failure means estimates, never a crash
                self.problem = str(exc)
        if self.problem:
            log.warning("token counts are estimates: %s", self.problem)

    @property
    def exact(self) -> bool:
        return self._enc is not None

    @property
    def status(self) -> str:
        """One line for `doctor` and the status bar."""
        if self.exact:
            return f"{self.encoding_name} (exact)"
        return f"estimated ({self.problem})"

    def count(self, text: str) -> int:
        if not text:
            return 0
        if self._enc is None:
            return estimate_tokens(text)
        return len(self._enc.encode(text, disallowed_special=()))

    def encode(self, text: str) -> list[int]:
        if self._enc is None:
            raise RuntimeError("no exact tokenizer loaded")
        return list(self._enc.encode(text, disallowed_special=()))

    def decode(self, tokens: list[int]) -> str:
        if self._enc is None:
            raise RuntimeError("no exact tokenizer loaded")
        return str(self._enc.decode(tokens))

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest prefix of `text` that fits in `max_tokens`."""
        if max_tokens <= 0:
            return ""
        if self._enc is None:
            # Estimates: shrink by characters until the estimate fits.
            out = text
            while out and estimate_tokens(out) > max_tokens:
                out = out[: max(0, int(len(out) * 0.9) - 1)]
            return out
        toks = self.encode(text)
        if len(toks) <= max_tokens:
            return text
        return self.decode(toks[:max_tokens])

    def count_message(self, role: str, content: str) -> int:
        return TOKENS_PER_MESSAGE + self.count(role) + self.count(content)

    def count_messages(self, messages: list[dict[str, Any]]) -> int:
        """Tokens of an OpenAI-format message list, with the per-message overhead."""
        total = TOKENS_PER_CONVERSATION
        for msg in messages:
            content = msg.get("content") or ""
            total += self.count_message(str(msg.get("role", "")), content if isinstance(content, str) else "")
        return total
