"""The changeset files in the sync folder: their format, and writing and reading them safely.

    PATH/<device id>/device.json          the device's name (written once, by `sync init`)
    PATH/<device id>/state.json           when it last synced and what it has applied (for `sync status`)
    PATH/<device id>/0000000001.memsync   its changes, numbered from 1, never rewritten

A .memsync file is `MEMSYNC1`, a flags byte (1 = sealed), the payload, and a trailer: `MEND`, the length
of everything before the trailer (8 bytes, big-endian) and its SHA-256. The payload is a 4-byte header
length, the header (JSON: device, seq, what the device had applied when it wrote the file, its clock)
and the changeset compressed with zlib; sealed, the whole payload is encrypted (store.sync.crypto), so
a synced folder holds no text of the user's (the header's device ids and counters included).

Why the trailer: Syncthing, Dropbox and a USB copy all make a file appear before it is whole. A file is
read only when its length and checksum match its trailer; until then it is "incomplete" and waits for
the next sync. Files are written under a temporary name, fsynced, then linked to their final name,
refusing an existing one (two processes of one device never both write number N).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from store.errors import StoreError
from store.files import commit_partial, partial_file

MAGIC = b"MEMSYNC1"
END = b"MEND"
TRAILER = len(END) + 8 + 32
SEALED = 1
NAME = re.compile(r"^(\d{10})\.memsync$")
FORMAT_VERSION = 1


class Sealer(Protocol):
    """Encrypts a file's payload (and decrypts it): store.sync.crypto.AgeSealer, or any object with
    these two methods (the encryption of chat.db supplies one bound to the database key)."""

    def seal(self, data: bytes) -> bytes: ...

    def unseal(self, data: bytes) -> bytes: ...


class Incomplete(StoreError):
    """The file is not whole yet (still being written or synced): it is read by a later sync."""


class SyncFileError(StoreError):
    """A whole file that cannot be read: sealed without a key, a wrong key, or damaged."""


@dataclass(frozen=True)
class SyncFile:
    header: dict[str, Any]
    changeset: bytes

    @property
    def seq(self) -> int:
        return int(self.header["seq"])

    @property
    def device(self) -> str:
        return str(self.header["device"])

    @property
    def deps(self) -> dict[str, int]:
        return {str(k): int(v) for k, v in dict(self.header.get("deps", {})).items()}


def file_name(seq: int) -> str:
    return f"{seq:010d}.memsync"


def encode(header: dict[str, Any], changeset: bytes, sealer: Sealer | None) -> bytes:
    head = json.dumps(header, sort_keys=True).encode()
    payload = struct.pack(">I", len(head)) + head + zlib.compress(changeset, 6)
    if sealer is not None:
        payload = sealer.seal(payload)
    data = MAGIC + bytes([SEALED if sealer is not None else 0]) + payload
    return data + END + struct.pack(">Q", len(data)) + hashlib.sha256(data).digest()


def whole(data: bytes) -> bytes:
    """The file without its trailer, or Incomplete when the trailer does not vouch for it."""
    if len(data) < len(MAGIC) + 1 + TRAILER or not data.startswith(MAGIC):
        raise Incomplete("not whole yet")
    body, trailer = data[:-TRAILER], data[-TRAILER:]
    if trailer[:4] != END or struct.unpack(">Q", trailer[4:12])[0] != len(body):
        raise Incomplete("not whole yet")
    if hashlib.sha256(body).digest() != trailer[12:]:
        raise Incomplete("its checksum does not match yet")
    return body


def decode(data: bytes, sealer: Sealer | None, *, where: str = "") -> SyncFile:
    body = whole(data)
    flags, payload = body[len(MAGIC)], body[len(MAGIC) + 1 :]
    if flags & SEALED:
        if sealer is None:
            raise SyncFileError(
                f"{where} is encrypted and this chat.db has no sync key: unlock it, or set the key "
                '(docs/guide/sync.md, "Encryption")'
            )
        try:
            payload = sealer.unseal(payload)
        except Exception as exc:
            raise SyncFileError(f"{where} cannot be decrypted with this device's key ({exc})") from exc
    try:
        (n,) = struct.unpack(">I", payload[:4])
        header = json.loads(payload[4 : 4 + n])
        changeset = zlib.decompress(payload[4 + n :])
    except (struct.error, ValueError, zlib.error) as exc:
        raise SyncFileError(f"{where} is damaged ({exc})") from exc
    if not isinstance(header, dict) or int(header.get("format", 0)) > FORMAT_VERSION:
        raise SyncFileError(f"{where} was written by a newer memapp; upgrade memapp on this device")
    return SyncFile(header, changeset)


def read(path: Path, sealer: Sealer | None) -> SyncFile:
    return decode(path.read_bytes(), sealer, where=str(path))


def write(folder: Path, seq: int, data: bytes) -> Path:
    """Write file number `seq` into `folder` whole or not at all; refuses to replace an existing one."""
    dest = folder / file_name(seq)
    with partial_file(dest, binary=True) as (tmp, fh):
        fh.write(data)
    commit_partial(tmp, dest, replace=False)
    return dest


def numbered(folder: Path) -> dict[int, Path]:
    """seq -> path of each numbered file in a device's folder (partial or not)."""
    out: dict[int, Path] = {}
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return out
    for entry in entries:
        m = NAME.match(entry.name)
        if m and entry.is_file():
            out[int(m.group(1))] = Path(entry.path)
    return out


def write_json(path: Path, data: dict[str, Any]) -> None:
    """A small advisory file (device.json, state.json): replaced atomically, but not fsynced (nothing
    depends on it surviving a power cut: `sync init` and every sync write it again)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh, sort_keys=True, indent=1)
    os.replace(tmp, path)


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
