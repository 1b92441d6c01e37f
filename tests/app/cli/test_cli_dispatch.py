"""A subcommand is parsed with only its own module imported (`memapp mcp` answers `initialize` sooner), and
the reduced parser accepts exactly what the full one does for it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from app.cli import COMMAND_MODULES, build_parser, command_in


def _is_command(parser: object, name: str) -> bool:
    with pytest.raises(SystemExit) as exit_:
        parser.parse_args([name, "--help"])  # type: ignore[attr-defined]
    return exit_.value.code == 0  # 2: "invalid choice"


def test_a_module_name_that_is_a_command_is_that_modules_command(capsys: pytest.CaptureFixture[str]) -> None:
    full = build_parser()
    assert not _is_command(full, "no-such-command")
    for name in COMMAND_MODULES:
        if _is_command(full, name):
            assert _is_command(build_parser(name), name), name
            assert command_in([name]) == name


def test_the_command_is_found_after_global_options() -> None:
    assert command_in(["--db", "x.db", "--config", "c.toml", "mcp", "--read-only"]) == "mcp"
    assert command_in(["-v", "profile", "-b", "10"]) == "profile"
    assert command_in(["import", "file.json"]) is None  # its module is `importing`: the full parser
    assert command_in(["--help"]) is None
    args = build_parser("mcp").parse_args(["--db", "x.db", "mcp", "--read-only", "--create"])
    assert (args.db, args.read_only, args.create) == ("x.db", True, True)


def test_memapp_mcp_starts_without_numpy_or_the_store() -> None:
    code = (
        "import sys\nimport app.cli\nimport app.cli.mcp\n"
        "p = app.cli.build_parser(app.cli.command_in(['mcp']))\np.parse_args(['mcp'])\n"
        "print(sorted(m for m in ('numpy', 'store.store', 'app.cli.search') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "[]"
