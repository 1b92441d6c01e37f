"""Put on PYTHONPATH of a spawned `memapp mcp`: Python imports this at start-up, and from then on every
TCP/UDP connection and name lookup in that process fails, as in the test process (tests/conftest.py)."""

import os
import socket

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _refuse(*args: object, **kwargs: object) -> None:
    raise OSError("network access is refused in memapp's tests")


def _connect(self: socket.socket, address: object) -> None:
    if self.family in (socket.AF_INET, socket.AF_INET6):
        _refuse()
    _real_connect(self, address)  # type: ignore[arg-type]


def _connect_ex(self: socket.socket, address: object) -> int:
    if self.family in (socket.AF_INET, socket.AF_INET6):
        _refuse()
    return _real_connect_ex(self, address)  # type: ignore[arg-type]


socket.socket.connect = _connect  # type: ignore[method-assign,assignment]
socket.socket.connect_ex = _connect_ex  # type: ignore[method-assign,assignment]
socket.create_connection = _refuse  # type: ignore[assignment]
socket.getaddrinfo = _refuse  # type: ignore[assignment]
os.environ["MEMAPP_TEST_NETGUARD"] = "on"
