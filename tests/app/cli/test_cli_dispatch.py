"""A subcommand is parsed with only its own module imported (`memapp mcp` answers `initialize` sooner), and
the reduced parser accepts exactly what the full one does for it."""

from __future__ import annotations

import subprocess
import sys

from app.cli import COMMAND_MODULES, _command, build_parser


def _commands(parser: object) -> set[str]:
    sub = next(a for a in parser._actions if a.dest == "command")  # type: ignore[attr-defined]
    return set(sub.choices)


def test_a_module_name_that_is_a_command_is_that_modules_command() -> None:
    full = _commands(build_parser())
    for name in COMMAND_MODULES:
        if name in full:
            assert name in _commands(build_parser(name)), name


def test_the_command_is_found_after_global_options() -> None:
    assert _command(["--db", "x.db", "--config", "c.toml", "mcp", "--read-only"]) == "mcp"
    assert _command(["-v", "profile", "-b", "10"]) == "profile"
    assert _command(["import", "file.json"]) is None  # its module is `importing`: the full parser
    assert _command(["--help"]) is None
    args = build_parser("mcp").parse_args(["--db", "x.db", "mcp", "--read-only", "--create"])
    assert (args.db, args.read_only, args.create) == ("x.db", True, True)


def test_memapp_mcp_starts_without_numpy_or_the_store() -> None:
    code = (
        "import sys\nimport app.cli\nimport app.cli.mcp\n"
        "p = app.cli.build_parser(app.cli._command(['mcp']))\np.parse_args(['mcp'])\n"
        "print(sorted(m for m in ('numpy', 'store.store', 'app.cli.search') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]"
