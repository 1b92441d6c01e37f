"""Summaries after a big import, in a process of their own, so `memapp import` returns when its threads are
written.

Why: thread summaries are extractive but not cheap (sentences split, token-counted and ranked, topics
counted per thread): on 20,000 messages in 500 threads of 40 they took 73 s of CPU against the import's
own 4 s (issue 28.25; docs/benchmarks/importing.md). They are derived data, made again from the
messages whenever they are behind (store.extract.summaries: `last_message_seq`), so nothing is at risk
if they come later: an import that leaves more than `summary.background_after` messages to summarise
starts `memapp summarize --due` detached (its own session, no terminal, no output) and says so. A worker
that cannot run, or is killed, leaves the summaries behind, and the next import or `memapp summarize
--due` makes them; each thread is its own transaction, and a thread another process summarised
meanwhile keeps that summary.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from app.cli.common import Context


def start_summarizer(ctx: Context, *, use_model: bool) -> int:
    """Start `memapp summarize --due` on this command's database and config, detached; its pid."""
    cmd = [sys.executable, "-m", "app", "--db", str(ctx.db_path.expanduser().resolve())]
    config = getattr(ctx.args, "config", None)
    if config:
        cmd += ["--config", str(Path(config).expanduser().resolve())]
    cmd += ["summarize", "--due", "--json"]
    if not use_model:
        cmd.append("--no-model")
    kwargs: dict[str, Any] = {
        "stdin": subprocess.DEVNULL,
        "stdout": subprocess.DEVNULL,
        "stderr": subprocess.DEVNULL,
        "close_fds": True,
    }
    if os.name == "nt":
        kwargs["creationflags"] = subprocess.DETACHED_PROCESS | subprocess.CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined]
    else:
        kwargs["start_new_session"] = True  # not stopped by the terminal closing or Ctrl-C
    return subprocess.Popen(cmd, **kwargs).pid
