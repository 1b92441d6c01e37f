"""The `memapp` command: argument parsing and dispatch.

Each subcommand lives in its own module under app/cli/ with a `register(subparsers)` function that
adds its parser and sets `handler`; COMMAND_MODULES lists them in the order `--help` shows them.
`memapp` with no subcommand opens the TUI (imported only then, so CLI commands stay fast); it is
recognised before the subcommand modules are imported (they import most of the store), since the TUI's
time to its first frame is measured (bench/perf/startup.py).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from typing import NoReturn

# Before anything can import huggingface_hub: the hub is never contacted, and no telemetry.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

COMMAND_MODULES = [
    "memory",
    "threads",
    "admin",
    "importing",
    "agents",
    "search",
    "cleanup",
    "export",
    "mcp",
    "summarize",
    "extract",
    "context",
    "profile",
    "conflicts",
    "secrets",
    "encryption",
    "sync",
]


class _Parser(argparse.ArgumentParser):
    def error(
        self, message: str
    ) -> NoReturn:  # one line and exit 2, as argparse does, without the usage dump
        self.exit(2, f"memapp: {message}\n")


class _NotJustOptions(Exception):
    pass


class _QuietParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _NotJustOptions(message)


def _add_global_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db", metavar="PATH", help="chat.db to use (default: $MEMAPP_DB or the platform data dir)"
    )
    parser.add_argument(
        "--config", metavar="PATH", help="config.toml (default: $MEMAPP_CONFIG or the config dir)"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log more to stderr")


def _global_options(argv: list[str]) -> tuple[argparse.Namespace, list[str]] | None:
    """(the global options, the rest of `argv`), or None when the options themselves do not parse (the
    full parser then reports it in its own words)."""
    parser = _QuietParser(prog="memapp", add_help=False)
    _add_global_options(parser)
    try:
        return parser.parse_known_args(argv)
    except _NotJustOptions:
        return None


def _tui_args(argv: list[str]) -> argparse.Namespace | None:
    """The parsed global options when `argv` is only those (open the TUI), else None (use the full
    parser: a subcommand, --help, or an error it reports in its own words)."""
    parsed = _global_options(argv)
    if parsed is None or parsed[1]:
        return None
    args = parsed[0]
    args.command = None
    return args


class _Version(argparse.Action):
    """`--version`: the installed package's version, looked up only when asked (importlib.metadata is not
    free, and `memapp mcp` must start fast)."""

    def __call__(self, parser: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("memapp")
        except PackageNotFoundError:  # run from a source tree that was never installed
            found = "unknown (not installed)"
        print(f"memapp {found}")
        parser.exit(0)


def command_in(argv: list[str]) -> str | None:
    """The subcommand named in `argv` when it is one of ours, else None."""
    parsed = _global_options(argv)
    if parsed is None:
        return None
    first = next((a for a in parsed[1] if not a.startswith("-")), None)
    return first if first in COMMAND_MODULES else None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The full parser, or (`only`) one with just that subcommand: its module alone is imported, so a
    command does not pay for every other command's imports (`memapp mcp` must answer `initialize` fast)."""
    parser = _Parser(
        prog="memapp",
        description="Offline personal memory for AI conversations. Run `memapp` with no command to open the "
        "TUI (threads, memories, search, cleanup, import); the commands below do the same from a shell.",
    )
    _add_global_options(parser)
    parser.add_argument("--version", action=_Version, nargs=0, help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in [only] if only else COMMAND_MODULES:
        importlib.import_module(f"app.cli.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):
        # Command-line bytes that are not UTF-8 arrive as lone surrogates; printing one back (a search
        # echoes its query) must not turn a finished command into a traceback.
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    argv = sys.argv[1:] if argv is None else argv
    code = _main(argv)
    if code == 2 and _is_hook(argv):
        # For a Claude Code Stop hook, exit 2 means "do not stop, keep working": a bad flag in the hook's
        # command line (already reported in one line) must not steer the agent. 1 is shown and ignored.
        return 1
    return code


def _is_hook(argv: list[str]) -> bool:
    """Whether `argv` runs `memapp hook` (also when the options before it do not parse)."""
    command = command_in(argv)
    return command == "hook" or (command is None and "hook" in argv)


def _main(argv: list[str]) -> int:
    args = _tui_args(argv)
    if args is None:
        try:
            args = build_parser(command_in(argv)).parse_args(argv)
        except SystemExit as exc:  # --help, or a usage error already printed on one line
            return int(exc.code or 0)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="memapp: %(levelname)s: %(message)s"
    )
    if not args.verbose:  # SQLite's own log repeats, less clearly, errors we already explain in one line
        logging.getLogger("memapp.sqlite").setLevel(logging.CRITICAL)
    if args.command is None:
        return _run_tui(args)
    from app.cli.common import run_command

    return run_command(args.handler, args)


def _run_tui(args: argparse.Namespace) -> int:
    try:
        tui = importlib.import_module("app.tui")
    except ModuleNotFoundError:
        build_parser().print_help()
        return 0
    return int(tui.run(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
