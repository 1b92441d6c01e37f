"""`memapp mcp`: serve the memory to AI tools over stdio (Model Context Protocol)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from app.cli.common import Context

if TYPE_CHECKING:
    from store.store import Store


def cmd_mcp(ctx: Context) -> None:
    from app.mcp_server import run_stdio  # the SDK is imported only for this command

    def store() -> Store:
        s = ctx.store
        s.hold_vectors(load=False)  # a long-lived server: vectors held in process from its first search
        return s

    run_stdio(store)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("mcp", help="run the MCP server over stdio (for Claude Desktop, Claude Code, …)")
    p.set_defaults(handler=cmd_mcp)
