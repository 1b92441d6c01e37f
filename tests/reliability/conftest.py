"""The reliability suite runs short in CI; `MEMAPP_SOAK=1` or `-m soak` makes the soak tests run long."""

from __future__ import annotations

import pytest

from tests.reliability.reliability_helpers import SOAK


@pytest.fixture
def soak(request: pytest.FixtureRequest) -> bool:
    """True for the long variant: more kills, bigger exports, longer concurrent runs."""
    markexpr = request.config.getoption("-m") or ""
    return SOAK or ("soak" in markexpr and "not soak" not in markexpr)
