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
import threading
import time
from collections.abc import AsyncIterable, Callable, Iterable
from importlib import metadata
from typing import TYPE_CHECKING, Annotated, Any, cast

import anyio
import apsw
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.context import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp.types import CallToolResult, InputRequiredResult, TextContent, ToolAnnotations
from pydantic import ValidationError

from app.mcp.arg_errors import explain
from app.mcp.args import MAX_ID
from app.mcp.stdio import GuardedLines, stdin_lines
from app.mcp.table import TOOLS, ToolSpec
from store import StoreError
from store.secrets import redact_text, redact_tree

if TYPE_CHECKING:
    from store import Store

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
    if isinstance(exc, OverflowError):  # a number past SQLite's integers that no argument bound caught
        return ToolError(
            f"a number in the arguments is too large (ids go up to {MAX_ID:,}); nothing was changed"
        )
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


class MemappServer(MCPServer):
    """The SDK's server with memapp's stdio guard (app.mcp.stdio), argument errors in one line, and the
    embedding model loaded in the background once a session starts."""

    def __init__(
        self, *, tools: dict[str, ToolSpec], warm_up: Callable[[], None] | None, **kwargs: Any
    ) -> None:
        super().__init__("memapp", **kwargs)
        self._specs = tools
        self._warm_up = warm_up

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            spec = self._specs.get(name)
            if spec is None or not isinstance(exc.__cause__, ValidationError):
                raise
            # `from` the ValidationError: the SDK then logs the rejected field names, as before.
            raise ToolError(explain(name, spec.fn, exc.__cause__, arguments)) from exc.__cause__

    async def run_stdio_async(self) -> None:
        await self.serve_lines(stdin_lines())

    async def serve_lines(
        self, source: AsyncIterable[bytes], stdout: anyio.AsyncFile[str] | None = None
    ) -> None:
        """Serve one session reading the client's lines (bytes) from `source` and writing to `stdout`
        (default: the process's stdout, claimed the SDK's way)."""
        lines = GuardedLines(source, on_session_start=self._start_warm_up)
        async with stdio_server(stdin=cast("anyio.AsyncFile[str]", lines), stdout=stdout) as (read, write):
            lines.answer_through(write)
            low = self._lowlevel_server
            await low.run(read, write, low.create_initialization_options())

    def _start_warm_up(self) -> None:
        if self._warm_up is not None:
            threading.Thread(target=self._warm_up, name="memapp-mcp-warm-up", daemon=True).start()


def warm_up(store: Callable[[], Store]) -> Callable[[], None]:
    """What a session's start sets going in a thread: open the store, load the embedding model and read
    the vectors, keyword row lengths and tokenizer the first search and profile would otherwise wait for
    (0.47 s of the first search_memory, issue 28.26). A call that comes meanwhile waits for the same
    locks (the store's, the model's), never loads twice; a failure is left for that call to report."""

    def run() -> None:
        t0 = time.perf_counter()
        try:
            s = store()
            s.tokens.load()
            if s.load_model():
                s.hold_vectors(load=True)
            s.hold_keywords(load=True)
        except Exception as exc:  # noqa: BLE001 - the first tool call meets the same problem and says it
            log.info("warm-up stopped: %s: %s", type(exc).__name__, exc)
            return
        log.info("warm-up done in %.2f s (%s)", time.perf_counter() - t0, s.semantic_state)

    return run


def build_server(
    open_store: Callable[[], Store],
    *,
    read_only: bool = False,
    tools: Iterable[ToolSpec] = TOOLS,
    warm_up_model: bool = False,
) -> MemappServer:
    """The server with every tool of the table (only the read-only ones when `read_only`); with
    `warm_up_model` the model loads in the background when a stdio session starts."""
    instructions = INSTRUCTIONS_READ_ONLY if read_only else INSTRUCTIONS
    store = LazyStore(open_store)
    chosen = {spec.name: spec for spec in tools if spec.read_only or not read_only}
    server = MemappServer(
        tools=chosen,
        warm_up=warm_up(store) if warm_up_model else None,
        instructions=instructions,
        version=version(),
        log_level="WARNING",
    )
    for spec in chosen.values():
        server.add_tool(
            _bind(spec, store),
            name=spec.name,
            title=spec.title,
            description=inspect.cleandoc(spec.fn.__doc__ or ""),
            annotations=tool_annotations(spec),
        )
    return server


def run_stdio(open_store: Callable[[], Store], *, read_only: bool = False) -> None:
    server = build_server(open_store, read_only=read_only, warm_up_model=True)
    server.run()
