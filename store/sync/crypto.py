"""Encrypting sync files with age (pyrage), so a synced folder holds no plain text.

The sync engine takes any `Sealer` (store.sync.files); this module supplies the age one. Every device
of one person must open the others' files, so the key is shared: an age X25519 identity derived from a
secret the devices have in common. Two sources:

- the key of an encrypted chat.db (the same keyring entry on each device): `KEY_SOURCE`, a function from
  the Store to that secret or None, which the encryption at rest sets (`set_key_source`);
- or an age identity file (`AGE-SECRET-KEY-1...`, as `age-keygen` writes it), named by
  `memapp sync init --key-file PATH` and kept 0600 on each device.

Derivation: HKDF-SHA256 over the secret with a fixed label, bech32-encoded as age writes identities, so
the same secret gives the same identity on every device and this key is never the database key itself.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pyrage
from pyrage import x25519

from store.errors import StoreError

if TYPE_CHECKING:
    from store.store import Store

LABEL = b"memapp sync file key v1"
_CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


class AgeSealer:
    """Seals with age to the identity's own recipient; unseals with the identity."""

    def __init__(self, identity: x25519.Identity) -> None:
        self.identity = identity
        self.recipient = identity.to_public()

    @classmethod
    def from_secret(cls, secret: bytes) -> AgeSealer:
        return cls(identity_from_secret(secret))

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


def identity_from_secret(secret: bytes) -> x25519.Identity:
    if not secret:
        raise StoreError("an empty key cannot seal sync files")
    prk = hmac.new(LABEL, secret, hashlib.sha256).digest()
    key = hmac.new(prk, b"age x25519\x01", hashlib.sha256).digest()  # HKDF-Expand, one block
    return x25519.Identity.from_str(bech32("age-secret-key-", key).upper())


def bech32(hrp: str, data: bytes) -> str:
    """BIP-173 bech32 (what age uses for its keys)."""
    words, acc, bits = [], 0, 0
    for byte in data:
        acc, bits = (acc << 8) | byte, bits + 8
        while bits >= 5:
            bits -= 5
            words.append((acc >> bits) & 31)
    if bits:
        words.append((acc << (5 - bits)) & 31)
    values = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp] + words + [0] * 6
    polymod = _polymod(values) ^ 1
    checksum = [(polymod >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(_CHARSET[w] for w in words + checksum)


def _polymod(values: list[int]) -> int:
    gen = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)
    chk = 1
    for v in values:
        top = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ v
        for i in range(5):
            chk ^= gen[i] if (top >> i) & 1 else 0
    return chk


# Set by the encryption of chat.db: the secret of an unlocked encrypted database, None for a plain one.
KeySource = Callable[["Store"], bytes | None]
_key_source: KeySource | None = None


def set_key_source(source: KeySource | None) -> None:
    global _key_source
    _key_source = source


def sealer_for(store: Store, key_file: str | None) -> AgeSealer | None:
    """The sealer this device uses: the database key when chat.db is encrypted, else the key file named
    at `sync init`, else None (files are written in the clear)."""
    if _key_source is not None:
        secret = _key_source(store)
        if secret:
            return AgeSealer.from_secret(secret)
    if key_file:
        return AgeSealer.from_file(Path(key_file).expanduser())
    return None
