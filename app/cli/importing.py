"""`memapp import PATH...`: chat exports into chat.db, with progress on a terminal and a JSON report.

The work is store.importing.import_paths; this module only parses arguments, draws progress (rich, on
stderr, only when stderr is a terminal and --json is off) and turns the report into output and an exit
code: 0 when everything was imported, 1 when anything was skipped, 2 for a path that does not exist.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from app.cli.background import start_summarizer
from app.cli.common import EXIT_FAILED, Context, UsageError
from app.cli.import_display import Updater, progress_display
from store.importing import (
    FORMATS,
    ImportReport,
    count_export,
    import_paths,
    is_session_path,
    summaries_due,
    summarize_due,
    unsummarised_messages,
)
from store.scratch import scratch_dir, write_private


def cmd_import(ctx: Context) -> int | None:
    args = ctx.args
    with _stdin_as_file(args.paths) as names:
        return _import(ctx, names)


@contextmanager
def _stdin_as_file(names: list[str]) -> Iterator[list[str]]:
    """`-` reads standard input (a pasted list of memories): kept in a private temporary file, so every
    reader sees a path, and removed afterwards."""
    if "-" not in names:
        yield names
        return
    data = sys.stdin.buffer.read()
    with scratch_dir("memapp-stdin-") as tmp:  # private, in memory where possible (store.scratch)
        path = tmp / "stdin.txt"
        write_private(path, data)
        yield [str(path) if n == "-" else n for n in names]


def _import(ctx: Context, names: list[str]) -> int | None:
    args = ctx.args
    paths = [Path(p).expanduser() for p in names]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise UsageError(f"no such file or directory: {', '.join(missing)}")
    store = ctx.store
    embed = not args.no_embed
    show = not ctx.json and sys.stderr.isatty()
    with progress_display(show) as display:
        sessions = any(is_session_path(p, args.format) for p in paths)
        # Session logs are not counted first: that would read every session, also the unchanged ones.
        totals = (
            display.count(lambda seen: count_export(paths, args.format, seen))
            if show and not sessions
            else None
        )
        update = display.update if show else None
        report = import_paths(
            store, paths, args.format, embed=embed, progress=update, totals=totals, summarize=False
        )
        if not args.no_summarize:
            _summaries(ctx, report, embed, update)
    note = store.precision_note if embed and report.messages_added else None
    ctx.emit(report.to_json(), lambda: _print_report(report, embed, note))
    return None if report.ok else EXIT_FAILED


def _summaries(ctx: Context, report: ImportReport, embed: bool, update: Updater) -> None:
    """Bring the summaries of the threads that grew up to date: here when that is little work (or
    --summarize-now), else in a background process, so a big import returns once its threads are written
    (app/cli/background.py says why)."""
    store = ctx.store
    due = summaries_due(store, report.grown_threads)
    if not due:
        return
    if ctx.args.summarize_now or unsummarised_messages(store, due) <= store.config.summary.background_after:
        report.summaries_updated += summarize_due(store, due, use_model=embed, progress=update)
        return
    start_summarizer(ctx, use_model=embed)
    report.summaries_background = len(due)


def _print_report(report: ImportReport, embed: bool, note: str | None = None) -> None:
    r = report
    _print_errors(r)
    print(f"threads:  {r.threads_added} new, {r.threads_updated} updated, {r.threads_unchanged} unchanged")
    print(f"messages: {r.messages_added} new")
    print(f"memories: {r.memories_added} new, {r.memories_existing} already known")
    if r.suggestions_added or r.suggestions_known:
        print(
            f"suggestions: {r.suggestions_added} new, {r.suggestions_known} already known "
            "(review: memapp extract list, then accept or reject)"
        )
    if r.files_read or r.files_unchanged:
        print(f"sessions: {r.files_read} read, {r.files_unchanged} unchanged")
    if r.summaries_updated:
        print(f"summaries: {r.summaries_updated} threads summarised")
    if r.summaries_background:
        print(
            f"summaries: {r.summaries_background} threads are being summarised in the background "
            "(`memapp summarize --due` does it now)"
        )
    if not embed:
        print("vectors:  not written (--no-embed); run `memapp embed` for semantic search")
    elif r.vector_problem and r.messages_added:
        print(f"vectors:  not written: {r.vector_problem}")
    elif note:
        print(f"vectors:  {note}")
    if r.notes:
        print(f"repaired: {len(r.notes)} (nothing skipped; listed on stderr)")
    if r.errors:
        print(f"skipped:  {r.skipped} (listed on stderr)")


def _print_errors(report: ImportReport) -> None:
    for kind, problems in (("note:", report.notes), ("skipped", report.errors)):
        for e in problems:
            where = f"{e.file} [{e.conversation}]" if e.conversation else e.file
            text = e.error if e.error.startswith(where) else f"{where}: {e.error}"
            print(f"memapp: {kind} {text}", file=sys.stderr)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "import",
        help="import chat exports (ChatGPT, Claude, llm, Open WebUI, Claude Code, Codex, generic; text lists)",
        description="Import conversations and memories. Re-importing the same file changes nothing; a newer "
        "export adds only new threads and messages. Exit 1 if anything was skipped.",
    )
    p.add_argument(
        "paths", nargs="+", metavar="PATH", help="export file, folder or .zip; - reads standard input"
    )
    p.add_argument(
        "--format",
        choices=["auto", *FORMATS],
        default="auto",
        help="input format (default: detect from the content)",
    )
    p.add_argument(
        "--no-embed", action="store_true", help="write no vectors now (fast); `memapp embed` adds them later"
    )
    summaries = p.add_mutually_exclusive_group()
    summaries.add_argument(
        "--no-summarize",
        action="store_true",
        help="do not update thread summaries and topics afterwards (`memapp summarize --due` does it later)",
    )
    summaries.add_argument(
        "--summarize-now",
        action="store_true",
        help="update the summaries before returning, however long that takes (a big import otherwise "
        "leaves them to a background process: summary.background_after)",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON, no progress")
    p.set_defaults(handler=cmd_import, creates=True)
