"""What the MCP tests share: a chat.db with threads and memories, how to spawn `memapp mcp` with sockets
refused, and how to read a tool result."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from mcp import StdioServerParameters

from store import Store, ThreadIn
from store.records import MessageIn

ROOT = Path(__file__).resolve().parents[3]
NETGUARD = Path(__file__).resolve().parent / "netguard"
T0 = 1_700_000_000.0  # 2023-11-14T22:13:20Z


def fill(s: Store) -> dict[str, int]:
    """Three threads and four memories; returns the ids the tests refer to."""
    backups = s.write_thread(
        ThreadIn(
            "generic",
            "t1",
            "Home lab backups",
            [
                MessageIn("user", "Should I use restic or borg for the NAS backups?", "m1", T0),
                MessageIn("assistant", "Use restic: it supports S3 and deduplicates.", "m2", T0 + 60),
                MessageIn("user", "OK, we decided on restic with a nightly systemd timer.", "m3", T0 + 120),
            ],
            created_at=T0,
        )
    )
    s.write_thread(
        ThreadIn(
            "chatgpt",
            "t2",
            "Sourdough starter",
            [
                MessageIn(
                    "user", "My sourdough starter smells of acetone, is it dead?", "s1", T0 + 86400 * 30
                ),
                MessageIn("assistant", "No: feed it more often, twice a day.", "s2", T0 + 86400 * 30 + 60),
            ],
            created_at=T0 + 86400 * 30,
        )
    )
    long_thread = s.write_thread(
        ThreadIn(
            "generic",
            "t3",
            "Timer notes",
            [
                MessageIn(
                    "user" if i % 2 == 0 else "assistant",
                    f"note {i} about the systemd timer schedule",
                    f"n{i}",
                    T0 + 86400 * 60 + i,
                )
                for i in range(30)
            ],
            created_at=T0 + 86400 * 60,
        )
    )
    restic = s.add_memory("I prefer restic for backups", "preference", importance=7).memory
    nas = s.add_memory("My NAS is a Synology DS920+", "fact").memory
    pinned = s.add_memory("Always answer in British English", "preference", importance=9, pinned=True).memory
    go = s.add_memory("I am learning Go", "skill", importance=4).memory
    return {
        "backups": backups.thread_id,
        "long": long_thread.thread_id,
        "restic": restic.id,
        "nas": nas.id,
        "pinned": pinned.id,
        "go": go.id,
    }


def server_params(db: Path, *args: str, tmp: Path) -> StdioServerParameters:
    """`memapp mcp` as a client config would start it, keyword-only (no model), sockets refused."""
    cfg = tmp / "mcp-config.toml"
    cfg.write_text("[embedding]\nenabled = false\n")
    memapp = Path(sys.executable).with_name("memapp")
    return StdioServerParameters(
        command=str(memapp),
        args=["mcp", *args],
        env={
            "MEMAPP_DB": str(db),
            "MEMAPP_CONFIG": str(cfg),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(tmp),
            "PYTHONPATH": str(NETGUARD),
        },
        cwd=str(tmp),
    )


def text_of(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")
