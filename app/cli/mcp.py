"""`memapp mcp`: serve the memory to AI tools over stdio (Model Context Protocol).

Why a missing chat.db is refused unless `--create` is given: an MCP client starts the server from a
config file nobody watches, and a typo in its path would otherwise create an empty memory that the
assistant then fills, while the real one sits unused. The check happens before the protocol starts, so
the client's log shows the one-line reason.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from app.cli.common import Context, UsageError

if TYPE_CHECKING:
    from store import Store


def cmd_mcp(ctx: Context) -> None:
    if not ctx.db_path.exists() and not ctx.args.create:
        raise UsageError(
            f"{ctx.db_path} does not exist; check --db / MEMAPP_DB in your MCP client's config, or add "
            "--create to start a new, empty memory there"
        )
    from app.mcp.server import run_stdio  # the SDK is imported only for this command

    def store() -> Store:
        s = ctx.store
        s.hold_vectors(load=False)  # a long-lived server: vectors held in process from its first search
        s.hold_keywords()  # ... and keyword matches ranked in process
        # A read-only server never writes chat.db, access counts included (issue 28, 20); otherwise they
        # are written without making an answer wait (store.access).
        s.track_access = not ctx.args.read_only
        return s

    run_stdio(store, read_only=ctx.args.read_only)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "mcp",
        help="run the MCP server over stdio (for Claude Desktop, Claude Code, …)",
        description="Serve the memory over stdio (Model Context Protocol). The database must exist unless "
        "--create is given.",
    )
    p.add_argument("--read-only", action="store_true", help="offer only the tools that change nothing")
    p.add_argument("--create", action="store_true", help="create chat.db if it does not exist yet")
    p.set_defaults(handler=cmd_mcp, creates=True)  # cmd_mcp checks the database itself (--create)
