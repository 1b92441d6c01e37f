"""`memapp memory …`: add, list, show, edit, pin, unpin, rm (to trash), restore, history."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from app.cli.common import (
    JSON_HELP,
    Context,
    UsageError,
    importance_arg,
    int_arg,
    report_duplicate,
)
from app.text import fit, one_line
from store import CATEGORIES, DuplicateMemoryError, Memory, iso
from store.truth import Source

MEMORY_ID = int_arg("memory id")


def _print_memory_line(m: Memory) -> None:
    pin = "*" if m.pinned else ("~" if m.valid_until is not None else " ")  # ~: superseded
    print(f"{m.id:>6} {pin} {m.category:<10} {m.importance:>2}  {fit(m.content, 70)}  used {m.access_count}")


def _print_memory(m: Memory, source: Source, older: list[Memory], successor: Memory | None) -> None:
    superseded = "  (superseded)" if m.valid_until is not None else ""
    print(
        f"memory {m.id}{'  (pinned)' if m.pinned else ''}{'  (in trash)' if m.deleted_at else ''}{superseded}"
    )
    print(f"  category:    {m.category}")
    print(f"  importance:  {m.importance}")
    print(f"  accessed:    {m.access_count} times, last {iso(m.last_accessed) or 'never'}")
    print(f"  created:     {iso(m.created_at)}   updated: {iso(m.updated_at)}")
    print(f"  origin:      {m.origin}{'  (edited by hand)' if m.user_edited else ''}")
    print(f"  source:      {source.describe()}")
    print(f"  valid:       from {iso(m.valid_from or m.created_at)}  until {iso(m.valid_until) or 'now'}")
    if successor is not None:
        print(f"  superseded by memory {successor.id}: {one_line(successor.content, 70)}")
    for o in older:
        print(f"  replaces memory {o.id} (until {iso(o.valid_until)}): {one_line(o.content, 60)}")
    print()
    print(m.content)


def cmd_add(ctx: Context) -> int | None:
    a = ctx.args
    text = sys.stdin.read() if a.text == "-" else a.text
    if not text.strip():
        raise UsageError("the memory text is empty" + (" (nothing came on stdin)" if a.text == "-" else ""))
    try:
        res = ctx.store.add_memory(
            text.strip(), a.category, importance=a.importance, pinned=a.pin, force=a.force
        )
    except DuplicateMemoryError as exc:
        return report_duplicate(ctx, exc)
    data = {
        **res.memory.to_json(),
        "action": res.action,
        "superseded": list(res.superseded),
        "conflicts": list(res.conflicts),
    }
    if res.similarity is not None:
        data["similarity"] = round(res.similarity, 4)

    def human() -> None:
        verb = {"added": "added", "merged": "merged into", "exists": "already stored as"}[res.action]
        print(f"{verb} memory {res.memory.id}")
        for old in res.superseded:
            print(f"it supersedes memory {old} (kept, marked as no longer current)")
        if res.conflicts:
            ids = ", ".join(str(c) for c in res.conflicts)
            print(f"needs review: conflict {ids} (memapp conflicts list)")
        if ctx.store.vector_problem:
            print(f"(no vector stored: {ctx.store.vector_problem})")

    ctx.emit(data, human)
    return None


def cmd_list(ctx: Context) -> None:
    a = ctx.args
    mems = ctx.store.list_memories(
        category=a.category, pinned=True if a.pinned else None, trash=a.trash, state=a.state, limit=a.limit
    )

    def human() -> None:
        if not mems:
            print("no memories" + (" in the trash" if a.trash else ""))
        for m in mems:
            _print_memory_line(m)

    ctx.emit([m.to_json() for m in mems], human)


def cmd_show(ctx: Context) -> None:
    store = ctx.store
    m = store.get_memory(ctx.args.id)
    history = store.memory_history(m.id)
    source = store.memory_source(m)
    older = [store.get_memory(i) for i in store.superseded_by_memory(m.id)]
    successor = store.get_memory(m.superseded_by) if m.superseded_by is not None else None
    data = {
        **m.to_json(),
        "source": source.to_json(),
        "supersedes": [o.id for o in older],
        "history": [h.to_json() for h in history],
    }
    ctx.emit(data, lambda: _print_memory(m, source, older, successor))


def cmd_edit(ctx: Context) -> None:
    a = ctx.args
    if a.text is None and a.category is None and a.importance is None:
        raise UsageError("nothing to change: give --text, --category and/or --importance")
    m = ctx.store.edit_memory(a.id, content=a.text, category=a.category, importance=a.importance)
    ctx.emit(m.to_json(), lambda: print(f"edited memory {m.id}"))


def cmd_supersede(ctx: Context) -> None:
    """By hand: the newer memory replaces the older one (an update memapp kept as a second memory)."""
    a = ctx.args
    old = ctx.store.supersede_memory(a.old, a.new)
    ctx.emit(old.to_json(), lambda: print(f"memory {old.id} is superseded by memory {a.new}"))


def _simple(action: str) -> Any:
    def handler(ctx: Context) -> None:
        s = ctx.store
        mid = ctx.args.id
        m = {
            "pin": lambda: s.pin_memory(mid, True),
            "unpin": lambda: s.pin_memory(mid, False),
            "rm": lambda: s.delete_memory(mid),
            "restore": lambda: s.restore_memory(mid),
        }[action]()
        done = {"pin": "pinned", "unpin": "unpinned", "rm": "moved to the trash:", "restore": "restored"}[
            action
        ]
        ctx.emit(m.to_json(), lambda: print(f"{done} memory {m.id}"))

    return handler


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("memory", help="add, list, edit, pin and trash long-term memories")
    msub = p.add_subparsers(dest="memory_command", metavar="ACTION", required=True)

    add = msub.add_parser("add", help="add a memory (merges into a near-duplicate)")
    add.add_argument("text", help="the memory; - reads it from stdin (e.g. a long text from a file)")
    add.add_argument("--category", "-c", required=True, choices=CATEGORIES)
    add.add_argument("--importance", "-i", type=importance_arg, default=5)
    add.add_argument("--pin", action="store_true", help="pin it (never cleaned up)")
    add.add_argument(
        "--force", action="store_true", help="add even next to a pinned/hand-edited near-duplicate"
    )
    add.add_argument("--json", action="store_true", help=JSON_HELP)
    add.set_defaults(handler=cmd_add, creates=True)

    ls = msub.add_parser("list", help="list memories, pinned first")
    ls.add_argument("--category", "-c", choices=CATEGORIES)
    ls.add_argument("--pinned", action="store_true", help="only pinned memories")
    ls.add_argument("--trash", action="store_true", help="list the trash instead")
    ls.add_argument(
        "--state",
        choices=("current", "superseded", "conflicts"),
        help="only current memories, superseded ones (marked ~), or those in an open conflict",
    )
    ls.add_argument("--limit", type=int, default=1000)
    ls.add_argument("--json", action="store_true", help=JSON_HELP)
    ls.set_defaults(handler=cmd_list)

    show = msub.add_parser("show", help="one memory with its history")
    show.add_argument("id", type=MEMORY_ID)
    show.add_argument("--json", action="store_true", help=JSON_HELP)
    show.set_defaults(handler=cmd_show)

    edit = msub.add_parser("edit", help="change text, category or importance")
    edit.add_argument("id", type=MEMORY_ID)
    edit.add_argument("--text", "-t")
    edit.add_argument("--category", "-c", choices=CATEGORIES)
    edit.add_argument("--importance", "-i", type=importance_arg)
    edit.add_argument("--json", action="store_true", help=JSON_HELP)
    edit.set_defaults(handler=cmd_edit)

    sup = msub.add_parser("supersede", help="mark OLD as replaced by NEW (kept, no longer current)")
    sup.add_argument("old", type=MEMORY_ID)
    sup.add_argument("new", type=MEMORY_ID)
    sup.add_argument("--json", action="store_true", help=JSON_HELP)
    sup.set_defaults(handler=cmd_supersede)

    for name, help_ in (
        ("pin", "pin a memory"),
        ("unpin", "unpin a memory"),
        ("rm", "move a memory to the trash"),
        ("restore", "bring a memory back from the trash"),
    ):
        sp = msub.add_parser(name, help=help_)
        sp.add_argument("id", type=MEMORY_ID)
        sp.add_argument("--json", action="store_true", help=JSON_HELP)
        sp.set_defaults(handler=_simple(name))
