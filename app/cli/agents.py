"""Keeping the archive current: `memapp hook claude-code` and `memapp watch PATH...`.

    # ~/.claude/settings.json: import each Claude Code session when it ends (README has the snippet)
    memapp hook claude-code            # reads the hook's JSON on stdin: {"transcript_path": ..., ...}
    memapp watch ~/.claude/projects ~/.codex/sessions

Both are thin loops over store.importing.import_paths, which reads a session log only from where the last
import stopped (store.importing.sessions) and writes nothing when nothing changed.

Why the hook never exits 2: for Claude Code's Stop hook, exit code 2 means "do not stop, keep working",
and a memory tool must never steer the agent. Every failure is one line on stderr and exit 1 (Claude
Code shows it and carries on).

Why `watch` polls: a stat per file every couple of seconds costs nothing next to an import, works the same
on every platform and file system (inotify does not see network drives), and needs no dependency. A file is
imported once its size and mtime have stayed the same for the debounce time, so a session being written
turn by turn is imported after each turn, not after each line; one that never goes quiet is imported at
least every 30 s (or 10 debounce times).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from pathlib import Path
from types import FrameType

from app.cli.common import EXIT_FAILED, Context, UsageError, fail
from app.text import literal
from store.importing import FORMATS, session_files, session_id_from_name

HOOK_AGENTS = ("claude-code",)


def cmd_hook(ctx: Context) -> int | None:
    """Import the session a Claude Code hook names; exit 0 or 1, never 2 (see the module docstring)."""
    try:
        raw = sys.stdin.read()
        data = json.loads(raw) if raw.strip() else {}
        if not isinstance(data, dict):
            raise ValueError("the hook input is not a JSON object")
        transcript = data.get("transcript_path")
        if not isinstance(transcript, str) or not transcript:
            raise ValueError("the hook input has no transcript_path")
        path = Path(transcript).expanduser()
        if not path.is_file():
            raise ValueError(f"{path}: no such transcript")
        from store.importing import import_paths

        store = ctx.store
        embed = not ctx.args.no_embed
        report = import_paths(store, [path], ctx.args.agent, embed=embed, count_process=False)
        found = store.find_thread(ctx.args.agent, session_id_from_name(path))
        if embed and found is not None and store.vector_problem is None:
            # Lines an earlier `--no-embed` run (a Stop hook) imported get their vectors now.
            while batch := store.messages_missing_vectors(256, thread_id=found.id):
                if store.embed_messages(batch) == 0:
                    break
    except Exception as exc:
        fail(f"hook: {exc}")
        return EXIT_FAILED
    if ctx.json:
        ctx.emit(report.to_json())
    elif report.messages_added:
        print(f"memapp: {report.messages_added} new messages from {path.name}")
    for e in report.notes:
        fail(f"hook: note: {e.file}: {e.error}")
    for e in report.errors:
        fail(f"hook: skipped {e.file}: {e.error}")
    return None if report.ok else EXIT_FAILED


def _signature(paths: list[Path]) -> dict[Path, tuple[int, int]]:
    """(size, mtime_ns) of every file watched: the files given, and the .jsonl files under the folders."""
    out: dict[Path, tuple[int, int]] = {}
    for p in paths:
        files = session_files(p) if p.is_dir() else [p]
        for f in files:
            try:
                st = f.stat()
            except OSError:
                continue
            out[f] = (st.st_size, st.st_mtime_ns)
    return out


def cmd_watch(ctx: Context) -> int | None:
    a = ctx.args
    paths = [Path(p).expanduser() for p in a.paths]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise UsageError(f"no such file or directory: {', '.join(missing)}")
    if a.interval <= 0 or a.debounce < 0:
        raise UsageError("--interval must be above 0 and --debounce at least 0")
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()
        raise KeyboardInterrupt  # an import in progress stops between threads (each is its own transaction)

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    failed = False
    try:
        print(f"watching {len(paths)} path(s); Ctrl+C stops", flush=True)
        # The first pass imports whatever changed since the last import (nothing is re-read otherwise).
        failed |= _import(ctx, paths, a)
        seen = _signature(paths)
        settling: dict[Path, float] = {}  # changed files -> when their signature last changed
        first_change: dict[Path, float] = {}  # ... and when it first changed since its last import
        longest = max(30.0, 10 * a.debounce)  # a file that never goes quiet is imported this often
        while not stop.wait(a.interval):
            now = _signature(paths)
            t = time.monotonic()
            for f, sig in now.items():
                if seen.get(f) != sig:
                    settling[f] = t
                    first_change.setdefault(f, t)
            seen = now
            ready = sorted(
                f
                for f, since in settling.items()
                if f in now and (t - since >= a.debounce or t - first_change[f] >= longest)
            )
            for f in ready:
                settling.pop(f, None)
                first_change.pop(f, None)
            settling = {f: s for f, s in settling.items() if f in now}
            first_change = {f: s for f, s in first_change.items() if f in settling}
            if ready:
                failed |= _import(ctx, ready, a)
    except KeyboardInterrupt:
        pass
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    print("stopped", flush=True)
    return EXIT_FAILED if failed else None


def _import(ctx: Context, files: list[Path], a: argparse.Namespace) -> bool:
    """Import `files` (one import); one line if it brought something new. True if anything was skipped."""
    from store.importing import import_paths

    report = import_paths(ctx.store, files, a.format, embed=not a.no_embed, count_process=False)
    grown = list(dict.fromkeys(report.grown_threads))
    if report.messages_added or report.suggestions_added or report.memories_added:
        titles = [ctx.store.get_thread(t).title for t in grown[:3]]
        shown = ", ".join(f'"{t}"' for t in titles) + (
            f" and {len(grown) - 3} more" if len(grown) > 3 else ""
        )
        what = files[0].name if len(files) == 1 else f"{report.files_read} files"
        print(
            literal(
                f"{time.strftime('%H:%M:%S')} {what}: {report.messages_added} new messages"
                + (f" in {shown}" if shown else "")
                + (f", {report.suggestions_added} suggestions" if report.suggestions_added else "")
                + (f", {report.memories_added} memories" if report.memories_added else "")
            ),
            flush=True,
        )
    for e in report.notes:
        fail(f"note: {e.file}: {e.error}")
    for e in report.errors:
        fail(f"skipped {e.file}: {e.error}")
    return bool(report.errors)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "hook",
        help="import the session a coding agent's hook names (Claude Code SessionEnd/Stop hook)",
        description="Reads the hook's JSON on stdin (it names the transcript file) and imports that session; "
        "only lines added since the last import are read. Exit 0, or 1 with one line on stderr; never 2.",
    )
    p.add_argument("agent", choices=HOOK_AGENTS, help="which agent runs the hook")
    p.add_argument("--no-embed", action="store_true", help="write no vectors now (`memapp embed` adds them)")
    p.add_argument("--json", action="store_true", help="print the import report as JSON")
    p.set_defaults(handler=cmd_hook, creates=True)

    w = sub.add_parser(
        "watch",
        help="keep importing session logs and exports as they change, until Ctrl+C",
        description="Polls the files given and the .jsonl session files under the folders given; a file "
        "whose size and time have not changed for --debounce seconds is imported (only what was added). "
        "One line per import that added something.",
    )
    w.add_argument("paths", nargs="+", metavar="PATH", help="file or folder (e.g. ~/.claude/projects)")
    w.add_argument(
        "--format", choices=["auto", *FORMATS], default="auto", help="input format (default: detect)"
    )
    w.add_argument(
        "--interval", type=float, default=2.0, metavar="S", help="seconds between polls (default 2)"
    )
    w.add_argument(
        "--debounce", type=float, default=1.0, metavar="S", help="quiet seconds before importing (default 1)"
    )
    w.add_argument("--no-embed", action="store_true", help="write no vectors now (`memapp embed` adds them)")
    w.set_defaults(handler=cmd_watch, creates=True)
