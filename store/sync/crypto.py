"""Encrypting sync files with age (pyrage), so a synced folder holds no plain text.

The sync engine takes any `Sealer` (store.sync.files). Every device of one person must open the others'
files, so the key is shared. Two sources:

- an encrypted chat.db: its passphrase (the same keyring entry, MEMAPP_PASSPHRASE_COMMAND or prompt on
  each device) through store.crypto.seal.Sealer, which derives one age identity from the passphrase and
  SYNC_CONTEXT. Every device's chat.db has its own salt, so its database key differs; the passphrase is
  what they share;
- else an age identity file (`AGE-SECRET-KEY-1...`, as `age-keygen` writes it), named by
  `memapp sync init --key-file PATH` and kept 0600 on each device.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pyrage
from pyrage import x25519

from store.crypto.seal import Sealer as DatabaseSealer
from store.errors import StoreError
from store.sync.files import Sealer

if TYPE_CHECKING:
    from store.store import Store


class AgeSealer:
    """Seals with age to the identity's own recipient; unseals with the identity."""

    def __init__(self, identity: x25519.Identity) -> None:
        self.identity = identity
        self.recipient = identity.to_public()

    @classmethod
    def from_file(cls, path: Path) -> AgeSealer:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise StoreError(f"cannot read the sync key file {path}: {exc.strerror or exc}") from exc
        keys = [line.strip() for line in lines if line.strip().startswith("AGE-SECRET-KEY-1")]
        if not keys:
            raise StoreError(f"{path} holds no age identity (a line AGE-SECRET-KEY-1...)")
        try:
            return cls(x25519.Identity.from_str(keys[0]))
        except pyrage.IdentityError as exc:
            raise StoreError(f"{path}: not a valid age identity ({exc})") from exc

    def seal(self, data: bytes) -> bytes:
        return pyrage.encrypt(data, [self.recipient])

    def unseal(self, data: bytes) -> bytes:
        return pyrage.decrypt(data, [self.identity])


# Salts the passphrase's derivation for sync files apart from any other use of it (store.crypto.seal).
SYNC_CONTEXT = b"memapp sync files v1"


def sealer_for(store: Store, key_file: str | None) -> Sealer | None:
    """The sealer this device uses: the passphrase of an encrypted chat.db, else the key file named at
    `sync init`, else None (files are written in the clear)."""
    database = DatabaseSealer.for_database(store.path, SYNC_CONTEXT)
    if database is not None:
        return database
    if key_file:
        return AgeSealer.from_file(Path(key_file).expanduser())
    return None
