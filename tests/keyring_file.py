"""A keyring backend for the tests: a JSON file named by MEMAPP_TEST_KEYRING (tests/conftest.py points every
test at one in its own temp folder, through keyring's PYTHON_KEYRING_BACKEND), so no test ever reads or
writes a real user keyring. Without MEMAPP_TEST_KEYRING it behaves as a machine with no keyring at all."""

from __future__ import annotations

import json
import os
from pathlib import Path

from keyring.backend import KeyringBackend
from keyring.errors import NoKeyringError, PasswordDeleteError


class FileKeyring(KeyringBackend):
    priority = 1  # type: ignore[assignment]

    def _file(self) -> Path:
        name = os.environ.get("MEMAPP_TEST_KEYRING")
        if not name:
            raise NoKeyringError("no test keyring file (MEMAPP_TEST_KEYRING)")
        return Path(name)

    def _read(self) -> dict[str, str]:
        path = self._file()
        return json.loads(path.read_text()) if path.exists() else {}

    def get_password(self, service: str, username: str) -> str | None:
        return self._read().get(f"{service}\n{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        data = self._read()
        data[f"{service}\n{username}"] = password
        path = self._file()
        path.write_text(json.dumps(data))
        os.chmod(path, 0o600)

    def delete_password(self, service: str, username: str) -> None:
        data = self._read()
        if data.pop(f"{service}\n{username}", None) is None:
            raise PasswordDeleteError("no such entry")
        self._file().write_text(json.dumps(data))
