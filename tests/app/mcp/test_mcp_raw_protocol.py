"""`memapp mcp` answers every request, whatever its text (issue 20, D15: a request with a lone surrogate
escape like "\\ud800" got no response at all, and the client waited forever). Raw JSON-RPC lines go to a
spawned server here, below the SDK client, which could not even send such text."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.mcp.stdio import clean_line

REPO = Path(__file__).resolve().parents[3]


class RawServer:
    def __init__(self, tmp: Path) -> None:
        cfg = tmp / "config.toml"
        cfg.write_text("[embedding]\nenabled = false\n")
        env = {**os.environ, "MEMAPP_DB": str(tmp / "chat.db"), "MEMAPP_CONFIG": str(cfg)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "app", "mcp", "--create"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=REPO,
        )

    def send(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text.encode() + b"\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float = 60.0) -> dict:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        assert ready, "no response from the server"
        return json.loads(self.proc.stdout.readline())

    def call(self, rid: int, name: str, arguments_json: str) -> dict:
        params = '{"name": "' + name + '", "arguments": ' + arguments_json + "}"
        self.send(
            '{"jsonrpc": "2.0", "id": ' + str(rid) + ', "method": "tools/call", "params": ' + params + "}"
        )
        return self.receive()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RawServer]:
    s = RawServer(tmp_path)
    s.send(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "1"},
                },
            }
        )
    )
    assert s.receive()["id"] == 0
    s.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    yield s
    s.proc.kill()
    s.proc.wait()


def test_lone_surrogates_are_answered_as_u_fffd(server: RawServer) -> None:
    found = server.call(1, "search_memory", '{"query": "a\\ud800b"}')
    assert found["id"] == 1 and not found["result"]["isError"]
    added = server.call(2, "add_memory", '{"content": "tea\\udc00 please", "category": "preference"}')
    assert (
        added["id"] == 2 and added["result"]["structuredContent"]["memory"]["content"] == "tea\ufffd please"
    )
    pair = server.call(3, "add_memory", '{"content": "smile \\ud83d\\ude00", "category": "fact"}')
    assert pair["result"]["structuredContent"]["memory"]["content"] == "smile \U0001f600"


def test_a_malformed_line_does_not_stop_the_next_request(server: RawServer) -> None:
    server.send('{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "search_mem')
    listed = server.call(6, "list_memories", "{}")
    assert listed["id"] == 6 and not listed["result"]["isError"]
    wrong = server.call(7, "search_memory", '{"query": 5}')
    assert wrong["id"] == 7 and wrong["result"]["isError"]
    assert "query" in wrong["result"]["content"][0]["text"]


# Lines the SDK's parser rejects though they carry a request's id: each must be answered (issue 28.23).
MALFORMED: list[tuple[str, int | str, int]] = [
    ('{"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": "oops"}', 11, -32600),
    ('{"jsonrpc": "2.0", "id": 12, "method": "tools/list", "params": [1]}', 12, -32602),
    ('{"jsonrpc": "2.0", "id": 13, "params": {}}', 13, -32600),
    ('{"jsonrpc": "2.0", "id": "req-14", "method": 5}', "req-14", -32600),
    ('{"jsonrpc": "1.0", "id": 15, "method": "tools/list"}', 15, -32600),
    ('{"id": 16, "method": "tools/list", "params": {}}', 16, -32600),
    ('{"jsonrpc": "2.0", "id": 17, "method": "tools/call", "params": 42}', 17, -32600),
]


def test_malformed_requests_with_an_id_get_a_json_rpc_error(server: RawServer) -> None:
    for line, rid, code in MALFORMED:
        server.send(line)
        answer = server.receive()
        assert answer["id"] == rid and answer["error"]["code"] == code, (line, answer)
        assert "result" not in answer and answer["error"]["message"]
    # A malformed response, or a line with no id, cannot be answered: the next request is served next.
    server.send('{"jsonrpc": "2.0", "id": 18, "result": "not an object"}')
    server.send('{"jsonrpc": "2.0", "id": null, "method": "tools/list"}')
    listed = server.call(19, "list_memories", "{}")
    assert listed["id"] == 19 and not listed["result"]["isError"]


def test_clean_line_keeps_pairs_and_escaped_backslashes() -> None:
    assert clean_line(rb'"a\ud800b"') == rb'"a\ufffdb"'
    assert clean_line(rb'"\udc00"') == rb'"\ufffd"'
    assert clean_line(rb'"\ud83d\ude00"') == rb'"\ud83d\ude00"'
    assert clean_line(rb'"\\ud800"') == rb'"\\ud800"'  # a backslash, then the letters "ud800"
    assert clean_line(rb'"\\\ud800"') == rb'"\\\ufffd"'  # a backslash, then a lone surrogate
