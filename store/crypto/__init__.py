"""Encryption at rest: chat.db encrypted by SQLite3 Multiple Ciphers, its key, and what is sealed beside it.

- `store.crypto.keys`: whether a file is encrypted, the passphrase (MEMAPP_PASSPHRASE_COMMAND, the OS keyring,
  or a prompt the app supplies), the key derived from it once per process, and keying a connection.
- `store.crypto.convert`: `create_encrypted`, `encrypt`, `decrypt`, `rekey`, each through a verified copy
  and an atomic rename (a kill leaves the old database or the new one, never neither).
- `store.crypto.seal`: `Sealer`, age encryption of files that leave chat.db (sync's changesets), keyed from
  the same passphrase; `seal_export` / `open_export` for exports.

docs/guide/privacy.md is the user's side; docs/design/decisions/2026-11-27-encryption.md says why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from store.lazy import exports

if TYPE_CHECKING:
    from store.crypto.convert import Converted, create_encrypted, decrypt, encrypt, rekey
    from store.crypto.seal import SealError, is_sealed, open_export, seal_export

_WHERE = {
    "Converted": "store.crypto.convert",
    "create_encrypted": "store.crypto.convert",
    "decrypt": "store.crypto.convert",
    "encrypt": "store.crypto.convert",
    "rekey": "store.crypto.convert",
    "SealError": "store.crypto.seal",
    "is_sealed": "store.crypto.seal",
    "open_export": "store.crypto.seal",
    "seal_export": "store.crypto.seal",
}

__all__ = [
    "Converted",
    "SealError",
    "create_encrypted",
    "decrypt",
    "encrypt",
    "is_sealed",
    "open_export",
    "rekey",
    "seal_export",
]

__getattr__, __dir__ = exports(__name__, _WHERE, globals())
