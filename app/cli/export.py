"""`memapp export`: lossless JSON (restored by `memapp import`) or Markdown for reading."""

from __future__ import annotations

import argparse
import json
import os
import sys
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


def _export_prompt(ctx: Context) -> None:
    from store.prompt_export import prompt_block

    a = ctx.args
    if a.budget < 1:
        raise UsageError("--budget must be at least 1 token")
    block = prompt_block(ctx.store, a.budget)
    if a.output not in (None, "-"):
        path = Path(a.output).expanduser()
        _write_private(path, block.text)
    else:
        path = None
    note = (
        f"{len(block.included)} memories, {block.tokens}/{block.budget} tokens"
        + (f", {block.left_out} left out (raise --budget to include them)" if block.left_out else "")
        + ("" if block.exact else " (estimated)")
    )
    if ctx.json:
        ctx.emit({**block.to_json(), "file": None if path is None else str(path)})
    elif path is None:
        sys.stdout.write(block.text)
        print(f"memapp: {note}", file=sys.stderr)
    else:
        print(f"wrote {note} to {path}")


def cmd_export(ctx: Context) -> None:
    a = ctx.args
    if a.format == "prompt":
        _export_prompt(ctx)
        return
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
    p = sub.add_parser(
        "export", help="export everything as JSON (lossless) or Markdown, or memories as a paste-ready prompt"
    )
    p.add_argument(
        "--format",
        choices=["json", "markdown", "prompt"],
        default="json",
        help="json (lossless), markdown (for reading), prompt (memories to paste into another assistant)",
    )
    p.add_argument(
        "--budget",
        type=int,
        default=1500,
        metavar="TOKENS",
        help="prompt: the most tokens the block may have (default 1500); the best memories that fit",
    )
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
