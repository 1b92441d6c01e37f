"""`memapp mcp`: serve the memory to AI tools over stdio (Model Context Protocol)."""

from __future__ import annotations

import argparse

from app.cli.common import Context


def cmd_mcp(ctx: Context) -> None:
    from app.mcp_server import run_stdio  # the SDK is imported only for this command

    run_stdio(lambda: ctx.store)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("mcp", help="run the MCP server over stdio (for Claude Desktop, Claude Code, …)")
    p.set_defaults(handler=cmd_mcp, creates=True)  # an MCP client may add the first memory
