"""`memapp export`: lossless JSON (restored by `memapp import`) or Markdown for reading."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from app.cli.common import Context, UsageError
from store import CATEGORIES
from store.export import export_json, write_markdown


def _write_private(path: Path, text: str) -> None:
    """Exports hold the user's private conversations: 0600, like chat.db."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


def cmd_export(ctx: Context) -> None:
    a = ctx.args
    scope = {"thread": a.thread, "category": a.category}
    if a.format == "markdown":
        out_dir = Path(a.output or "memapp-markdown").expanduser()
        if out_dir.exists() and not out_dir.is_dir():
            raise UsageError(f"{out_dir} is a file; Markdown export writes a folder")
        files = write_markdown(ctx.store, out_dir, **scope)
        ctx.emit(
            {"files": [str(f) for f in files]}, lambda: print(f"wrote {len(files)} files under {out_dir}")
        )
        return
    data = export_json(ctx.store, include_embeddings=a.include_embeddings, **scope)
    text = json.dumps(data, ensure_ascii=False, indent=1)
    if a.output in (None, "-"):
        print(text)
        return
    path = Path(a.output).expanduser()
    _write_private(path, text)
    counts = {t: len(rows) for t, rows in data["tables"].items()}
    ctx.emit(
        {"file": str(path), "rows": counts},
        lambda: print(
            f"exported {counts.get('threads', 0)} threads, {counts.get('messages', 0)} messages, "
            f"{counts.get('long_term_memories', 0)} memories to {path}"
        ),
    )


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="export everything as JSON (lossless) or Markdown (for reading)")
    p.add_argument("--format", choices=["json", "markdown"], default="json")
    p.add_argument(
        "-o",
        "--output",
        metavar="PATH",
        help="JSON: file (default: stdout); Markdown: folder (default: ./memapp-markdown)",
    )
    p.add_argument("--include-embeddings", action="store_true", help="JSON: include vectors (base64 float32)")
    p.add_argument("--thread", type=int, metavar="ID", help="only this thread")
    p.add_argument("--category", choices=CATEGORIES, help="only memories of this category")
    p.add_argument("--json", action="store_true", help="report what was written as JSON")
    p.set_defaults(handler=cmd_export)
