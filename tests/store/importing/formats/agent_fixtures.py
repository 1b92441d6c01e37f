"""Coding-agent transcripts built in tests: long sessions whose exact content the tests know.

Hand-written fixtures (tests/fixtures/import/claude-code, codex) cover one trap per line; these builders
make the sizes no one writes by hand (1,000 tool calls, a 1,000-turn session for bench/perf/transcript.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SESSION = "7d3e9a10-2b4c-4d5e-8f60-718293a4b5c6"


def _line(kind: str, uuid: str, parent: str | None, message: dict[str, Any], ts: int) -> str:
    return json.dumps(
        {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": "/home/ana/src/tide",
            "sessionId": SESSION,
            "version": "2.0.31",
            "gitBranch": "main",
            "type": kind,
            "message": message,
            "uuid": uuid,
            "timestamp": f"2025-10-02T{ts // 3600 % 24:02d}:{ts // 60 % 60:02d}:{ts % 60:02d}.000Z",
        }
    )


def claude_session_lines(turns: int, tools_per_turn: int, *, fail_every: int = 0, pad: int = 0) -> list[str]:
    """`turns` exchanges: a prompt, `tools_per_turn` tool calls each with its result, then an answer.
    `pad` adds that many characters of tool output per result (what makes real sessions megabytes)."""
    lines: list[str] = []
    parent: str | None = None
    n = 0
    ts = 0

    def uid() -> str:
        nonlocal n
        n += 1
        return f"00000000-0000-4000-8000-{n:012d}"

    calls = 0
    for t in range(turns):
        u = uid()
        lines.append(
            _line(
                "user",
                u,
                parent,
                {"role": "user", "content": f"Turn {t}: please check tide station {t} and fix its parser."},
                ts,
            )
        )
        parent, ts = u, ts + 1
        for _ in range(tools_per_turn):
            calls += 1
            cid = f"toolu_{calls:06d}"
            u = uid()
            use = {
                "type": "tool_use",
                "id": cid,
                "name": "Bash" if calls % 2 else "Read",
                "input": {"command": f"pytest -k station_{t}_{calls}"},
            }
            lines.append(
                _line(
                    "assistant",
                    u,
                    parent,
                    {"role": "assistant", "model": "claude-sonnet-4-5", "content": [use]},
                    ts,
                )
            )
            parent, ts = u, ts + 1
            failed = bool(fail_every) and calls % fail_every == 0
            result = {
                "type": "tool_result",
                "tool_use_id": cid,
                "content": "ok " + "x" * pad,
                "is_error": failed,
            }
            u = uid()
            lines.append(_line("user", u, parent, {"role": "user", "content": [result]}, ts))
            parent, ts = u, ts + 1
        u = uid()
        answer = f"Station {t}: the parser now reads the timezone field; tests pass for turn {t}."
        lines.append(
            _line(
                "assistant",
                u,
                parent,
                {
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "content": [{"type": "text", "text": answer}],
                },
                ts,
            )
        )
        parent, ts = u, ts + 1
    return lines


def write_session(folder: Path, lines: list[str], name: str = SESSION) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path
