"""`memapp conflicts [list|resolve]`: the memories the classifier would not decide alone (store.truth)."""

from __future__ import annotations

import argparse

from app.cli.common import JSON_HELP, Context
from app.text import one_line
from store import iso
from store.truth import KEEPS, OPTION_WORDS, Conflict, get_conflict, list_conflicts, resolve_conflict

HELP_KEEP = (
    "new: newer replaces older (the old memory is superseded); both: keep both current; merge: one memory "
    "with the new wording (or --text); old: keep the older one only (the new one goes to the trash)"
)


def _print_conflict(c: Conflict) -> None:
    state = (
        c.status if c.resolution is None else f"{c.status}: {OPTION_WORDS.get(c.resolution, c.resolution)}"
    )
    print(f"conflict {c.id}  [{state}]  {iso(c.created_at)}")
    print(f"   {c.explanation}")
    print(f"   new {c.new.id:>5}: {one_line(c.new.content, 100)}")
    print(f"   old {c.old.id:>5}: {one_line(c.old.content, 100)}")
    if c.status == "open":
        print(
            f"   suggested: --keep {c.suggested} ({OPTION_WORDS[c.suggested]}); also: "
            + ", ".join(f"--keep {k} ({OPTION_WORDS[k]})" for k in KEEPS if k != c.suggested)
            + ', --keep merge --text "..." (one memory in your words)'
        )


def cmd_list(ctx: Context) -> None:
    a = ctx.args
    items = list_conflicts(ctx.store, status=None if a.all else "open", limit=a.limit)

    def human() -> None:
        if not items:
            print("no conflicts to review" if not a.all else "no conflicts")
        for c in items:
            _print_conflict(c)

    ctx.emit([c.to_json() for c in items], human)


def cmd_resolve(ctx: Context) -> None:
    a = ctx.args
    get_conflict(ctx.store, a.id)  # an unknown id is "not found", before anything changes
    c = resolve_conflict(ctx.store, a.id, a.keep, content=a.text)
    ctx.emit(c.to_json(), lambda: print(f"resolved conflict {c.id}: {OPTION_WORDS[a.keep]}"))


def _id(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a conflict id: {text!r}") from None


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("conflicts", help="review memories that contradict or repeat each other")
    csub = p.add_subparsers(dest="conflicts_command", metavar="ACTION")
    p.set_defaults(handler=cmd_list, all=False, limit=500, json=False)
    p.add_argument("--json", action="store_true", help=JSON_HELP)

    ls = csub.add_parser("list", help="open conflicts, newest first")
    ls.add_argument("--all", action="store_true", help="also resolved ones (automatic supersedes included)")
    ls.add_argument("--limit", type=int, default=500)
    ls.add_argument("--json", action="store_true", help=JSON_HELP)
    ls.set_defaults(handler=cmd_list)

    rs = csub.add_parser("resolve", help="decide one conflict")
    rs.add_argument("id", type=_id)
    rs.add_argument("--keep", required=True, choices=KEEPS, help=HELP_KEEP)
    rs.add_argument("--text", help="with --keep merge: the one memory's text, in your own words")
    rs.add_argument("--json", action="store_true", help=JSON_HELP)
    rs.set_defaults(handler=cmd_resolve)
