"""This device's identity and clock, kept in chat.db's `sync_state` table.

Why a Lamport clock and not the wall clock: devices' clocks may differ by hours, and a laptop that was
off for months must not have its old edits win because its clock ran fast. Every capture of local
changes takes the next value of a counter that is also raised past every counter seen in another
device's file; a stamp is that counter and the device id (`000000002a.3f9c1e0b7d42`): fixed width, so
comparing two stamps as text orders them by counter, then by device (a tie between two devices is
broken the same way everywhere). A later edit of what a device has already seen always has a higher
stamp than it; two edits made without knowing each other are ordered arbitrarily but identically on
every device.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

import apsw

from store.errors import StoreError

DEVICE_ID_HEX = 12


class NotInitialised(StoreError):
    """This chat.db has not joined a sync folder (`memapp sync init PATH`)."""


@dataclass(frozen=True)
class Device:
    id: str
    name: str
    folder: str
    db_nonce: str  # tells this chat.db's files from those of a copy that claims the same device


def new_device_id() -> str:
    return secrets.token_hex(DEVICE_ID_HEX // 2)


def stamp(counter: int, device: str) -> str:
    return f"{counter:010x}.{device}"


def stamp_counter(value: str | None) -> int:
    if not value:
        return 0
    try:
        return int(value.split(".", 1)[0], 16)
    except ValueError:
        return 0


def get(con: apsw.Connection, key: str, default: str | None = None) -> str | None:
    row = con.execute("SELECT value FROM sync_state WHERE key = ?", (key,)).fetchone()
    return default if row is None else str(row[0])


def put(con: apsw.Connection, key: str, value: str | int) -> None:
    con.execute(
        "INSERT INTO sync_state(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, str(value)),
    )


def device(con: apsw.Connection) -> Device:
    d = device_or_none(con)
    if d is None:
        raise NotInitialised("this chat.db does not sync yet: run `memapp sync init PATH` first")
    return d


def device_or_none(con: apsw.Connection) -> Device | None:
    values: dict[str, str] = {str(k): str(v) for k, v in con.execute("SELECT key, value FROM sync_state")}
    if "device" not in values:
        return None
    return Device(
        str(values["device"]),
        str(values.get("name", "")),
        str(values.get("folder", "")),
        str(values["nonce"]),
    )


def next_stamp(con: apsw.Connection, dev: str) -> str:
    """A new stamp for local changes (inside the caller's transaction)."""
    counter = int(get(con, "clock", "0") or 0) + 1
    put(con, "clock", counter)
    return stamp(counter, dev)


def observe(con: apsw.Connection, counter: int) -> None:
    """Raise the clock past a counter seen in another device's file."""
    if counter > int(get(con, "clock", "0") or 0):
        put(con, "clock", counter)


def out_seq(con: apsw.Connection) -> int:
    return int(get(con, "out_seq", "0") or 0)


def applied(con: apsw.Connection) -> dict[str, int]:
    """device -> the last of its files applied here."""
    return {str(d): int(s) for d, s in con.execute("SELECT device, seq FROM sync_applied")}
