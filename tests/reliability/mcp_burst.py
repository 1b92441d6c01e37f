"""A burst of MCP tool calls sent to one `memapp mcp` without waiting for answers (raw JSON-RPC over
stdio), as assistants that call tools in parallel do; used by tests/reliability/test_mcp_burst.py and
bench/perf/write_burst.py.

Why raw JSON-RPC: the point is the server's side (every call answered, how soon), and pipelining N
requests through the SDK client would measure the client's own queueing too.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Burst:
    sent: int
    answered: int = 0
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0  # from the first request written to the last answer read
    first_answer: float = 0.0
    results: dict[int, dict[str, Any]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "sent": self.sent,
            "answered": self.answered,
            "errors": len(self.errors),
            "first_error": self.errors[0] if self.errors else None,
            "seconds": round(self.seconds, 3),
            "first_answer_seconds": round(self.first_answer, 3),
        }


def _request(rid: int, method: str, params: dict[str, Any]) -> bytes:
    return (json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}) + "\n").encode()


class McpProcess:
    """`cmd` (a `memapp mcp` command line) started and initialised; `burst()` sends calls at once."""

    def __init__(self, cmd: list[str], env: dict[str, str], cwd: Path, stderr: Path) -> None:
        self._err = stderr.open("wb")
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err, env=env, cwd=cwd
        )
        self._lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self._send(
            _request(
                0,
                "initialize",
                {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "burst", "version": "1"},
                },
            )
        )
        got = self._answers({0}, time.monotonic() + 120)
        assert 0 in got, "the server did not answer initialize"
        self._send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(b"")

    def _send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def _answers(
        self, wanted: set[int], deadline: float, on_first: list[float] | None = None
    ) -> dict[int, dict[str, Any]]:
        got: dict[int, dict[str, Any]] = {}
        while wanted - got.keys():
            try:
                line = self._lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            if not line:  # the server's stdout closed
                break
            msg = json.loads(line)
            if "id" in msg and msg["id"] in wanted:
                got[int(msg["id"])] = msg
                if on_first is not None and not on_first:
                    on_first.append(time.monotonic())
            if time.monotonic() > deadline:
                break
        return got

    def burst(self, calls: list[tuple[str, dict[str, Any]]], timeout: float) -> Burst:
        """Write every `tools/call` (name, arguments) at once, then read until all are answered or
        `timeout` seconds have passed."""
        first = 1_000_000 + int(time.monotonic() * 1000) % 1_000_000  # ids unique across bursts
        ids = list(range(first, first + len(calls)))
        data = b"".join(
            _request(i, "tools/call", {"name": name, "arguments": args})
            for i, (name, args) in zip(ids, calls, strict=True)
        )
        t0 = time.monotonic()
        writer = threading.Thread(target=self._send, args=(data,), daemon=True)  # the pipe may fill up
        writer.start()
        first_seen: list[float] = []
        got = self._answers(set(ids), t0 + timeout, first_seen)
        result = Burst(sent=len(calls), answered=len(got), seconds=time.monotonic() - t0, results=got)
        result.first_answer = (first_seen[0] - t0) if first_seen else 0.0
        for i in ids:
            msg = got.get(i)
            if msg is None:
                continue
            if "error" in msg:
                result.errors.append(str(msg["error"])[:300])
            elif msg["result"].get("isError"):
                result.errors.append(str(msg["result"]["content"])[:300])
        return result

    def close(self) -> int:
        """End the server the way a client does (stdin closed) and return its exit code."""
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self._err.close()
        return code


def add_calls(n: int, tag: str = "burst") -> list[tuple[str, dict[str, Any]]]:
    """`n` add_memory calls of distinct facts (none merges into another: no model, exact repeats only)."""
    return [
        ("add_memory", {"content": f"{tag} fact number {i}: the {i}th thing to remember", "category": "fact"})
        for i in range(n)
    ]
