"""A stdio session's start: the embedding model loads in the background once the client has its
`initialize` answer, not at the first search_memory (issue 28.26). JSON-RPC lines go through the server's
real stdio path (the guard and the SDK's stdio reader and writer) in process, so the test can watch the
model being loaded without any tool call."""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from app.mcp.server import build_server
from embeddings import FakeEmbedder
from store import Store
from tests.app.mcp.mcp_helpers import fill

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}


class SlowModel(FakeEmbedder):
    """The fake embedder, with a load that takes until the test lets it finish (and says when it began)."""

    def __init__(self) -> None:
        super().__init__()
        self.started = threading.Event()
        self.release = threading.Event()
        self.is_loaded = False

    @property
    def loaded(self) -> bool:
        return self.is_loaded

    def load(self) -> None:
        self.started.set()
        self.release.wait(30)
        self.is_loaded = True


class Wire:
    """The client's side of the pipes: lines in, lines out."""

    def __init__(self) -> None:
        self.to_server: MemoryObjectSendStream[bytes]
        self._incoming: MemoryObjectReceiveStream[bytes]
        self.to_server, self._incoming = anyio.create_memory_object_stream[bytes](100)
        self._out_send, self.from_server = anyio.create_memory_object_stream[str](100)

    async def lines(self) -> AsyncIterator[bytes]:
        async with self._incoming:
            async for line in self._incoming:
                yield line

    # the stdout the SDK writes to
    async def write(self, text: str) -> None:
        await self._out_send.send(text)

    async def flush(self) -> None:
        pass

    async def send(self, message: dict[str, Any]) -> None:
        await self.to_server.send(json.dumps(message).encode() + b"\n")

    async def receive(self) -> dict[str, Any]:
        with anyio.fail_after(30):
            answer: dict[str, Any] = json.loads(await self.from_server.receive())
            return answer


async def test_the_model_loads_after_initialize_without_a_tool_call(tmp_path: Path) -> None:
    with Store(tmp_path / "chat.db", embedder=FakeEmbedder()) as filling:
        fill(filling)
    model = SlowModel()
    store = Store(tmp_path / "chat.db", embedder=model)
    server = build_server(lambda: store, warm_up_model=True)
    wire = Wire()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve_lines, wire.lines(), cast("Any", wire))
            await wire.send(INITIALIZE)
            assert (await wire.receive())["id"] == 0
            assert not model.started.is_set()  # initialize is answered first, with nothing loaded
            await wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            assert await anyio.to_thread.run_sync(model.started.wait, 30)  # no tool was called
            model.release.set()
            call = {"name": "search_memory", "arguments": {"query": "restic backups"}}
            await wire.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call})
            found = await wire.receive()
            assert found["id"] == 1 and found["result"]["structuredContent"]["mode"] == "hybrid"
            assert model.is_loaded
            await wire.to_server.aclose()  # the client goes: the session ends
    finally:
        model.release.set()
        store.close()


async def test_without_warm_up_nothing_loads_before_the_first_search(tmp_path: Path) -> None:
    """The in-process server of the other tests (and `build_server` by default) loads nothing by itself."""
    model = SlowModel()
    store = Store(tmp_path / "chat.db", embedder=model)
    server = build_server(lambda: store)
    wire = Wire()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve_lines, wire.lines(), cast("Any", wire))
            await wire.send(INITIALIZE)
            await wire.receive()
            await wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            await wire.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            assert (await wire.receive())["id"] == 1
            assert not model.started.is_set()
            await wire.to_server.aclose()
    finally:
        store.close()
