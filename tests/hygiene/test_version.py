"""One version, in one place: pyproject.toml. `memapp --version` reads it from the installed package's
metadata and CHANGELOG.md's newest release names it, so a release cannot say one number in one place and
another elsewhere (the package said 0.1.0 for two rounds of changes)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from app.cli import main

ROOT = Path(__file__).resolve().parents[2]


def project_version() -> str:
    return str(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"])


def test_memapp_version_is_pyprojects(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"memapp {project_version()}", (
        "the installed metadata is stale: run `make .venv/.installed` (pyproject.toml changed)"
    )


def test_changelog_names_this_version_first() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", text, re.M)
    assert releases, "CHANGELOG.md has no `## [X.Y.Z] - YYYY-MM-DD` release heading"
    assert releases[0] == project_version()
    assert "## [Unreleased]" in text  # Keep a Changelog: where the next changes are written
