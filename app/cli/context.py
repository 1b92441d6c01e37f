"""`memapp context THREAD --budget N …`: the message list to hand a chat model, within a token budget."""

from __future__ import annotations

import argparse

from app.cli.common import JSON_HELP, Context, int_arg
from store.context import ContextResult, build_context


def _print(r: ContextResult, thread_id: int) -> None:
    s, m = r.token_stats, r.metadata
    print(
        f"thread {thread_id}: {s.total} of {s.budget} tokens ({r.available} usable after the safety margin "
        f"and output reserve)"
    )
    rows = [
        ("system", s.system, ""),
        ("memories", s.memories, f"{m.pinned_memories} pinned, {m.retrieved_memories} retrieved"),
        ("summary", s.summary, "summary and topics" if m.used_summary else ""),
        ("condensed", s.condensed, f"{len(r.condensed_seqs)} older messages"),
        ("recent", s.recent, f"{len(r.recent_seqs)} latest messages, verbatim"),
    ]
    for name, tokens, note in rows:
        print(f"  {name:<10}{tokens:>7}  {note}")
    print(
        f"  {m.included_messages} messages included, {m.summarized_messages} left out"
        + (f", {len(r.truncated_seqs)} cut to fit" if r.truncated_seqs else "")
    )
    for msg in r.messages:
        print(f"\n--- {msg['role']} ---")
        print(msg["content"])


def cmd_context(ctx: Context) -> None:
    a = ctx.args
    r = build_context(
        ctx.store,
        a.thread,
        a.budget,
        query=a.query,
        system=a.system,
        output_reserve=a.output_reserve,
        touch=not a.no_touch,
    )
    ctx.emit(r.to_json(), lambda: _print(r, a.thread))


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "context",
        help="build the message list for a chat model within a token budget",
        description="Tier 1: pinned and relevant memories, the thread summary and topics (~10%); tier 2: older "
        "messages condensed (~35%); tier 3: the last messages verbatim (~55%). Never over budget.",
    )
    p.add_argument("thread", type=int, metavar="THREAD", help="thread id")
    p.add_argument(
        "--budget",
        "-b",
        type=int_arg("--budget", 0),
        required=True,
        metavar="N",
        help="token budget (tiktoken)",
    )
    p.add_argument("--query", "-q", help="retrieve memories for this text (default: the latest user message)")
    p.add_argument("--system", help="system prompt to put first")
    p.add_argument(
        "--output-reserve",
        type=int_arg("--output-reserve", 0),
        metavar="N",
        help="tokens kept free for the reply (default: context.output_reserve)",
    )
    p.add_argument("--no-touch", action="store_true", help="do not count the included memories as accessed")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(handler=cmd_context)
