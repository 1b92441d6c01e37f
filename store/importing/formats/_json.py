"""Reading big JSON lists one element at a time, with errors a person can act on.

Why: a ChatGPT `conversations.json` is often one 100-200 MB line. `json.load` holds the text and every
parsed conversation at once (several GB of Python objects); here only the current conversation is held.
The standard library's C decoder does the parsing (`raw_decode` on a growing buffer), so it is as fast
as `json.load`, and a truncated file still yields every element that was complete before the cut.
"""

from __future__ import annotations

import codecs
import contextvars
import json
import re
from collections.abc import Iterator
from typing import IO, Any

_WS = re.compile(r"[ \t\r\n]*")
_DECODER = json.JSONDecoder()


# Invalid UTF-8 is replaced, recorded and reported, not fatal: one bad byte in the middle of a 3,000-
# conversation export used to end the file there (1,729 conversations dropped). The decoder's error
# handler is global by name, so the stream it works for is passed in a context variable.
_REPLACE = "memapp-json-replace"
_BAD: contextvars.ContextVar[tuple[list[int], int]] = contextvars.ContextVar("memapp_bad_utf8")


def _replace_and_record(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    found, base = _BAD.get()
    found.append(base + exc.start)
    return "\ufffd", exc.end


codecs.register_error(_REPLACE, _replace_and_record)


class JsonError(ValueError):
    """The text is not valid JSON (or not UTF-8); the message says where."""


class JsonStream:
    """Incremental access to the JSON values in a binary stream."""

    def __init__(self, fp: IO[bytes], chunk_size: int = 1 << 20) -> None:
        self._fp = fp
        self._decoder = codecs.getincrementaldecoder("utf-8-sig")(errors=_REPLACE)
        self.bad_utf8: list[int] = []  # byte offsets of invalid UTF-8, each decoded as U+FFFD
        self._chunk = chunk_size
        self._buf = ""
        self._pos = 0
        self._dropped = 0  # characters discarded from the front of the buffer, for error offsets
        self._bytes = 0
        self._eof = False

    @property
    def offset(self) -> int:
        """Character offset of the read position in the whole text."""
        return self._dropped + self._pos

    def _fill(self, size: int) -> bool:
        if self._eof:
            return False
        if self._pos:
            self._dropped += self._pos
            self._buf = self._buf[self._pos :]
            self._pos = 0
        data = self._fp.read(size)
        token = _BAD.set((self.bad_utf8, self._bytes))
        try:
            if not data:
                self._eof = True
                self._buf += self._decoder.decode(b"", final=True)
                return False
            self._buf += self._decoder.decode(data)
        finally:
            _BAD.reset(token)
        self._bytes += len(data)
        return True

    def peek(self) -> str | None:
        """The next non-blank character (not consumed), or None at the end of the text."""
        while True:
            m = _WS.match(self._buf, self._pos)
            self._pos = m.end() if m else self._pos
            if self._pos < len(self._buf):
                return self._buf[self._pos]
            if not self._fill(self._chunk):
                return None

    def _take(self, expected: str) -> None:
        if self.peek() != expected:
            raise JsonError(f"invalid JSON at character {self.offset}: expected {expected!r}")
        self._pos += 1

    def value(self) -> Any:
        """Parse and consume the next JSON value."""
        if self.peek() is None:
            raise JsonError(f"unexpected end of file at character {self.offset} (truncated?)")
        grow = self._chunk
        while True:
            try:
                obj, end = _DECODER.raw_decode(self._buf, self._pos)
            except json.JSONDecodeError as exc:
                if self._eof:
                    where = self._dropped + exc.pos
                    if exc.pos >= len(self._buf.rstrip()) or exc.msg.startswith("Unterminated"):
                        raise JsonError(f"unexpected end of file at character {where} (truncated?)") from None
                    raise JsonError(f"invalid JSON at character {where}: {exc.msg}") from None
                self._fill(grow)
                grow *= 2  # keeps re-parsing a large element linear overall
                continue
            except RecursionError:
                raise JsonError(f"JSON nested too deeply at character {self.offset}") from None
            # A number at the very end of the buffer may continue in the next chunk.
            if (
                end == len(self._buf)
                and not self._eof
                and isinstance(obj, int | float)
                and not isinstance(obj, bool)
            ):
                self._fill(grow)
                continue
            self._pos = end
            return obj

    def iter_array(self) -> Iterator[Any]:
        """Yield the elements of the list that starts here, one at a time."""
        self._take("[")
        first = True
        while True:
            c = self.peek()
            if c is None:
                raise JsonError(
                    f"unexpected end of file at character {self.offset} inside a list (truncated?)"
                )
            if c == "]":
                self._pos += 1
                break
            if not first:
                if c != ",":
                    raise JsonError(f"invalid JSON at character {self.offset}: expected ',' or ']'")
                self._pos += 1
            first = False
            yield self.value()
        self.expect_end()

    def expect_end(self) -> None:
        if self.peek() is not None:
            raise JsonError(f"unexpected data after the JSON value at character {self.offset}")
