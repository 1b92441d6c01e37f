"""The generated references never drift: docs/reference/cli.md and config.md must be exactly what
app/cli/reference.py produces from the real parser and store/config.py. README and the guides once listed
the configuration twice, differently; a hand-kept reference drifts the same way."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from app.cli import build_parser, reference


def test_committed_references_are_current() -> None:
    writers = {reference.written_with(p) for p in (reference.CLI_MD, reference.CONFIG_MD)}
    if None not in writers and writers != {reference.PYTHON}:
        # argparse lays out help differently in other Python versions; the files are made with the project's
        pytest.skip(f"the references were generated with Python {writers}, this is {reference.PYTHON}")
    stale = [str(p.relative_to(reference.ROOT)) for p in reference.stale()]
    assert not stale, f"{', '.join(stale)} differ from the code: run `make docs-reference` and commit them"


def test_cli_reference_has_every_command_and_subcommand() -> None:
    text = reference.cli_reference()
    parser = build_parser()
    names = [name for name, _ in reference._subcommands(parser)]
    assert len(names) > 20
    for name, sub in reference._subcommands(parser):
        assert f"\n## memapp {name}\n" in text
        for verb, _ in reference._subcommands(sub):
            assert f"\n### memapp {name} {verb}\n" in text


def test_config_reference_lists_every_key_with_its_default() -> None:
    from store.config import Config

    text = reference.config_reference()
    cfg = Config()
    for section, _cls in reference._sections():
        assert f"## [{section}]" in text
        for key, value in vars(getattr(cfg, section)).items():
            assert f"| `{key}` | `{reference._toml(value)}` |" in text, f"{section}.{key}"


def test_stale_file_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--check names a stale file and the make target; a current one passes."""
    cli, config = tmp_path / "cli.md", tmp_path / "config.md"
    monkeypatch.setattr(reference, "CLI_MD", cli)
    monkeypatch.setattr(reference, "CONFIG_MD", config)
    monkeypatch.setattr(reference, "ROOT", tmp_path)
    assert reference.main([]) == 0
    assert reference.stale() == []
    config.write_text(config.read_text(encoding="utf-8") + "hand edit\n", encoding="utf-8")
    assert reference.stale() == [config]
    assert reference.main(["--check"]) == 1


def test_help_width_does_not_depend_on_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    narrow = reference.cli_reference()
    monkeypatch.setenv("COLUMNS", "200")
    assert reference.cli_reference() == narrow
    assert isinstance(build_parser(), argparse.ArgumentParser)
