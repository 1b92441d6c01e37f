"""`memapp summarize [THREAD|--all] [--rebuild] [--json]`: bring thread summaries and topics up to date."""

from __future__ import annotations

import argparse

from app.cli.common import EXIT_FAILED, JSON_HELP, Context, UsageError, fail
from store import StoreError
from store.extract import SummaryResult, summarize_thread, threads_to_summarize


def _print_result(r: SummaryResult, *, verbose: bool) -> None:
    if r.action == "unchanged":
        print(f"thread {r.thread_id}: summary already up to date")
    else:
        upto = r.summary.last_message_seq if r.summary else "?"
        print(
            f"thread {r.thread_id}: summary {r.action} ({r.strategy}, {r.method}): {r.messages_covered} new "
            f"messages, {r.before_tokens} -> {r.after_tokens} tokens, up to message {upto}"
        )
    if verbose and r.summary is not None:
        print()
        print(r.summary.content or "(nothing summary-worthy yet)")
        if r.topics:
            print("\ntopics: " + ", ".join(f"{t} ({n})" for t, n in r.topics))


def cmd_summarize(ctx: Context) -> int | None:
    a = ctx.args
    if a.due:
        return _due(ctx)
    if (a.thread is None) == (not a.all):
        raise UsageError("give a thread id, --all or --due")
    if a.thread is not None:
        r = summarize_thread(ctx.store, a.thread, force=a.rebuild)
        ctx.emit(r.to_json(), lambda: _print_result(r, verbose=True))
        return None
    ids = ctx.store.thread_ids() if a.rebuild else threads_to_summarize(ctx.store)
    results: list[SummaryResult] = []
    failed: list[dict[str, object]] = []
    for tid in ids:
        try:
            r = summarize_thread(ctx.store, tid, force=a.rebuild)
        except StoreError as exc:
            failed.append({"thread_id": tid, "error": str(exc)})
            if not ctx.json:
                fail(f"thread {tid}: {exc}")
            continue
        results.append(r)
        if not ctx.json:
            _print_result(r, verbose=False)
    if ctx.json:
        ctx.emit({"results": [r.to_json() for r in results], "failed": failed})
    elif not ids:
        print("every summary is up to date")
    return EXIT_FAILED if failed else None


def _due(ctx: Context) -> int | None:
    """`memapp summarize --due`: what an import does after writing its threads (also the background
    process a big import starts): every thread behind by at least summary.trigger_messages messages."""
    from store.importing import summaries_due, summarize_due

    store = ctx.store
    due = summaries_due(store)
    done = summarize_due(store, due, use_model=not ctx.args.no_model)
    ctx.emit(
        {"threads_due": len(due), "summaries_updated": done},
        lambda: print(f"summaries: {done} threads summarised"),
    )
    return None


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "summarize",
        help="update thread summaries and topics (offline, extractive)",
        description="Summarise the messages added since the last summary (all of them the "
        "first time), within summary.max_tokens; also refresh the thread's topics.",
    )
    p.add_argument("thread", nargs="?", type=int, metavar="THREAD", help="thread id")
    p.add_argument("--all", action="store_true", help="every thread with messages not yet summarised")
    p.add_argument("--rebuild", action="store_true", help="summarise from the first message again")
    p.add_argument(
        "--due",
        action="store_true",
        help="the threads an import would summarise: behind by summary.trigger_messages messages or more",
    )
    p.add_argument("--no-model", action="store_true", help="with --due: TF-IDF, no embedding model")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(handler=cmd_summarize)
