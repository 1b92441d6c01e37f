"""The MCP server: every tool of app.mcp.table registered on the SDK's MCPServer, over stdio.

How a table row becomes a tool: `_bind` wraps the function so that the client sees its arguments but not
its `store` (the server supplies one, opened on the first call, so `initialize` answers before numpy or
SQLite are touched), and so that the result goes out twice: as structuredContent (the results model;
the SDK publishes its schema as outputSchema and checks the result against it) and as readable text (the
model's `render()`, capped at MAX_CHARS except for budgeted tools).

Errors are tool errors (isError results that say what and why), never a crashed server and never a bare
"Error executing tool X": a StoreError (unknown id, bad input, a refused merge) keeps its message, a locked
database says so, and anything unexpected is logged to stderr with its traceback and reported by type and
message. Only protocol is written to stdout. Sync tools run in the SDK's worker threads; the Store gives
each thread its own SQLite connection.
"""

from __future__ import annotations

import inspect
import logging
import os
import re
import threading
from collections.abc import Callable, Iterable
from importlib import metadata
from typing import TYPE_CHECKING, Annotated, Any

import apsw
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations

from app.mcp.table import TOOLS, ToolSpec
from store.errors import StoreError
from store.secrets import redact_text
from store.secrets.rows import redact_tree

if TYPE_CHECKING:
    from store.store import Store

log = logging.getLogger(__name__)

MAX_CHARS = 8000  # cap on one result's text (structuredContent is bounded by the tools' own limits)

INSTRUCTIONS = (
    "memapp is the user's private, local memory: durable facts about them (preferences, projects, skills, "
    "facts) and their past AI conversations. At the start of a session call get_profile for what to know "
    "about the user. Call search_memory before answering anything that may depend on what they told you "
    "before, and search_conversations / read_thread to look back at past conversations. When they state a "
    "lasting preference or fact, call add_memory; when a memory is wrong or outdated, correct it with "
    "update_memory or move it to the trash with delete_memory. Never change a pinned memory unless the user "
    "asks."
)

INSTRUCTIONS_READ_ONLY = (
    "memapp is the user's private, local memory: durable facts about them (preferences, projects, skills, "
    "facts) and their past AI conversations. This server is read-only. At the start of a session call "
    "get_profile for what to know about the user; call search_memory before answering anything that may "
    "depend on what they told you before, and search_conversations / read_thread to look back at past "
    "conversations."
)


def version() -> str:
    try:
        return metadata.version("memapp")
    except metadata.PackageNotFoundError:  # running from a source tree that was never installed
        return "0+unknown"


def cap(text: str) -> str:
    if len(text) <= MAX_CHARS:
        return text
    return text[: MAX_CHARS - 60].rstrip() + "\n… (truncated to fit the result size cap; page or narrow it)"


class LazyStore:
    """The store, opened once, on the first tool call, whichever worker thread makes it."""

    def __init__(self, open_store: Callable[[], Store]) -> None:
        self._open = open_store
        self._store: Store | None = None
        self._lock = threading.Lock()

    def __call__(self) -> Store:
        with self._lock:
            if self._store is None:
                self._store = self._open()
            return self._store


def _failure(spec: ToolSpec, exc: Exception) -> ToolError:
    if isinstance(exc, StoreError):
        return ToolError(str(exc))
    if isinstance(exc, apsw.BusyError):
        return ToolError(
            "chat.db stayed locked by another memapp process (an import?) past the busy timeout; nothing was "
            "changed: try again in a moment"
        )
    log.exception("tool %s failed", spec.name)
    return ToolError(f"unexpected {type(exc).__name__} in memapp: {exc} (details are in the server's log)")


def _bind(spec: ToolSpec, store: Callable[[], Store]) -> Callable[..., CallToolResult]:
    """The tool function the SDK sees: `spec.fn` without its store parameter, returning a CallToolResult
    whose structured part is validated against the function's declared results model."""
    fn = spec.fn
    sig = inspect.signature(fn, eval_str=True, locals={"Store": object})
    params = list(sig.parameters.values())
    assert params and params[0].name == "store", f"{spec.name}: the first parameter must be the store"
    model = sig.return_annotation

    def call(**arguments: Any) -> CallToolResult:
        try:
            out = fn(store(), **arguments)
        except ToolError:
            raise
        except Exception as exc:
            raise _failure(spec, exc) from exc
        # Nothing detected as a secret leaves for the assistant, whatever `[privacy] redact` stored
        # (docs/guide/privacy.md); before the cap, so a cut never leaves half a key.
        text = redact_text(out.render())
        structured, _ = redact_tree(out.model_dump(mode="json", by_alias=True))
        return CallToolResult(
            content=[TextContent(type="text", text=cap(text) if spec.capped else text)],
            structured_content=structured,
        )

    call.__name__ = fn.__name__
    call.__doc__ = fn.__doc__
    call.__signature__ = sig.replace(  # type: ignore[attr-defined]
        parameters=params[1:], return_annotation=Annotated[CallToolResult, model]
    )
    return call


def tool_annotations(spec: ToolSpec) -> ToolAnnotations:
    return ToolAnnotations(
        title=spec.title,
        read_only_hint=spec.read_only,
        destructive_hint=False if spec.read_only else spec.destructive,
        idempotent_hint=True if spec.read_only else spec.idempotent,
        open_world_hint=False,
    )


def build_server(
    open_store: Callable[[], Store], *, read_only: bool = False, tools: Iterable[ToolSpec] = TOOLS
) -> MCPServer:
    """The server with every tool of the table (only the read-only ones when `read_only`)."""
    instructions = INSTRUCTIONS_READ_ONLY if read_only else INSTRUCTIONS
    server: MCPServer = MCPServer("memapp", instructions=instructions, version=version(), log_level="WARNING")
    store = LazyStore(open_store)
    for spec in tools:
        if read_only and not spec.read_only:
            continue
        server.add_tool(
            _bind(spec, store),
            name=spec.name,
            title=spec.title,
            description=inspect.cleandoc(spec.fn.__doc__ or ""),
            annotations=tool_annotations(spec),
        )
    return server


# A lone UTF-16 surrogate escape ("\ud800") is valid JSON text but not a string the SDK's parser accepts:
# the request was dropped without an answer and the client waited forever. Such escapes are read as
# U+FFFD (as imports do), a proper pair is kept, and an escaped backslash is never mistaken for one.
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


def _clean_stdin() -> None:
    """Put a pipe on fd 0 that a thread fills with the real stdin's lines, cleaned (see clean_line)."""
    real = os.dup(0)
    read_end, write_end = os.pipe()
    os.dup2(read_end, 0)
    os.close(read_end)

    def pump() -> None:
        with os.fdopen(real, "rb") as source, os.fdopen(write_end, "wb") as sink:
            for line in source:
                sink.write(clean_line(line))
                sink.flush()

    threading.Thread(target=pump, name="memapp-mcp-stdin", daemon=True).start()


def run_stdio(open_store: Callable[[], Store], *, read_only: bool = False) -> None:
    server = build_server(open_store, read_only=read_only)
    _clean_stdin()
    server.run()
