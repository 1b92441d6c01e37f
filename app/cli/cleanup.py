"""`memapp cleanup [--apply]` (preview, then trash faded memories) and `memapp trash list|restore|purge`."""

from __future__ import annotations

import argparse

from app.cli.common import JSON_HELP, Context, int_arg
from app.text import fit, one_line
from store import cleanup


def _days(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"days must be a number, got {text!r}") from None
    if not 0 <= value < 1e6:
        raise argparse.ArgumentTypeError(f"days must be 0 or more, got {text}")
    return value


def cmd_cleanup(ctx: Context) -> None:
    a = ctx.args
    t = cleanup.Thresholds.from_config(
        ctx.config.cleanup,
        min_access=a.min_access,
        max_importance=a.max_importance,
        older_than_days=a.older_than,
    )
    found = cleanup.apply_cleanup(ctx.store, t) if a.apply else cleanup.find_candidates(ctx.store, t)
    data = {"candidates": [c.to_json() for c in found], "thresholds": t.to_json(), "applied": bool(a.apply)}

    def human() -> None:
        print(
            f"cleanup candidates: unpinned, importance < {t.max_importance}, accessed < {t.min_access} times, "
            f"untouched for more than {t.older_than_days:g} days"
        )
        for c in found:
            print(f"{c.memory.id:>6}  {c.memory.category:<10} {one_line(c.memory.content, 60)}")
            print(f"        {c.reason}")
        if not found:
            print("nothing to clean up")
        elif a.apply:
            print(f"moved {len(found)} memories to the trash (memapp trash restore ID brings one back)")
        else:
            print(f"{len(found)} candidates; nothing changed (run with --apply to move them to the trash)")

    ctx.emit(data, human)


def cmd_trash_list(ctx: Context) -> None:
    items = cleanup.trash_items(ctx.store)
    retention = ctx.config.cleanup.trash_retention_days

    def human() -> None:
        if not items:
            print("the trash is empty")
        for m in items:
            when = "pinned: never purged" if m["pinned"] else f"purge after {m['purge_after']}"
            print(f"{m['id']:>6}  {m['category']:<10} {fit(m['content'], 60)}  ({when})")

    ctx.emit({"trash": items, "retention_days": retention}, human)


def cmd_trash_restore(ctx: Context) -> None:
    restored, skipped = cleanup.restore(ctx.store, ctx.args.ids)

    def human() -> None:
        for m in restored:
            print(f"restored memory {m.id}")
        for i in skipped:
            print(f"memory {i} was not in the trash")

    ctx.emit({"restored": [m.to_json() for m in restored], "not_in_trash": skipped}, human)


def cmd_trash_purge(ctx: Context) -> None:
    days = ctx.config.cleanup.trash_retention_days if ctx.args.older_than is None else ctx.args.older_than
    purged = ctx.store.purge_trash(older_than_days=days)
    ctx.emit(
        {"purged": purged, "older_than_days": days},
        lambda: print(f"purged {len(purged)} memories in the trash for more than {days:g} days"),
    )


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "cleanup", help="preview (or --apply) moving unused, unimportant memories to the trash"
    )
    p.add_argument("--apply", action="store_true", help="move the candidates to the trash (one transaction)")
    p.add_argument(
        "--min-access",
        type=int_arg("--min-access", 0),
        metavar="N",
        help="candidates were accessed fewer than N times (config cleanup.min_access, default 2)",
    )
    p.add_argument(
        "--max-importance",
        type=int_arg("--max-importance", 0),
        metavar="N",
        help="candidates have importance below N (config cleanup.max_importance, default 3)",
    )
    p.add_argument(
        "--older-than",
        type=_days,
        metavar="DAYS",
        help="candidates were untouched for more than DAYS (config cleanup.older_than_days, default 90)",
    )
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(handler=cmd_cleanup)

    t = sub.add_parser("trash", help="list, restore or purge memories in the trash")
    t.add_argument("--json", action="store_true", help=JSON_HELP)
    t.set_defaults(handler=cmd_trash_list)
    tsub = t.add_subparsers(dest="trash_command", metavar="ACTION")
    # default=SUPPRESS: `memapp trash --json list` keeps the --json given before the action.
    ls = tsub.add_parser("list", help="what is in the trash, and when purge may remove it")
    ls.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help=JSON_HELP)
    ls.set_defaults(handler=cmd_trash_list)
    rs = tsub.add_parser("restore", help="bring memories back exactly as they were")
    rs.add_argument("ids", type=int_arg("ID", 0), nargs="+", metavar="ID")
    rs.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help=JSON_HELP)
    rs.set_defaults(handler=cmd_trash_restore)
    pg = tsub.add_parser("purge", help="delete for good what has been in the trash longer than the retention")
    pg.add_argument(
        "--older-than",
        type=_days,
        metavar="DAYS",
        help="retention in days (config cleanup.trash_retention_days, default 30)",
    )
    pg.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help=JSON_HELP)
    pg.set_defaults(handler=cmd_trash_purge)
