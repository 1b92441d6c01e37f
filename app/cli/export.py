"""`memapp export`: lossless JSON (restored by `memapp import`) or Markdown for reading."""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

from app.cli.common import Context, UsageError, check_folder
from store import CATEGORIES, StoreError
from store.crypto import keys
from store.export import save_export, write_export, write_markdown
from store.files import atomic_write, refuse_database_paths


def _export_prompt(ctx: Context) -> None:
    from store.prompt_export import prompt_block

    a = ctx.args
    if a.budget < 1:
        raise UsageError("--budget must be at least 1 token")
    block = prompt_block(ctx.store, a.budget)
    path = None
    if a.output not in (None, "-"):
        path = Path(a.output).expanduser()
        _refuse_database(path, ctx)
        check_folder(path, a.parents)
        with atomic_write(path) as fh:  # private (0600), whole or absent, never over chat.db
            fh.write(block.text)
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


def _age_passphrase(ctx: Context) -> str | None:
    """The passphrase to age-encrypt this export with: chat.db's, when it is encrypted and --plain was not
    given (everything written beside an encrypted database stays encrypted). None: write it plain."""
    if ctx.args.plain or not keys.is_encrypted(ctx.db_path):
        return None
    if ctx.args.format == "markdown":
        raise UsageError(
            f"{ctx.db_path} is encrypted and a Markdown export is plain text: add --plain to write it anyway, "
            "or export JSON (age-encrypted)"
        )
    to_terminal = ctx.args.output in (None, "-") and sys.stdout.isatty()
    if to_terminal:
        raise UsageError(
            f"{ctx.db_path} is encrypted: give a file with -o for an age-encrypted export, or add --plain to "
            "print it in the clear"
        )
    return keys.key_for(ctx.db_path).passphrase


def _export_sealed(ctx: Context, passphrase: str) -> None:
    """JSON or prompt export as an age file (age's passphrase mode: `age -d FILE` with chat.db's passphrase
    opens it, and `memapp import FILE` restores it). Built in memory, so no plain temporary file is ever
    written (about twice the export's size in RAM)."""
    from store.crypto import seal_export

    a = ctx.args
    text = io.StringIO()
    scope = {"thread": a.thread, "category": a.category}
    if a.format == "prompt":
        from store.prompt_export import prompt_block

        if a.budget < 1:
            raise UsageError("--budget must be at least 1 token")
        text.write(prompt_block(ctx.store, a.budget).text)
        counts: dict[str, int] = {}
    else:
        counts = write_export(ctx.store, text, include_embeddings=a.include_embeddings, **scope)
    sealed = seal_export(text.getvalue().encode("utf-8"), passphrase)
    del text
    if a.output in (None, "-"):
        sys.stdout.buffer.write(sealed)
        sys.stdout.flush()
        return
    path = Path(a.output).expanduser()
    if path.is_dir():
        raise UsageError(
            f"{path} is a folder; the export writes a file (e.g. {path / 'memapp-export.json.age'})"
        )
    _refuse_database(path, ctx)
    with atomic_write(path, binary=True) as fh:
        fh.write(sealed)
    ctx.emit(
        {"file": str(path), "rows": counts, "encrypted": "age"},
        lambda: print(
            f"wrote an age-encrypted export to {path} (open it with `age -d` and the passphrase of chat.db, "
            "or restore it with `memapp import`)"
        ),
    )


def cmd_export(ctx: Context) -> None:
    a = ctx.args
    passphrase = _age_passphrase(ctx)
    if passphrase is not None:
        _export_sealed(ctx, passphrase)
        return
    if a.format == "prompt":
        _export_prompt(ctx)
        return
    scope = {"thread": a.thread, "category": a.category}
    if a.format == "markdown":
        out_dir = Path(a.output or "memapp-markdown").expanduser()
        if out_dir.exists() and not out_dir.is_dir():
            raise UsageError(f"{out_dir} is a file; Markdown export writes a folder")
        _refuse_database(out_dir, ctx)
        check_folder(out_dir, a.parents)
        files = write_markdown(ctx.store, out_dir, parents=a.parents, **scope)
        ctx.emit(
            {"files": [str(f) for f in files]}, lambda: print(f"wrote {len(files)} files under {out_dir}")
        )
        return
    if a.output in (None, "-"):
        write_export(ctx.store, sys.stdout, include_embeddings=a.include_embeddings, **scope)
        return
    path = Path(a.output).expanduser()
    if path.is_dir():
        raise UsageError(
            f"{path} is a folder; JSON export writes a file (e.g. {path / 'memapp-export.json'})"
        )
    _refuse_database(path, ctx)
    check_folder(path, a.parents)
    counts = save_export(ctx.store, path, include_embeddings=a.include_embeddings, **scope)
    ctx.emit(
        {"file": str(path), "rows": counts},
        lambda: print(
            f"exported {counts.get('threads', 0)} threads, {counts.get('messages', 0)} messages, "
            f"{counts.get('long_term_memories', 0)} memories to {path}"
        ),
    )


def _refuse_database(path: Path, ctx: Context) -> None:
    try:
        refuse_database_paths(path, ctx.db_path)
    except StoreError as exc:
        raise UsageError(str(exc)) from None


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
        help="JSON: file (default: stdout); Markdown: folder (default: ./memapp-markdown), written whole: "
        "it replaces an earlier export there",
    )
    p.add_argument("--parents", action="store_true", help="create the output's folder if it does not exist")
    p.add_argument("--include-embeddings", action="store_true", help="JSON: include vectors (base64 float32)")
    p.add_argument("--thread", type=int, metavar="ID", help="only this thread")
    p.add_argument("--category", choices=CATEGORIES, help="only memories of this category")
    p.add_argument(
        "--plain",
        action="store_true",
        help="an encrypted chat.db's export in the clear (without it, JSON and prompt exports are age-encrypted)",
    )
    p.add_argument("--json", action="store_true", help="report what was written as JSON")
    p.set_defaults(handler=cmd_export)
