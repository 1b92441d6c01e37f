"""`memapp search QUERY …` and `memapp search --batch FILE|-` (JSON lines in, JSON lines out).

Batch mode exists for scripts and evaluations: one process, so the model loads once, and one result
line per query line; a bad line becomes an `{"error", "line"}` line and the exit code is 1, the rest run.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections.abc import Iterable
from typing import Any

from app.cli.common import EXIT_FAILED, JSON_HELP, Context, UsageError, fail
from app.text import one_line
from store import CATEGORIES, ROLES, Store, StoreError, iso
from store.search import SCOPES, Filters, SearchResponse, SearchResult

BATCH_KEYS = {
    "query",
    "scope",
    "k",
    "thread",
    "category",
    "role",
    "since",
    "until",
    "pinned",
    "keyword_only",
    "as_of",
}


def parse_date(text: str, *, end: bool = False) -> float:
    """ISO date or date-time -> epoch seconds (UTC unless an offset is given). A bare date used as an end
    (`--until 2025-03-01`) means the end of that day, so the day itself is included."""
    value = text.strip()
    try:
        if len(value) == 10:
            day = dt.date.fromisoformat(value)
            start = dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)
            try:
                return (start + dt.timedelta(days=1 if end else 0)).timestamp()
            except OverflowError:  # the end of 9999-12-31: after every date there is
                return dt.datetime.max.replace(tzinfo=dt.UTC).timestamp()
        moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"not a date: {text!r} (use YYYY-MM-DD or an ISO date-time)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.timestamp()


def _k(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"-k must be a whole number, got {text!r}") from None
    if not 1 <= value <= 1000:
        raise argparse.ArgumentTypeError(f"-k must be 1-1000, got {value}")
    return value


def _run(
    store: Store,
    query: str,
    *,
    scope: str,
    k: int,
    thread: int | None,
    category: str | None,
    role: str | None,
    since: str | None,
    until: str | None,
    pinned: bool | None,
    keyword_only: bool,
    touch: bool,
    as_of: str | None = None,
    include_archived: bool = False,
    source: str | None = None,
) -> SearchResponse:
    if thread is not None:
        store.get_thread(thread)  # an unknown thread is an error, not an empty result
    filters = Filters(
        thread_id=thread,
        category=category,
        role=role,
        since=None if since is None else parse_date(since),
        until=None if until is None else parse_date(until, end=True),
        pinned=pinned,
        as_of=None if as_of is None else parse_date(as_of, end=True),
        include_archived=include_archived,
        source=source,
    )
    return store.search(
        query, scope=scope, k=k, filters=filters, keyword_only=keyword_only, touch=touch, weak=True
    )


def _print_human(resp: SearchResponse) -> None:
    if not resp.results:
        print(resp.notice or "no results")  # "no good match: ...": the answer itself, on stdout
        if resp.weak:
            print()
            _print_results(resp.weak)
        return
    if resp.notice:
        fail(resp.notice)
    _print_results(resp.results)


def _print_results(results: list[SearchResult]) -> None:
    """Numbered results; weak ones (below the answer floor) say so on their first line."""
    for i, r in enumerate(results, start=1):
        where = {
            "memory": f"memory {r.id} [{r.category}]",
            "message": f"message {r.id} in thread {r.thread_id} ({r.role})",
            "summary": f"summary of thread {r.id}",
        }[r.kind]
        if r.kind != "memory" and r.thread_title:
            where += f" “{one_line(r.thread_title, 40)}”"
        tag = "  WEAK (below the floor)" if r.weak else ""
        print(f"{i:>3}. {where}  {'+'.join(r.matched)}  {r.score:.3f}{tag}")
        print(f"     {one_line(r.content, 110)}")
        if r.kind == "memory":
            print(f"     {memory_source_line(r)}")


def memory_source_line(r: SearchResult) -> str:
    """Where a memory hit came from, and whether a newer memory replaced it (one line)."""
    if r.source_message_id is not None:
        src = f"from message {r.source_message_id} in thread {r.thread_id}"
    elif r.thread_id is not None:
        src = f"from thread {r.thread_id}"
    else:
        src = f"origin: {r.origin}"
    if r.superseded_by is not None or r.valid_until is not None:
        until = iso(r.valid_until) or "?"
        by = f" by memory {r.superseded_by}" if r.superseded_by is not None else ""
        src += f"  · superseded{by} (valid until {until})"
    return src


def cmd_search(ctx: Context) -> int | None:
    a = ctx.args
    if a.batch is not None:
        if a.query is not None:
            raise UsageError("give a QUERY or --batch, not both")
        return _batch(ctx)
    if a.query is None:
        raise UsageError("give a QUERY (or --batch FILE)")
    resp = _run(
        ctx.store,
        a.query,
        scope=a.scope,
        k=a.k,
        thread=a.thread,
        category=a.category,
        role=a.role,
        since=a.since,
        until=a.until,
        pinned=True if a.pinned else None,
        keyword_only=a.keyword_only,
        touch=not a.no_touch,
        as_of=a.as_of,
        include_archived=a.include_archived,
        source=a.source,
    )
    ctx.emit(resp.to_json(), lambda: _print_human(resp))
    return None


def _lines(source: str) -> Iterable[str]:
    if source == "-":
        yield from sys.stdin
        return
    try:
        with open(source, encoding="utf-8") as fh:
            yield from fh
    except OSError as exc:
        raise UsageError(f"cannot read {source}: {exc.strerror or exc}") from None


def _batch_one(ctx: Context, item: Any) -> SearchResponse:
    if not isinstance(item, dict) or not isinstance(item.get("query"), str):
        raise UsageError('each line must be a JSON object with a "query" string')
    unknown = set(item) - BATCH_KEYS
    if unknown:
        raise UsageError(f"unknown keys {sorted(unknown)}; known: {sorted(BATCH_KEYS)}")
    a = ctx.args
    k = item.get("k", a.k)
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 1000:
        raise UsageError(f'"k" must be a whole number 1-1000, got {k!r}')
    thread = item.get("thread")
    if thread is not None and (isinstance(thread, bool) or not isinstance(thread, int)):
        raise UsageError(f'"thread" must be a thread id, got {thread!r}')
    for key in ("since", "until", "scope", "category", "role", "as_of"):
        if item.get(key) is not None and not isinstance(item[key], str):
            raise UsageError(f'"{key}" must be a string, got {item[key]!r}')
    if item.get("pinned") is not None and not isinstance(item["pinned"], bool):
        raise UsageError(f'"pinned" must be true or false, got {item["pinned"]!r}')
    return _run(
        ctx.store,
        item["query"],
        scope=item.get("scope", a.scope),
        k=k,
        thread=thread,
        category=item.get("category"),
        role=item.get("role"),
        since=item.get("since"),
        until=item.get("until"),
        pinned=item.get("pinned"),
        keyword_only=bool(item.get("keyword_only", a.keyword_only)),
        touch=not a.no_touch,
        as_of=item.get("as_of"),
    )


def _batch(ctx: Context) -> int | None:
    failed = False
    for n, line in enumerate(_lines(ctx.args.batch), start=1):
        if not line.strip():
            continue
        try:
            out: dict[str, Any] = _batch_one(ctx, json.loads(line)).to_json()
        # One bad line is answered with its error and the next lines still run: JSONDecodeError is a
        # ValueError, a huge integer an OverflowError, absurdly deep JSON a RecursionError.
        except (ValueError, OverflowError, RecursionError, UsageError, StoreError) as exc:
            out, failed = {"line": n, "error": str(exc)}, True
        print(json.dumps(out, ensure_ascii=False), flush=True)
    return EXIT_FAILED if failed else None


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "search",
        help="hybrid (keyword + semantic) search over memories, messages, summaries",
        description="Hybrid search. Memories returned count as accessed (see cleanup).",
    )
    p.add_argument("query", nargs="?", help="what to look for (any text: quotes, AND, c++, 中文 all work)")
    p.add_argument("--scope", choices=SCOPES, default="all")
    p.add_argument("-k", type=_k, default=10, help="how many results (default 10)")
    p.add_argument("--thread", type=int, metavar="ID", help="only this thread's messages and summary")
    p.add_argument("--category", choices=CATEGORIES, help="only memories of this category")
    p.add_argument("--role", choices=ROLES, help="only messages with this role")
    p.add_argument("--since", metavar="DATE", help="created on or after (YYYY-MM-DD or ISO date-time, UTC)")
    p.add_argument("--until", metavar="DATE", help="created before the end of this day (or before this time)")
    p.add_argument("--pinned", action="store_true", help="only pinned memories")
    p.add_argument(
        "--as-of",
        metavar="DATE",
        help="what was true then: memories valid at the end of that day (superseded ones included), "
        "messages written by then",
    )
    p.add_argument("--source", help="only threads imported from this source (chatgpt, claude, llm, …)")
    p.add_argument(
        "--include-archived", action="store_true", help="also search archived threads (left out by default)"
    )
    p.add_argument("--keyword-only", action="store_true", help="skip the embedding model (fast, exact words)")
    p.add_argument(
        "--batch",
        metavar="FILE",
        help='JSON lines {"query", "scope"?, "k"?, "thread"?, '
        '"category"?, ...} from FILE or - (stdin); one JSON line out each',
    )
    p.add_argument("--no-touch", action="store_true", help="do not count the memories returned as accessed")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(handler=cmd_search)
