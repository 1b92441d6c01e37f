"""The stdio side of `memapp mcp`: every line from the client passes a guard before the SDK's parser.

Why a guard: the SDK's stdio reader parses each line into a JSON-RPC message and, when that fails, hands
its dispatcher an exception that it only logs. A request the client is waiting for was then never answered
(issue 28.23: `"params": "oops"` with a valid id; a bare server of the same SDK behaves the same), and a
lone UTF-16 surrogate escape was dropped the same way (issue 20). The guard reads the raw lines itself:

- lone surrogate escapes become U+FFFD (`clean_line`), as imports do;
- a line that is not a valid JSON-RPC message but has a request's id is answered here with the JSON-RPC
  error the spec names: -32600 (Invalid Request: not a request object, e.g. `params` a string or `method`
  missing) or -32602 (Invalid params: `params` an array where MCP takes an object);
- a line with no usable id (not JSON at all, or a malformed response) cannot be answered (an answer with
  `"id": null` would be taken by some clients for their pending request 0): it is logged to stderr and
  skipped, and the next line is served as usual.

It also says when the session has started (the first message after `initialize`), so the server can load
the embedding model then, in the background, with `initialize` already answered (issue 28.26).
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import AsyncIterable, AsyncIterator, Callable
from typing import Any

import anyio
from anyio.abc import ObjectSendStream
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_PARAMS, INVALID_REQUEST, ErrorData, JSONRPCError, jsonrpc_message_adapter

log = logging.getLogger(__name__)

# A lone UTF-16 surrogate escape ("\ud800") is valid JSON text but not a string the SDK's parser accepts.
# Such escapes are read as U+FFFD, a proper pair is kept, and an escaped backslash is never mistaken for one.
_ESCAPES = re.compile(
    rb"\\\\"  # an escaped backslash: consumed first, so the "u" after it is not an escape
    rb"|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"  # a surrogate pair: kept
    rb"|\\u[dD][89a-fA-F][0-9a-fA-F]{2}"  # a lone surrogate
)


def clean_line(line: bytes) -> bytes:
    """One JSON-RPC line with lone surrogate escapes replaced by the escape of U+FFFD."""

    def fix(m: re.Match[bytes]) -> bytes:
        text = m.group(0)
        return text if text == b"\\\\" or len(text) == 12 else b"\\ufffd"

    return _ESCAPES.sub(fix, line) if b"\\u" in line else line


def _request_id(data: Any) -> int | str | None:
    """The id to answer a malformed message with: a request's string or integer id, else None (a response
    is never answered, and an id of another type cannot be echoed)."""
    if not isinstance(data, dict) or "result" in data or "error" in data:
        return None
    rid = data.get("id")
    if isinstance(rid, bool) or not isinstance(rid, int | str):
        return None
    return rid


def _problem(data: dict[str, Any]) -> tuple[int, str]:
    """The JSON-RPC error code and one line for a request object the SDK cannot parse."""
    if data.get("jsonrpc") != "2.0":
        return INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"'
    method = data.get("method")
    if not isinstance(method, str):
        return INVALID_REQUEST, 'Invalid Request: "method" must be a string naming the method'
    params = data.get("params")
    if isinstance(params, list):
        return INVALID_PARAMS, f'Invalid params: "params" of {method} must be an object, not an array'
    if params is not None and not isinstance(params, dict):
        return INVALID_REQUEST, f'Invalid Request: "params" must be an object, not {type(params).__name__}'
    return INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 request object"


def check(line: str) -> tuple[Any, JSONRPCError | None]:
    """A line read from the client: (the parsed message, None) when the SDK can take it, else (None, the
    error to answer it with, or None when it has no id to answer)."""
    try:
        return jsonrpc_message_adapter.validate_json(line, by_name=False), None
    except ValueError:  # pydantic's ValidationError is a ValueError
        pass
    try:
        data = json.loads(line)
    except ValueError:
        return None, None
    rid = _request_id(data)
    if rid is None:
        return None, None
    code, message = _problem(data)
    return None, JSONRPCError(jsonrpc="2.0", id=rid, error=ErrorData(code=code, message=message))


class GuardedLines:
    """What the SDK's stdio reader iterates over instead of stdin: the client's lines, checked.

    `answer_through` must be given the transport's write stream (the SDK creates it after it starts
    reading); until then the first line waits. `on_session_start` runs once, when the first message after
    `initialize` arrives (its answer has been written by then)."""

    def __init__(self, source: AsyncIterable[bytes], on_session_start: Callable[[], None] | None = None):
        self._source = source
        self._on_session_start = on_session_start
        self._writer: ObjectSendStream[SessionMessage] | None = None
        self._ready = anyio.Event()

    def answer_through(self, writer: ObjectSendStream[SessionMessage]) -> None:
        self._writer = writer
        self._ready.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        await self._ready.wait()
        assert self._writer is not None
        async for raw in self._source:
            line = clean_line(raw).decode("utf-8", errors="replace")
            if not line.strip():
                continue
            message, error = check(line)
            if message is not None:
                self._started(getattr(message, "method", None))
                yield line
            elif error is not None:
                log.warning("answered a malformed request (id %r): %s", error.id, error.error.message)
                await self._writer.send(SessionMessage(error))
            else:
                log.warning("skipped a line that is not a JSON-RPC message with an id: %.80r", line)

    def _started(self, method: str | None) -> None:
        if self._on_session_start is None or method == "initialize":
            return
        start, self._on_session_start = self._on_session_start, None
        start()


async def stdin_lines() -> AsyncIterator[bytes]:
    """The process's stdin, line by line, read from a private copy of fd 0; fd 0 itself then points at the
    null device, so nothing else in the process (or a child) reads the client's messages (as the SDK's own
    stdio transport does)."""
    private = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    with os.fdopen(private, "rb") as stdin:
        async for line in anyio.wrap_file(stdin):
            yield line
