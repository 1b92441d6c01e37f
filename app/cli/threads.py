"""`memapp threads list|show`: browse imported conversations."""

from __future__ import annotations

import argparse
from typing import Any

from app.cli.common import Context, one_line
from store.message_notes import notes, thread_notes
from store.records import Message, iso
from store.threads import SORTS


def cmd_list(ctx: Context) -> None:
    a = ctx.args
    threads = ctx.store.list_threads(
        text=a.filter, source=a.source, sort=a.sort, limit=a.limit, offset=a.offset
    )

    def human() -> None:
        if not threads:
            print("no threads")
        for t in threads:
            print(
                f"{t.id:>6}  {one_line(t.title, 50):<50}  {t.source:<9} {t.message_count:>5} msgs "
                f"{t.token_count:>8} tok  {iso(t.updated_at)}"
            )

    ctx.emit([t.to_json() for t in threads], human)


def _message_json(m: Message) -> dict[str, Any]:
    data = m.to_json()
    if found := notes(m.metadata):
        data["notes"] = found
    if isinstance(m.metadata.get("tool_calls"), list):
        data["tool_calls"] = m.metadata["tool_calls"]
    return data


def cmd_show(ctx: Context) -> None:
    a = ctx.args
    t = ctx.store.get_thread(a.id)
    messages = ctx.store.get_messages(t.id, offset=a.offset, limit=a.limit)
    summary = ctx.store.get_summary(t.id)
    data = {
        **t.to_json(),
        "metadata": t.metadata,
        "messages": [_message_json(m) for m in messages],
    }
    if summary is not None:
        data["summary"] = summary.to_json()

    def human() -> None:
        print(f"thread {t.id}: {t.title}  ({t.source}, {t.message_count} messages, {t.token_count} tokens)")
        if about := thread_notes(t.metadata):
            print(about)
        if summary is not None:
            print(f"\nsummary (up to message {summary.last_message_seq}, {summary.token_count} tokens):")
            print(summary.content)
        for m in messages:
            print(f"\n[{m.seq}] {m.role}  {iso(m.created_at) or ''}  ({m.token_count} tok)")
            for line in notes(m.metadata):
                print(f"  ({line})")
            if m.content:
                print(m.content)

    ctx.emit(data, human)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("threads", help="list and read imported conversations")
    tsub = p.add_subparsers(dest="threads_command", metavar="ACTION", required=True)
    ls = tsub.add_parser("list", help="threads, most recently active first")
    ls.add_argument("--filter", "-f", help="only titles containing this text")
    ls.add_argument("--source", help="only this source (chatgpt, claude, llm, openwebui, generic, …)")
    ls.add_argument("--sort", choices=sorted(SORTS), default="updated")
    ls.add_argument("--limit", type=int, default=100)
    ls.add_argument("--offset", type=int, default=0)
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(handler=cmd_list)
    show = tsub.add_parser("show", help="one thread with its messages")
    show.add_argument("id", type=int)
    show.add_argument("--offset", type=int, default=0)
    show.add_argument("--limit", type=int, default=100_000)
    show.add_argument("--json", action="store_true")
    show.set_defaults(handler=cmd_show)
