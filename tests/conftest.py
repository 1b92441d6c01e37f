"""Shared fixtures. The whole suite runs with network sockets refused (SPEC principle 2)."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from embeddings import FakeEmbedder, SentenceTransformerEmbedder
from store import Store, writelock
from store.crypto import keys

REPO = Path(__file__).resolve().parent.parent

# Every write to chat.db in the suite must go through the write lock (store/writelock.py): a commit made
# without it fails the test that made it, instead of only being logged.
writelock.STRICT = True
os.environ["MEMAPP_STRICT_WRITES"] = "1"  # and in the memapp processes the tests start

# The ONNX copy of the model (embeddings.onnx_export) is made once and kept beside the test run, not in
# the user's cache; it survives between runs, as it would for a user.
os.environ.setdefault(
    "MEMAPP_CACHE_DIR", str(Path(__file__).resolve().parent.parent / ".pytest_cache" / "memapp")
)


class NetworkRefused(OSError):
    pass


def _refuse(*args: object, **kwargs: object) -> None:
    raise NetworkRefused("network access is refused in memapp's tests")


@pytest.fixture(autouse=True, scope="session")
def no_network() -> Iterator[None]:
    """Fail any TCP/UDP connect for the whole run (AF_UNIX, used by asyncio's self-pipe, stays allowed)."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def connect(self: socket.socket, address: object) -> None:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            _refuse()
        real_connect(self, address)  # type: ignore[arg-type]

    def connect_ex(self: socket.socket, address: object) -> int:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            _refuse()
        return real_connect_ex(self, address)  # type: ignore[arg-type]

    mp = pytest.MonkeyPatch()
    mp.setattr(socket.socket, "connect", connect)
    mp.setattr(socket.socket, "connect_ex", connect_ex)
    mp.setattr(socket, "create_connection", _refuse)
    mp.setattr(socket, "getaddrinfo", _refuse)
    yield
    mp.undo()


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads or writes the user's real chat.db, config or keyring, and no passphrase carries over
    from one test to the next (store.crypto.keys holds them per process)."""
    monkeypatch.setenv("MEMAPP_DB", str(tmp_path / "default-chat.db"))
    monkeypatch.setenv("MEMAPP_CONFIG", str(tmp_path / "no-config.toml"))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "tests.keyring_file.FileKeyring")
    monkeypatch.setenv("MEMAPP_TEST_KEYRING", str(tmp_path / "test-keyring.json"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.delenv("MEMAPP_PASSPHRASE_COMMAND", raising=False)
    keys.forget_process_keys()
    keys.set_prompt(None)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "chat.db"


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture
def store(db_path: Path, fake_embedder: FakeEmbedder) -> Iterator[Store]:
    """A real apsw + sqlite-vec chat.db in a temp dir, with the fast deterministic embedder."""
    s = Store(db_path, embedder=fake_embedder)
    yield s
    s.close()


@pytest.fixture(scope="session")
def real_embedder() -> SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 from the installed package, loaded once per test session, offline."""
    emb = SentenceTransformerEmbedder()
    emb.load()
    return emb


@pytest.fixture
def no_model_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """For CLI tests about the command, not the model: a keyword-only config keeps them fast."""
    cfg = tmp_path / "config.toml"
    cfg.write_text("[embedding]\nenabled = false\n")
    monkeypatch.setenv("MEMAPP_CONFIG", str(cfg))
    return cfg
