"""`memapp profile --budget N`: the session-start profile (pinned memories first, then the most important
and most used) within a token budget, the same one the MCP tool `get_profile` returns."""

from __future__ import annotations

import argparse

from app.cli.common import JSON_HELP, Context
from store.context import Profile, build_profile


def _budget(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def _print(p: Profile) -> None:
    print(p.text or "(no memory fits in this budget)" if p.budget else "(a budget of 0 holds nothing)")
    print(
        f"\n{p.tokens} of {p.budget} tokens: {len(p.memories)} memories ({p.pinned} pinned); "
        f"{p.left_out} left out" + (f", {p.pinned_left_out} of them pinned" if p.pinned_left_out else "")
    )


def cmd_profile(ctx: Context) -> None:
    p = build_profile(ctx.store, ctx.args.budget, touch=not ctx.args.no_touch)
    ctx.emit(p.to_json(), lambda: _print(p))


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "profile",
        help="what an assistant should know at the start of a session, within a token budget",
        description="Pinned memories first, then the most important and most used, never over the budget "
        "(tiktoken count of the text).",
    )
    p.add_argument(
        "--budget", "-b", type=_budget, default=1000, metavar="N", help="token budget (default 1000)"
    )
    p.add_argument("--no-touch", action="store_true", help="do not count the included memories as accessed")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(handler=cmd_profile)
