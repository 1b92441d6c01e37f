"""`memapp stats|doctor|embed|reindex|backup|restore`: the database as a whole."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from app.cli.common import EXIT_FAILED, JSON_HELP, Context, UsageError, check_folder
from embeddings import runtime_reporting
from store import maintenance
from store.migrations import LATEST


def cmd_stats(ctx: Context) -> None:
    stats = ctx.store.stats()

    def human() -> None:
        m = stats["memories"]
        print(f"threads:   {stats['threads']}")
        print(f"messages:  {stats['messages']}  ({stats['tokens']} tokens)")
        print(f"memories:  {m['active']} active, {m['pinned']} pinned, {m['trash']} in trash")
        print(f"summaries: {stats['summaries']}")
        print(f"embedded:  {stats['embedded_chunks']} message chunks, {stats['embedded_memories']} memories")

    ctx.emit(stats, human)


def cmd_doctor(ctx: Context) -> int | None:
    report = maintenance.doctor(ctx.store, full=ctx.args.full)

    def human() -> None:
        print(f"database:   {report['database']}")
        print(f"schema:     version {report['schema_version']} (this memapp: {LATEST})")
        print(f"integrity:  {report['integrity']}")
        print(
            f"indexes:    {'in step' if not report['index_problems'] else '; '.join(report['index_problems'])}"
        )
        content = report["content_problems"]
        print(
            f"content:    {'consistent' if not content else str(len(content)) + ' problems'} ({report['content_checked']})"
        )
        for line in [*content, *report["read_problems"]]:
            print(f"  - {line}")
        print(f"tokenizer:  {report['tokenizer']}")
        m = report["model"]
        runtime = f" ({m['runtime']})" if m.get("runtime") else ""
        print(f"model:      {m['name'] or '-'}: {m['state']}{runtime}")
        if m.get("runtime_problem"):
            print(f"            {m['runtime_problem']}")
        if m.get("note"):
            print(f"            {m['note']}")
        print(f"config:     {report['config'] or '(defaults)'}")
        counts = report["counts"]
        if counts:
            print(
                f"counts:     {counts['threads']} threads, {counts['messages']} messages, "
                f"{counts['memories']['active']} memories"
            )
        print("status:     " + ("ok" if report["ok"] else "PROBLEMS FOUND"))

    ctx.emit(report, human)
    return None if report["ok"] else EXIT_FAILED


class _Progress:
    """Progress of `embed` and `reindex`, on stderr only: stdout holds the result, and a script may send
    it into a file (where `\\r` redraws used to leave a line ending in a stray `)`). On a terminal the line
    is redrawn in place; otherwise a plain line is written every 10 %."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.start = time.monotonic()
        self.terminal = sys.stderr.isatty()
        self.drawn = False
        self.next_percent = 10

    def __call__(self, done: int, total: int) -> None:
        rate = done / max(1e-9, time.monotonic() - self.start)
        line = f"{self.what}: {done}/{total} ({rate:.0f}/s)"
        if self.terminal:
            sys.stderr.write("\r" + line)
            sys.stderr.flush()
            self.drawn = True
            return
        percent = 100 * done // max(1, total)
        if percent >= self.next_percent or done >= total:
            print(line, file=sys.stderr, flush=True)
            self.next_percent = (percent // 10 + 1) * 10

    def close(self) -> None:
        """End the redrawn line, so what follows starts on its own."""
        if self.drawn:
            sys.stderr.write("\n")
            sys.stderr.flush()
            self.drawn = False


def _progress(ctx: Context, what: str) -> _Progress | None:
    return None if ctx.json else _Progress(what)


def _finish(progress: _Progress | None) -> None:
    if progress is not None:
        progress.close()


def cmd_embed(ctx: Context) -> int | None:
    problem = ctx.store.vector_problem
    if problem:
        ctx.emit({"error": problem}, lambda: print(f"memapp: cannot embed: {problem}"))
        return EXIT_FAILED
    if ctx.args.prepare:
        return _prepare(ctx)
    progress = _progress(ctx, "embedding")
    try:
        result = maintenance.embed_missing(ctx.store, progress=progress)
    finally:
        _finish(progress)
    ctx.emit(
        result, lambda: print(f"embedded {result['messages']} messages and {result['memories']} memories")
    )
    return None if not result.get("error") else EXIT_FAILED


def _prepare(ctx: Context) -> int | None:
    """`memapp embed --prepare`: make the model's ONNX copy now (once; otherwise the first semantic
    operation makes it) and load it, saying which runtime encodes."""
    ok = ctx.store.load_model()
    emb = ctx.store.embedder
    runtime = runtime_reporting(emb)
    info = {
        "model": None if emb is None else emb.name,
        "backend": (runtime.backend if runtime else None) or "custom",
        "problem": (runtime.backend_problem if runtime else None)
        or (None if ok else ctx.store.vector_problem),
    }
    if info["backend"] == "onnx" and emb is not None:
        from embeddings.onnx_export import onnx_path

        info["onnx_file"] = str(onnx_path(emb.path, emb.precision))  # type: ignore[attr-defined]

    def human() -> None:
        print(f"model:   {info['model']}")
        print(f"runtime: {info['backend']}" + (f" ({info['onnx_file']})" if info.get("onnx_file") else ""))
        if info["problem"]:
            print(f"note:    {info['problem']}")

    ctx.emit(info, human)
    return None if ok else EXIT_FAILED


def cmd_reindex(ctx: Context) -> int | None:
    progress = _progress(ctx, "re-embedding")
    try:
        result = maintenance.reindex(ctx.store, vectors=not ctx.args.keyword_only, progress=progress)
    finally:
        _finish(progress)
    ctx.emit(
        result,
        lambda: print(
            f"reindexed: keyword index rebuilt; {result['messages']} messages and "
            f"{result['memories']} memories embedded"
            + (f" ({result['error']})" if result.get("error") else "")
        ),
    )
    return None if not result.get("error") else EXIT_FAILED


def cmd_backup(ctx: Context) -> None:
    path = Path(ctx.args.path).expanduser()
    if path.exists():
        raise UsageError(
            f"{ctx.args.path} already exists; choose a new file name (a backup never overwrites)"
        )
    check_folder(path, ctx.args.parents)
    dest = maintenance.backup(ctx.store, path, parents=ctx.args.parents)
    ctx.emit({"backup": str(dest)}, lambda: print(f"backed up to {dest}"))


def cmd_restore(ctx: Context) -> None:
    from store import db
    from store.restore import restore

    done = restore(ctx.store, Path(ctx.args.backup), busy_ms=db.BUSY_TIMEOUT_MS)
    ctx.emit(
        {
            "restored": str(done.backup),
            "previous_kept_at": None if done.previous is None else str(done.previous),
            "backup_schema_version": done.schema_version,
            "memories": done.memories,
            "threads": done.threads,
        },
        lambda: print(
            f"restored {done.backup} into {ctx.db_path}: {done.threads} threads, {done.memories} memories"
            + (f"\nthe database as it was is kept at {done.previous}" if done.previous else "")
        ),
    )


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("stats", help="counts of threads, messages, memories and vectors")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(handler=cmd_stats)

    p = sub.add_parser("doctor", help="check the database, tokenizer and model")
    p.add_argument("--full", action="store_true", help="compare every row's content, not a sample")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(handler=cmd_doctor)

    p = sub.add_parser("embed", help="embed whatever has no vector yet (resumable)")
    p.add_argument(
        "--prepare",
        action="store_true",
        help="only make the model's ONNX copy (once) and load it; no vectors",
    )
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(handler=cmd_embed)

    p = sub.add_parser("reindex", help="rebuild the keyword index and all vectors from the canonical rows")
    p.add_argument("--keyword-only", action="store_true", help="rebuild only the keyword (FTS) index")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(handler=cmd_reindex)

    p = sub.add_parser("backup", help="write a consistent copy of chat.db (safe while other writers run)")
    p.add_argument("path", help="file to write (must not exist)")
    p.add_argument("--parents", action="store_true", help="create the file's folder if it does not exist")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(handler=cmd_backup)

    p = sub.add_parser(
        "restore",
        help="put a backup back into chat.db (safe while memapp runs; the current state is kept beside it)",
        description="Checks the backup (whole, a memapp database, a schema this memapp knows), keeps the "
        "current chat.db as chat.db.before-restore-TIME.db, then writes the backup into the live database "
        "in one transaction: running memapp processes (the TUI, an MCP server) see the restored data.",
    )
    p.add_argument("backup", help="a file written by `memapp backup` (or a copy of chat.db)")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(handler=cmd_restore, creates=True)
