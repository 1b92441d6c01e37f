"""Three simulated devices sharing one sync folder (tests.store.sync.sim), closed after each test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.store.sync.sim import Fleet


@pytest.fixture
def fleet() -> Iterator[Fleet]:
    f = Fleet.make(3)
    yield f
    f.close()
