"""Token counts with tiktoken, offline.

tiktoken normally downloads its BPE file on first use, which fails with no network. We read the file that
ships in `data/` ourselves, check its sha256, and build the `tiktoken.Encoding` from it, so no URL is
ever touched. If the file is missing or corrupt, counting falls back to a documented estimate and every
count is flagged as estimated (`TokenCounter.exact is False`), so the UI can say so.

Why the encoder is built on first use: parsing 100k BPE ranks takes a few hundred milliseconds, which
the TUI would otherwise pay before its first frame. Constructing a TokenCounter only checks the file
(present, sha256 right, tiktoken installed: milliseconds), so `exact` is known at once; the first count,
or `load()` from a worker, builds the encoder, once per process.

The estimate (see README, "Token counts"): one token per CJK character (Han, kana, Hangul), plus one per
four other non-space characters, rounded up. On English prose it is within ~15% of cl100k; on Chinese
it errs high, which is the safe side for a budget.
"""

from __future__ import annotations

import binascii
import hashlib
import importlib.util
import logging
import math
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from embeddings.data_files import data_file

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
_VERIFIED: set[tuple[str, str]] = set()
_ENCODINGS_LOCK = threading.Lock()


def _key(spec: EncodingSpec, path: Path) -> tuple[str, str]:
    return (spec.name, str(path.resolve()))


def _verify(spec: EncodingSpec, path: Path) -> None:
    """Everything that can make the encoder unavailable, checked cheaply (once per file and process)."""
    key = _key(spec, path)
    if key in _VERIFIED:
        return
    if importlib.util.find_spec("tiktoken") is None:
        raise ModuleNotFoundError("the tiktoken package is not installed")
    _check_sha256(spec, path, path.read_bytes())
    _VERIFIED.add(key)


def _check_sha256(spec: EncodingSpec, path: Path, raw: bytes) -> None:
    digest = hashlib.sha256(raw).hexdigest()
    if digest != spec.sha256:
        raise ValueError(
            f"{path} has sha256 {digest[:12]}…, expected {spec.sha256[:12]}… (corrupt or wrong file)"
        )


def _load_encoding(spec: EncodingSpec, path: Path) -> Any:
    """Parse and verify the BPE file once per process (~0.2 s), then share the Encoding."""
    key = _key(spec, path)
    with _ENCODINGS_LOCK:
        if key not in _ENCODINGS_LOADED:
            _ENCODINGS_LOADED[key] = _read_encoding(spec, path)
        return _ENCODINGS_LOADED[key]


def _read_encoding(spec: EncodingSpec, path: Path) -> Any:
    import tiktoken  # light (a Rust extension); imported here so a broken install degrades to estimates

    raw = path.read_bytes()
    _check_sha256(spec, path, raw)  # again: the file is read again, and must still be the one we checked
    fields = raw.split()  # "<base64 token> <rank>" per line; half the time of a per-line loop
    ranks = dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2]), strict=True))
    return tiktoken.Encoding(
        name=spec.name, pat_str=spec.pat_str, mergeable_ranks=ranks, special_tokens=spec.special_tokens
    )


class TokenCounter:
    """Counts tokens exactly when the shipped BPE file loads, else estimates (and says so)."""

    def __init__(self, encoding: str = "cl100k_base", bpe_file: str | Path | None = None) -> None:
        self.encoding_name = encoding
        self.problem: str | None = None
        self._enc: Any = None
        self._source: tuple[EncodingSpec, Path] | None = None  # verified, encoder not built yet
        spec = ENCODINGS.get(encoding)
        if spec is None:
            self.problem = f"unknown encoding {encoding!r} (known: {', '.join(ENCODINGS)})"
        else:
            path = Path(bpe_file) if bpe_file else data_file(spec.filename)
            try:
                if path is None or not path.is_file():
                    raise FileNotFoundError(f"tokenizer file {spec.filename} not found in data/")
                _verify(spec, path)
                self._source = (spec, path)
            except Exception as exc:  # any failure means estimates, never a crash
                self.problem = str(exc)
        if self.problem:
            log.warning("token counts are estimates: %s", self.problem)

    def load(self) -> None:
        """Build the encoder now (for a worker), so the first count does not pay for it."""
        self._encoder()

    def _encoder(self) -> Any:
        """The tiktoken Encoding, built on first use; None when counts are estimates."""
        source = self._source
        if self._enc is None and source is not None:
            try:
                self._enc = _load_encoding(*source)
            except Exception as exc:  # verified but unusable (a broken tiktoken): estimates from now on
                self.problem = str(exc)
                log.warning("token counts are estimates: %s", self.problem)
            self._source = None
        return self._enc

    @property
    def exact(self) -> bool:
        return self._enc is not None or self._source is not None

    @property
    def status(self) -> str:
        """One line for `doctor` and the status bar."""
        if self.exact:
            return f"{self.encoding_name} (exact)"
        return f"estimated ({self.problem})"

    def count(self, text: str) -> int:
        if not text:
            return 0
        enc = self._encoder()
        if enc is None:
            return estimate_tokens(text)
        return len(enc.encode(text, disallowed_special=()))

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """`count` of each text, in one call (an import counts a thread's or a batch's messages at once).

        `encode_ordinary` is `encode(text, disallowed_special=())` without the per-call argument checks.
        """
        if not texts:
            return []
        enc = self._encoder()
        if enc is None:
            return [estimate_tokens(t) for t in texts]
        return [len(enc.encode_ordinary(t)) if t else 0 for t in texts]

    def encode(self, text: str) -> list[int]:
        enc = self._encoder()
        if enc is None:
            raise RuntimeError("no exact tokenizer loaded")
        return list(enc.encode(text, disallowed_special=()))

    def decode(self, tokens: list[int]) -> str:
        enc = self._encoder()
        if enc is None:
            raise RuntimeError("no exact tokenizer loaded")
        return str(enc.decode(tokens))

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest prefix of `text` that fits in `max_tokens`."""
        if max_tokens <= 0:
            return ""
        if self._encoder() is None:
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
