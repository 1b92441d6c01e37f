"""`memapp extract …`: suggest long-term memories from threads; accept, edit or reject them.

    memapp extract THREAD [--accept-all] [--json]    scan one thread, list its pending suggestions
    memapp extract --all [--accept-all] [--json]     scan every thread
    memapp extract list [--thread ID] [--status pending|accepted|rejected|all] [--json]
    memapp extract accept ID [--text T] [--category C] [--importance N] [--force] [--json]
    memapp extract reject ID [ID …] [--json]

Suggestion ids are stable, so a script can list with --json, decide, and accept or reject by id.
Nothing becomes a memory without `accept` (or `--accept-all`).
"""

from __future__ import annotations

import argparse
from typing import Any

from app.cli.common import (
    EXIT_FAILED,
    JSON_HELP,
    Context,
    UsageError,
    fail,
    importance_arg,
    report_duplicate,
)
from app.text import one_line
from store import CATEGORIES, DuplicateMemoryError
from store.extract import (
    STATUSES,
    BulkResult,
    ExtractResult,
    Suggestion,
    accept_all,
    accept_suggestion,
    extract_suggestions,
    list_suggestions,
    reject_suggestions,
)

ACTIONS = ("list", "accept", "reject")
_ACCEPT_ONLY = ("text", "category", "importance", "force")


def _line(s: Suggestion) -> str:
    merge = f"  (merges into memory {s.merge_with}, similarity {s.similarity:.2f})" if s.merge_with else ""
    state = "" if s.status == "pending" else f" [{s.status}]"
    return f"{s.id:>6}  {s.category:<10} {s.importance:>2}  {one_line(s.content, 70)}{merge}{state}"


def _print_extract(r: ExtractResult) -> None:
    skipped = []
    if r.already_memories:
        skipped.append(f"{r.already_memories} already memories")
    if r.already_decided:
        skipped.append(f"{r.already_decided} suggested before")
    note = f" ({', '.join(skipped)})" if skipped else ""
    print(f"thread {r.thread_id}: {len(r.new)} new suggestions, {len(r.pending)} pending{note}")
    for s in r.pending:
        print(_line(s))


def _print_bulk(b: BulkResult) -> None:
    for a in b.accepted:
        print(f"accepted {a.suggestion.id}: {a.action} memory {a.memory.id}")
    for s, err in b.failed:
        fail(f"suggestion {s.id} left pending: {err}")


def _ints(values: list[str], what: str) -> list[int]:
    try:
        return [int(v) for v in values]
    except ValueError:
        raise UsageError(f"not a {what} id: {' '.join(values)}") from None


def cmd_extract(ctx: Context) -> int | None:
    a = ctx.args
    if a.target in ACTIONS:
        return _ACTION_HANDLERS[a.target](ctx)
    for opt in _ACCEPT_ONLY:
        if getattr(a, opt) not in (None, False):
            raise UsageError(f"--{opt} goes with `memapp extract accept ID`")
    if a.status is not None or a.thread_filter is not None:
        raise UsageError("--status and --thread go with `memapp extract list`")
    if (a.target is None) == (not a.all) or a.ids:
        raise UsageError("give one thread id, --all, or an action: list, accept ID, reject ID…")
    if a.target is not None:
        results = [extract_suggestions(ctx.store, _ints([a.target], "thread")[0])]
    else:
        results = [extract_suggestions(ctx.store, tid) for tid in ctx.store.thread_ids()]
        results = [r for r in results if r.pending]
    bulk = accept_all(ctx.store, None if a.all else results[0].thread_id) if a.accept_all else None
    data: dict[str, Any] = {"threads": [r.to_json() for r in results]}
    if bulk is not None:
        data.update(bulk.to_json())

    def human() -> None:
        if not results:
            print("no pending suggestions")
        for r in results:
            _print_extract(r)
        if bulk is not None:
            _print_bulk(bulk)
        elif any(r.pending for r in results):
            print("\naccept: memapp extract accept ID [--text …]   reject: memapp extract reject ID …")

    ctx.emit(data, human)
    return EXIT_FAILED if bulk is not None and bulk.failed else None


def cmd_list(ctx: Context) -> None:
    a = ctx.args
    if a.ids or a.all or a.accept_all or any(getattr(a, o) not in (None, False) for o in _ACCEPT_ONLY):
        raise UsageError("`extract list` takes only --thread, --status and --json")
    status = None if a.status == "all" else (a.status or "pending")
    found = list_suggestions(ctx.store, thread_id=a.thread_filter, status=status)

    def human() -> None:
        if not found:
            print("no suggestions" if status is None else f"no {status} suggestions")
        for s in found:
            print(_line(s))

    ctx.emit([s.to_json() for s in found], human)


def cmd_accept(ctx: Context) -> int | None:
    a = ctx.args
    if len(a.ids) != 1:
        raise UsageError("accept one suggestion at a time: memapp extract accept ID [--text …]")
    sid = _ints(a.ids, "suggestion")[0]
    try:
        res = accept_suggestion(
            ctx.store, sid, content=a.text, category=a.category, importance=a.importance, force=a.force
        )
    except DuplicateMemoryError as exc:
        return report_duplicate(ctx, exc)

    def human() -> None:
        verb = {"added": "added as", "merged": "merged into", "exists": "already stored as"}[res.action]
        print(f"suggestion {sid} {verb} memory {res.memory.id}")
        if res.memory.deleted_at is not None:
            print(
                f"(memory {res.memory.id} is in the trash: `memapp memory restore {res.memory.id}` brings it back)"
            )

    ctx.emit(res.to_json(), human)
    return None


def cmd_reject(ctx: Context) -> None:
    a = ctx.args
    if not a.ids:
        raise UsageError("give the suggestion ids to reject: memapp extract reject ID …")
    done = reject_suggestions(ctx.store, _ints(a.ids, "suggestion"))
    ctx.emit([s.to_json() for s in done], lambda: print(f"rejected {', '.join(str(s.id) for s in done)}"))


_ACTION_HANDLERS = {"list": cmd_list, "accept": cmd_accept, "reject": cmd_reject}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "extract",
        help="suggest memories from threads; accept, edit or reject them",
        usage="memapp extract (THREAD | --all) [--accept-all] [--json]\n"
        "       memapp extract list [--thread ID] [--status STATUS] [--json]\n"
        "       memapp extract accept ID [--text T] [--category C] [--importance N] [--force] [--json]\n"
        "       memapp extract reject ID [ID ...] [--json]",
        description="Find statements worth remembering (preferences, projects, skills, facts) in the user's "
        "messages. They wait as suggestions until accepted; a rejected one is never suggested again.",
    )
    p.add_argument("target", nargs="?", metavar="THREAD|list|accept|reject")
    p.add_argument("ids", nargs="*", metavar="ID", help=argparse.SUPPRESS)
    p.add_argument("--all", action="store_true", help="scan every thread")
    p.add_argument("--accept-all", action="store_true", help="accept every pending suggestion found")
    p.add_argument("--thread", dest="thread_filter", type=int, metavar="ID", help="list: only this thread")
    p.add_argument("--status", choices=[*STATUSES, "all"], help="list: which suggestions (default pending)")
    p.add_argument("--text", "-t", help="accept: the memory's text, edited")
    p.add_argument("--category", "-c", choices=CATEGORIES, help="accept: a different category")
    p.add_argument("--importance", "-i", type=importance_arg, help="accept: a different importance (1-10)")
    p.add_argument(
        "--force", action="store_true", help="accept: add even next to a pinned or hand-edited near-duplicate"
    )
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(handler=cmd_extract)
