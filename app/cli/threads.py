"""`memapp threads list|show|rename|archive|unarchive|rm`: browse and manage imported conversations.

Archive hides a thread from lists, search and MCP (and is undone by unarchive); rm deletes it for good
(only importing the export again brings it back), so it asks first on a terminal and wants --yes in a
script.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from app.cli.common import EXIT_FAILED, JSON_HELP, Context, UsageError
from app.text import fit, one_line
from store import SORTS, Message, iso
from store.message_notes import notes, thread_notes


def cmd_list(ctx: Context) -> None:
    a = ctx.args
    archived = None if a.all else bool(a.archived)
    threads = ctx.store.list_threads(
        text=a.filter, source=a.source, sort=a.sort, limit=a.limit, offset=a.offset, archived=archived
    )

    def human() -> None:
        if not threads:
            print("no threads")
        for t in threads:
            print(
                f"{t.id:>6}  {fit(t.title, 50)}  {t.source:<9} {t.message_count:>5} msgs "
                f"{t.token_count:>8} tok  {iso(t.updated_at)}{'  (archived)' if t.archived_at else ''}"
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


def cmd_rename(ctx: Context) -> None:
    t = ctx.store.rename_thread(ctx.args.id, ctx.args.title)
    ctx.emit(t.to_json(), lambda: print(f"renamed thread {t.id}: {t.title}"))


def _archive(archived: bool) -> Callable[[Context], None]:
    def handler(ctx: Context) -> None:
        t = ctx.store.archive_thread(ctx.args.id, archived)
        done = (
            "archived (hidden from lists and search; `memapp threads unarchive` brings it back)"
            if archived
            else "unarchived"
        )
        ctx.emit(t.to_json(), lambda: print(f"{done}: thread {t.id} {t.title}"))

    return handler


def cmd_rm(ctx: Context) -> int | None:
    t = ctx.store.get_thread(ctx.args.id)
    if not ctx.args.yes:
        if not sys.stdin.isatty():
            raise UsageError(
                f"deleting thread {t.id} is for good: add --yes (or `memapp threads archive {t.id}` to hide it)"
            )
        answer = input(
            f"Delete thread {t.id} “{one_line(t.title, 60)}” ({t.message_count} messages) for good? [y/N] "
        )
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing deleted")
            return EXIT_FAILED
    ctx.store.delete_thread(t.id)
    ctx.emit(
        {"deleted": t.to_json()},
        lambda: print(
            f"deleted thread {t.id} ({t.message_count} messages); importing its export again restores it"
        ),
    )
    return None


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("threads", help="list and read imported conversations")
    tsub = p.add_subparsers(dest="threads_command", metavar="ACTION", required=True)
    ls = tsub.add_parser("list", help="threads, most recently active first")
    ls.add_argument("--filter", "-f", help="only titles containing this text")
    ls.add_argument("--source", help="only this source (chatgpt, claude, llm, openwebui, generic, …)")
    ls.add_argument("--sort", choices=sorted(SORTS), default="updated")
    ls.add_argument("--limit", type=int, default=100)
    ls.add_argument("--offset", type=int, default=0)
    shown = ls.add_mutually_exclusive_group()
    shown.add_argument("--archived", action="store_true", help="only archived threads")
    shown.add_argument("--all", action="store_true", help="archived threads too")
    ls.add_argument("--json", action="store_true", help=JSON_HELP)
    ls.set_defaults(handler=cmd_list)
    show = tsub.add_parser("show", help="one thread with its messages")
    show.add_argument("id", type=int)
    show.add_argument("--offset", type=int, default=0)
    show.add_argument("--limit", type=int, default=100_000)
    show.add_argument("--json", action="store_true", help=JSON_HELP)
    show.set_defaults(handler=cmd_show)
    rn = tsub.add_parser("rename", help="give a thread a new title")
    rn.add_argument("id", type=int)
    rn.add_argument("title")
    rn.add_argument("--json", action="store_true", help=JSON_HELP)
    rn.set_defaults(handler=cmd_rename)
    for name, archived, help_ in (
        ("archive", True, "hide a thread from lists, search and MCP (kept whole; unarchive undoes it)"),
        ("unarchive", False, "show an archived thread again"),
    ):
        ar = tsub.add_parser(name, help=help_)
        ar.add_argument("id", type=int)
        ar.add_argument("--json", action="store_true", help=JSON_HELP)
        ar.set_defaults(handler=_archive(archived))
    rm = tsub.add_parser("rm", help="delete a thread, its messages, summary and vectors for good")
    rm.add_argument("id", type=int)
    rm.add_argument("--yes", "-y", action="store_true", help="do not ask (needed when not on a terminal)")
    rm.add_argument("--json", action="store_true", help=JSON_HELP)
    rm.set_defaults(handler=cmd_rm)
