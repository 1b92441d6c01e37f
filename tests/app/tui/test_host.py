"""MemApp implements the Host protocol the screens type against (app/tui/host.py)."""

from __future__ import annotations

import inspect

from app.tui.app import MemApp
from app.tui.host import Host


def _as_host(app: MemApp) -> Host:
    return app  # mypy checks here that MemApp has every Host member, with compatible types


def test_memapp_has_every_host_member() -> None:
    members = {name for name, _ in inspect.getmembers(Host) if not name.startswith("_")}
    assert members, "the protocol lists members"
    assert {name for name in members if not hasattr(MemApp, name)} == set()
    assert _as_host.__annotations__["return"] == "Host"
