"""`memapp secrets scan|redact`: the secrets an existing chat.db holds, counted or rewritten as markers
(store.secrets.database; docs/guide/privacy.md). Neither ever prints a secret's value."""

from __future__ import annotations

import argparse
import sys

from app.cli.common import JSON_HELP, Context
from store.secrets import redact_database, scan

TOP = 10  # threads and months shown by the human scan report (--json has them all)


def _progress(ctx: Context) -> object:
    if ctx.json or not sys.stderr.isatty():
        return None
    return lambda where: print(f"\rscanning {where:<40}", end="", file=sys.stderr, flush=True)


def cmd_scan(ctx: Context) -> int | None:
    ctx.require_database()
    report = scan(ctx.store, progress=_progress(ctx))  # type: ignore[arg-type]
    data = report.to_json()

    def human() -> None:
        if not report.secrets:
            print("no secrets found in chat.db")
            return
        print(f"{report.secrets} secrets in {report.rows} rows of chat.db (values are never shown)")
        print("\nby kind:")
        for kind, n in report.by_kind.most_common():
            print(f"  {n:>6}  {kind}")
        print("\nwhere:")
        for where, n in report.by_table.most_common():
            print(f"  {n:>6}  {where}")
        if report.by_thread:
            print("\nthreads with the most:")
            for row in data["by_thread"][:TOP]:
                print(f"  {row['secrets']:>6}  [{row['thread_id']}] {row['title']}")
        print("\nby month:")
        for month, n in sorted(report.by_month.items())[-TOP:]:
            print(f"  {n:>6}  {month}")
        print("\n`memapp secrets redact` replaces them with markers such as [secret: openai-key].")

    ctx.emit(data, human)
    return None


def cmd_redact(ctx: Context) -> int | None:
    ctx.require_database()
    report = redact_database(ctx.store, embed=not ctx.args.no_embed, progress=_progress(ctx))  # type: ignore[arg-type]
    data = report.to_json()

    def human() -> None:
        if not report.secrets:
            print("no secrets left in chat.db: nothing to rewrite")
        else:
            kinds = ", ".join(f"{n} {k}" for k, n in report.by_kind.most_common())
            print(f"replaced {report.secrets} secrets in {report.rows} rows ({kinds})")
        embedded = report.embedded or {}
        if embedded.get("messages") or embedded.get("memories"):
            print(f"re-embedded {embedded['messages']} messages and {embedded['memories']} memories")
        elif report.messages_to_embed or report.memories_to_embed:
            print("their old vectors were dropped: run `memapp embed` to embed the redacted text")

    ctx.emit(data, human)
    return None


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("secrets", help="find or redact secrets (API keys, tokens, passwords) in chat.db")
    verbs = p.add_subparsers(dest="secrets_command", metavar="ACTION", required=True)
    s = verbs.add_parser(
        "scan", help="count the secrets chat.db holds, by kind, thread and month (no values)"
    )
    s.add_argument("--json", action="store_true", help=JSON_HELP)
    s.set_defaults(handler=cmd_scan)
    r = verbs.add_parser(
        "redact",
        help="replace every secret in chat.db (history, summaries, indexes and vectors too) with a marker",
    )
    r.add_argument(
        "--no-embed", action="store_true", help="leave re-embedding the changed rows to `memapp embed`"
    )
    r.add_argument("--json", action="store_true", help=JSON_HELP)
    r.set_defaults(handler=cmd_redact)
