"""Sealing what leaves an encrypted chat.db: files in a synced folder, and exports.

`Sealer` is the API sync uses for its changeset files:

    sealer = Sealer.for_database(db_path, folder_id)   # None when chat.db is not encrypted
    blob = sealer.seal(changeset_bytes)                  # an age file (age-encryption.org/v1)
    data = sealer.unseal(blob)                           # SealError if another passphrase sealed it

- Same key material as the database: the passphrase that unlocks chat.db (store.crypto.keys, so the same
  keyring entry, MEMAPP_PASSPHRASE_COMMAND or prompt). Every device that opens its chat.db with that
  passphrase reads every other device's files, whatever each database's own salt.
- Deterministic: the age X25519 identity is derived from PBKDF2-HMAC-SHA256(passphrase, "memapp seal v1" +
  `context`), then used as the identity's secret scalar. `context` is any bytes every device agrees on and
  that differ between sync folders (e.g. the random id the folder was created with; it is not secret). It
  salts the derivation, so one dictionary attack does not serve every memapp user's folder at once.
- Cheap: that derivation (~26 ms, the same cost as opening chat.db) runs once per process and context; each
  seal or unseal is then one X25519 exchange plus ChaCha20-Poly1305 over the data (~1 ms for 10 kB), not the
  ~1 s scrypt of age's passphrase mode.
- Standard: a sealed file is an ordinary age file; `Sealer.identity()` is the AGE-SECRET-KEY-1… string that
  `age -d -i` accepts.

Exports are meant to be opened by a person: `seal_export` uses age's own passphrase mode (scrypt), so
`age -d export.json.age` asks for the passphrase of chat.db and gives the JSON back, with no memapp needed;
`open_export` reads one back for `memapp import`.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Any

from store.crypto import keys
from store.errors import StoreError

AGE_MAGIC = b"age-encryption.org/v1\n"
SEAL_LABEL = b"memapp seal v1\x00"
_BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


class SealError(StoreError):
    """Sealed data that this passphrase cannot open (another passphrase, another context, or damaged)."""


def is_sealed(data: bytes) -> bool:
    """Whether `data` is an age file (what seal and seal_export write)."""
    return data.startswith(AGE_MAGIC)


class Sealer:
    """Seals and unseals bytes for one passphrase and context (see the module docstring)."""

    _cache: dict[tuple[str, bytes], Any] = {}
    _lock = threading.Lock()

    def __init__(self, passphrase: str, context: bytes = b"") -> None:
        import pyrage  # here: only a process that seals pays for the import

        self._pyrage = pyrage
        with Sealer._lock:
            identity = Sealer._cache.get((passphrase, context))
            if identity is None:
                seed = hashlib.pbkdf2_hmac(
                    "sha256", passphrase.encode("utf-8"), SEAL_LABEL + context, keys.KDF_ITERATIONS, 32
                )
                identity = pyrage.x25519.Identity.from_str(_bech32("age-secret-key-", seed).upper())
                Sealer._cache[(passphrase, context)] = identity
        self._identity = identity
        self._recipient = identity.to_public()

    @classmethod
    def for_database(cls, db_path: Path | str, context: bytes = b"") -> Sealer | None:
        """A Sealer with the passphrase of the encrypted chat.db at `db_path` (unlocking it through the usual
        sources if this process has not yet), or None when that database is not encrypted: then nothing
        written beside it needs sealing."""
        if not keys.is_encrypted(db_path):
            return None
        return cls(keys.key_for(db_path).passphrase, context)

    def seal(self, data: bytes) -> bytes:
        return bytes(self._pyrage.encrypt(bytes(data), [self._recipient]))

    def unseal(self, data: bytes) -> bytes:
        try:
            return bytes(self._pyrage.decrypt(bytes(data), [self._identity]))
        except Exception:  # noqa: BLE001 - pyrage.DecryptError and friends: one meaning for the caller
            raise SealError(
                "this file was sealed with another passphrase (or for another folder), or it is damaged"
            ) from None

    def identity(self) -> str:
        """The age identity (secret): for `age -d -i FILE` by hand. Never log it."""
        return str(self._identity)

    def recipient(self) -> str:
        """The age recipient (public): age1…"""
        return str(self._recipient)


def seal_export(data: bytes, passphrase: str) -> bytes:
    """An age file of `data` under `passphrase` (age's scrypt mode, about a second: once per export)."""
    import pyrage

    return bytes(pyrage.passphrase.encrypt(bytes(data), passphrase))


def open_export(data: bytes, passphrase: str) -> bytes:
    import pyrage

    try:
        return bytes(pyrage.passphrase.decrypt(bytes(data), passphrase))
    except Exception:  # noqa: BLE001 - wrong passphrase or a damaged file: one line
        raise SealError(
            "this age-encrypted export does not open with the passphrase of chat.db (or it is damaged)"
        ) from None


# -- bech32 (BIP 173), which age uses to write keys as text -----------------------------------------------


def _polymod(values: list[int]) -> int:
    gen = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)
    chk = 1
    for v in values:
        top = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ v
        for i in range(5):
            chk ^= gen[i] if (top >> i) & 1 else 0
    return chk


def _bech32(hrp: str, data: bytes) -> str:
    acc, bits, words = 0, 0, []
    for byte in data:  # 8-bit bytes to 5-bit words, padded
        acc = (acc << 8) | byte
        bits += 8
        while bits >= 5:
            bits -= 5
            words.append((acc >> bits) & 31)
    if bits:
        words.append((acc << (5 - bits)) & 31)
    expanded = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]
    mod = _polymod(expanded + words + [0] * 6) ^ 1
    checksum = [(mod >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(_BECH32[w] for w in words + checksum)
