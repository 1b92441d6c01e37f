"""The reliability suite runs short in CI; `MEMAPP_SOAK=1` or `-m soak` makes the soak tests run long.

Tests add what they survived to the session's `figures` (kills landed, fuzz cases, concurrent seconds,
lost updates...); the run ends with them as a table, and with MEMAPP_SOAK=1 also as JSON in
bench/out/soak.json, from which `make soak` writes the table in docs/benchmarks/reliability.md
(tests/reliability/soak_table.py)."""

from __future__ import annotations

import datetime as dt
import json
import platform
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reliability.processes import SOAK

_FIGURES: dict[str, int] = {}
OUT = Path(__file__).resolve().parents[2] / "bench" / "out" / "soak.json"


@pytest.fixture
def soak(request: pytest.FixtureRequest) -> bool:
    """True for the long variant: more kills, bigger exports, longer concurrent runs."""
    markexpr = request.config.getoption("-m") or ""
    return SOAK or ("soak" in markexpr and "not soak" not in markexpr)


@pytest.fixture(scope="session")
def figures() -> Iterator[dict[str, int]]:
    """name -> number, added up over the session (e.g. figures["kills survived (import)"] += 20)."""
    yield _FIGURES


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _FIGURES:
        return
    terminalreporter.section("reliability figures")
    for name, value in sorted(_FIGURES.items()):
        terminalreporter.write_line(f"{name:<48} {value:>10,}")
    if SOAK and terminalreporter.stats.get("failed") is None:
        OUT.parent.mkdir(parents=True, exist_ok=True)
        OUT.write_text(
            json.dumps(
                {
                    "date": dt.date.today().isoformat(),
                    "machine": f"{platform.machine()}, Python {platform.python_version()}",
                    "figures": dict(sorted(_FIGURES.items())),
                },
                indent=1,
            )
        )
