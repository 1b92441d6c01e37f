"""Reading big JSON lists one element at a time, with errors a person can act on.

Why: a ChatGPT `conversations.json` is often one 100-200 MB line. `json.load` holds the text and every
parsed conversation at once (several GB of Python objects); here only the current conversation is held.
The standard library's C decoder does the parsing (`raw_decode` on a growing buffer), so it is as fast
as `json.load`, and a truncated file still yields every element that was complete before the cut.

Why memory is bounded by shape, not size: the buffer grows only while the element being parsed could
still be valid, and only while its text, counted for the objects it would become
(store.importing.formats.limits), fits the memory budget. A syntax error is raised where it is found,
not after reading the rest of the file (a folder holding 2 GB of NUL bytes as `conversations.json` took
5.3 GB before the error), and an element too big to hold is passed over.

Why a broken element does not end the list: with `recover`, an element that is not valid JSON (or too
big) comes back as a `Skipped` (where it was and why) and reading goes on at the next element: found by
the text every element of the list begins with (a ChatGPT conversation starts `{"title":`), learnt from
the elements read so far, else by following brackets and quotes to the element's end. Before, one
flipped byte in the middle of an export dropped every conversation after it.
"""

from __future__ import annotations

import codecs
import contextvars
import json
import re
from collections.abc import Collection, Generator, Iterator
from dataclasses import dataclass
from typing import IO, Any

from store.importing.formats.limits import estimate, memory_budget

_WS = re.compile(r"[ \t\r\n]*")
_DECODER = json.JSONDecoder()
_NEAR_END = 64  # a decode error this close to the buffer's end may only mean the element goes on
_FIRST_KEY = re.compile(r'\{\s*"(?:[^"\\]|\\.){1,64}"\s*:')
_STRUCTURE = re.compile(r'["\[\]{},]')
_IN_STRING = re.compile(r'["\\]')


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


class TruncatedJson(JsonError):
    """The text ends inside a value: nothing after it can be read."""


class TooBig(JsonError):
    """A value that would need more memory than the import may use; it is passed over, not parsed."""


@dataclass(frozen=True)
class Skipped:
    """An element of a list that could not be read and was passed over (recover=True)."""

    index: int  # its position in the list
    start: int  # character offsets of the text passed over
    end: int
    reason: str

    def describe(self) -> str:
        return (
            f"characters {self.start}-{self.end} of the file could not be read ({self.reason}); "
            "skipped, the rest of the file was read"
        )


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
        self._budget = 0  # memory one value may take, found when a value first grows big

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
            raise TruncatedJson(f"unexpected end of file at character {self.offset} (truncated?)")
        grow = self._chunk
        while True:
            try:
                obj, end = _DECODER.raw_decode(self._buf, self._pos)
            except json.JSONDecodeError as exc:
                where = self._dropped + exc.pos
                if self._eof:
                    if exc.pos >= len(self._buf.rstrip()) or exc.msg.startswith("Unterminated"):
                        raise TruncatedJson(
                            f"unexpected end of file at character {where} (truncated?)"
                        ) from None
                    raise JsonError(f"invalid JSON at character {where}: {exc.msg}") from None
                if exc.pos < len(self._buf) - _NEAR_END and not exc.msg.startswith("Unterminated"):
                    # Wrong where it is, whatever follows: say so now, not after reading the whole file.
                    raise JsonError(f"invalid JSON at character {where}: {exc.msg}") from None
                self._check_size()
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

    def _check_size(self) -> None:
        """Before the buffer grows for the value at the read position: refuse one that, judged by its
        shape so far, would not fit the memory budget (counted without copying the buffer)."""
        n = len(self._buf) - self._pos
        if n < 16 * self._chunk and n < (32 << 20):
            return
        self._budget = self._budget or memory_budget()
        b = self._buf
        need = estimate("") + 2 * (n + 150 * (b.count("{", self._pos) + b.count("[", self._pos)))
        need += 2 * 50 * b.count(",", self._pos)
        if need > self._budget:
            raise TooBig(
                f"a value of more than {n / 1024**2:.0f} MB that would need more than "
                f"{need / 1024**2:.0f} MB of memory to read, more than the {self._budget / 1024**2:.0f} MB "
                "this import can use here"
            )

    def iter_array(self, *, top: bool = True, recover: bool = False) -> Iterator[Any]:
        """Yield the elements of the list that starts here, one at a time (`top`: it is the whole text).

        `recover`: an element that cannot be read is yielded as a Skipped and the list goes on."""
        self._take("[")
        shape = _Shape()
        index = 0
        while True:
            c = self.peek()
            if c is None:
                raise TruncatedJson(
                    f"unexpected end of file at character {self.offset} inside a list (truncated?)"
                )
            if c == "]":
                self._pos += 1
                break
            start = self.offset
            try:
                if index and c == ",":
                    self._pos += 1
                elif index and not (recover and c in '{["'):
                    raise JsonError(f"invalid JSON at character {self.offset}: expected ',' or ']'")
                elif index:  # a value begins where a ',' should be: the element itself may be whole
                    yield Skipped(index, start, start, "a ',' is missing before this element")
                self.peek()
                start = self.offset
                item = self.value()
            except TruncatedJson:
                raise
            except JsonError as exc:
                if not recover:
                    raise
                read = yield from self._recover(index, start, exc, shape)
                if read < 0:  # the rest of the file was passed over
                    return
                index += read
                continue
            if recover:
                shape.learn(self._buf, start - self._dropped, item)
            yield item
            index += 1
        if top:
            self.expect_end()

    def _recover(self, index: int, start: int, error: JsonError, shape: _Shape) -> Generator[Any, None, int]:
        """Pass over the element at the read position that could not be read: yield what was passed over
        (and the next element, when finding it meant reading it). Returns how many elements that was, or
        -1 when it was the rest of the file."""
        reason = str(error)
        if reason.startswith("invalid JSON at character"):
            reason = "invalid JSON: " + reason.split(": ", 1)[-1]
        found: list[Any] = []
        if isinstance(error, TooBig):  # well formed, only too big: follow its brackets, releasing as it goes
            more = self._skip_structure()
        else:
            more = self._resync(shape, found)
        yield Skipped(index, start, self.offset if not found else found[0], reason)
        if not more:
            return -1
        if found:
            yield found[1]
            return 2
        return 1

    def _resync(self, shape: _Shape, found: list[Any]) -> bool:
        """Move past a broken element to where the next one begins. First by its brackets and quotes (a
        syntax error that leaves them paired), checked against what the elements look like; else by the
        text the elements begin with; else by brackets and quotes, reading on. False at the end."""
        end = _structure_end(self._buf, self._pos)
        if end is not None and (self._buf[end] == "]" or shape.signature is None):
            self._pos = end
            return True
        if end is not None:
            self._pos = end + 1
            self.peek()
            taken = self._take_candidate(shape, found)
            if taken is None:
                return False
            if taken:
                return True
        if shape.signature:
            return self._find_next(shape, found)
        return self._skip_structure()

    def _take_candidate(self, shape: _Shape, found: list[Any]) -> bool | None:
        """Read the element at the read position if it reads whole, looks like the others and is followed
        by ',' or ']': then `found` gets (its character offset, its value). None: the text ended in it."""
        at = self.offset
        try:
            item = self.value()
        except TruncatedJson:
            self._pos = len(self._buf)
            return None
        except JsonError:
            return False
        if shape.fits(item) and self.peek() in (",", "]"):
            found.extend((at, item))
            return True
        return False

    def _find_next(self, shape: _Shape, found: list[Any]) -> bool:
        """Move past the next element whose text begins as the others' do, and that `_take_candidate`
        takes. False at the end of the text."""
        signature = shape.signature or ""
        pattern = re.compile(r",\s*" + re.escape(signature))
        self._pos += 1
        while True:
            m = pattern.search(self._buf, self._pos)
            if m is None:
                # keep a tail that may hold the start of a match cut by the chunk's end
                self._pos = max(self._pos, len(self._buf) - len(signature) - _NEAR_END)
                if not self._fill(self._chunk):
                    self._pos = len(self._buf)
                    return False
                continue
            self._pos = m.end() - len(signature)
            taken = self._take_candidate(shape, found)
            if taken is None:
                return False
            if taken:
                return True
            self._pos += 1  # a candidate inside the broken element: look further

    def _skip_structure(self) -> bool:
        """Move to the next ',' or ']' of this list, reading on as needed (the buffer is released as it
        goes): False at the end of the text. Brackets and quotes are followed, not parsed."""
        depth, in_string, escaped = 0, False, False
        while True:
            end, depth, in_string, escaped = _scan(self._buf, self._pos, depth, in_string, escaped)
            if end is not None:
                self._pos = end
                return True
            self._pos = len(self._buf)
            if not self._fill(self._chunk):
                return False

    def members(self, lists: Collection[str] = ()) -> Iterator[tuple[str, Any]]:
        """The members of the object that starts here, one at a time, each value parsed whole, except a
        list under one of `lists`: that comes as an iterator over its elements (iter_array with recover),
        which must be consumed before the next member is asked for."""
        self._take("{")
        first = True
        while True:
            c = self.peek()
            if c is None:
                raise TruncatedJson(f"unexpected end of file at character {self.offset} (truncated?)")
            if c == "}":
                self._pos += 1
                return
            if not first:
                self._take(",")
            first = False
            key = self.value()
            if not isinstance(key, str):
                raise JsonError(f"invalid JSON at character {self.offset}: expected a key")
            self._take(":")
            if key in lists and self.peek() == "[":
                yield key, self.iter_array(top=False, recover=True)
            else:
                yield key, self.value()

    def expect_end(self) -> None:
        if self.peek() is not None:
            raise JsonError(f"unexpected data after the JSON value at character {self.offset}")


class _Shape:
    """What the elements of a list look like, learnt from the first two: the text both begin with (their
    first key, e.g. `{"title":`), when they agree, is how the next element is found after a broken one;
    the keys both have tell an element from a dict nested inside one (a message inside a conversation
    may begin with the same key)."""

    def __init__(self) -> None:
        self.firsts: list[str] = []
        self.keys: set[str] | None = None
        self.signature: str | None = None

    def learn(self, buf: str, at: int, item: Any) -> None:
        if len(self.firsts) >= 2 or not isinstance(item, dict):
            return
        m = _FIRST_KEY.match(buf, at)
        self.firsts.append(m.group() if m else "")
        self.keys = set(item) if self.keys is None else self.keys & set(item)
        if len(self.firsts) == 2 and self.firsts[0] == self.firsts[1] and self.firsts[0]:
            self.signature = self.firsts[0]

    def fits(self, item: Any) -> bool:
        """Whether `item` looks like the elements learnt from (two thirds of their common keys)."""
        if not isinstance(item, dict):
            return False
        return not self.keys or 3 * len(self.keys & item.keys()) >= 2 * len(self.keys)


def _scan(
    buf: str, pos: int, depth: int, in_string: bool, escaped: bool
) -> tuple[int | None, int, bool, bool]:
    """Follow brackets and quotes from `pos`: (where a ',' or ']' at depth 0 is, or None at the end of
    `buf`, and the state to go on with in the next chunk). A stray '}' at depth 0 is passed over."""
    if escaped:  # the character after a backslash at the end of the previous chunk
        pos, escaped = pos + 1, False
    while pos < len(buf):
        m = (_IN_STRING if in_string else _STRUCTURE).search(buf, pos)
        if m is None:
            break
        ch, pos = m.group(), m.end()
        if in_string:
            if ch == "\\":
                if pos >= len(buf):
                    return None, depth, in_string, True
                pos += 1
            else:
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
        elif depth > 0 and ch in "]}":
            depth -= 1
        elif depth == 0 and ch in ",]":
            return m.start(), depth, in_string, escaped
    return None, depth, in_string, escaped


def _structure_end(buf: str, pos: int) -> int | None:
    """Where the element at `pos` ends in `buf` by its brackets and quotes (None: not within `buf`)."""
    return _scan(buf, pos, 0, False, False)[0]
