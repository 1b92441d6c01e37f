"""`memapp sync [init|status]`: the same memory on several machines through a folder they already sync.

`memapp sync init PATH` joins a folder (Syncthing, Dropbox, iCloud Drive, a share, a USB stick);
`memapp sync` sends this device's changes there and applies the other devices'; `--watch` keeps doing
so; `memapp sync status` lists the devices, when each last synced and what is waiting
(docs/guide/sync.md).
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

from app.cli.common import JSON_HELP, Context
from store import InvalidInputError, iso
from store.sync import Report, Sealer, init, sealer_for, state, sync, sync_status, watch_folder


def _sealer(ctx: Context) -> Sealer | None:
    return sealer_for(ctx.store, state.get(ctx.store.con, "key_file") or None)


def cmd_init(ctx: Context) -> None:
    a = ctx.args
    folder = Path(a.path).expanduser()
    if folder.exists() and not folder.is_dir():
        raise InvalidInputError(f"{folder} is a file, not a folder")
    folder.mkdir(parents=True, exist_ok=True)
    dev = init(
        ctx.store,
        folder,
        a.name or platform.node() or "this device",
        key_file=a.key_file,
        new_device=a.new_device,
    )
    _sealer(ctx)  # a key file that cannot be read is reported now, not at the first sync
    ctx.emit(
        {"device": dev.id, "name": dev.name, "folder": dev.folder},
        lambda: print(f"this device ({dev.name}, {dev.id}) syncs through {dev.folder}; run `memapp sync`"),
    )


def _print_report(r: Report) -> None:
    parts = []
    if r.sent:
        parts.append(f"sent {len(r.sent)} file{'s' if len(r.sent) != 1 else ''}")
    if r.applied:
        changes = sum(n for _, _, n in r.applied)
        parts.append(f"applied {len(r.applied)} file{'s' if len(r.applied) != 1 else ''} ({changes} changes)")
    if r.conflicts:
        parts.append(
            f"{r.conflicts} conflict{'s' if r.conflicts != 1 else ''} to review (`memapp conflicts`)"
        )
    print("; ".join(parts) if parts else "up to date")
    for why in r.waiting:
        print(f"  waiting: {why}")


def cmd_sync(ctx: Context) -> None:
    a = ctx.args
    sealer = _sealer(ctx)
    if a.watch:
        print("watching for changes (Ctrl-C to stop)")

        def shown(r: Report) -> None:
            if a.json:
                ctx.emit(r.to_json())
            elif r.sent or r.applied or r.waiting:
                print(f"{iso(time.time())}  ", end="")
                _print_report(r)

        watch_folder(ctx.store, sealer, interval=a.interval, embed=not a.no_embed, on_sync=shown)
        return
    report = sync(ctx.store, sealer, embed=not a.no_embed)
    ctx.emit(report.to_json(), lambda: _print_report(report))


def cmd_status(ctx: Context) -> None:
    s = sync_status(ctx.store, check_files=True, encrypted=_sealer(ctx) is not None)

    def human() -> None:
        print(
            f"this device: {s.name} ({s.device}), folder {s.folder}"
            + ("" if s.folder_ok else " (NOT AVAILABLE)")
        )
        print(
            f"  last sync {iso(s.last_sync) or 'never'}; {s.sent} files sent; "
            + ("local changes waiting for `memapp sync`" if s.pending_local else "nothing new to send")
            + ("; files encrypted" if s.encrypted else "")
        )
        if not s.peers:
            print("no other device has joined this folder yet")
        for p in s.peers:
            waiting = p.files - p.applied
            extra = f", {p.incomplete} still arriving" if p.incomplete else ""
            print(
                f"  {p.name} ({p.id}): last seen {iso(p.last_sync) or 'never'}; "
                f"{waiting} file{'s' if waiting != 1 else ''} to apply{extra}; has {p.has_ours} of our {s.sent}"
            )

    ctx.emit(s.to_json(), human)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sync", help="sync with your other machines through a shared folder")
    p.set_defaults(handler=cmd_sync, json=False)
    p.add_argument(
        "--watch", action="store_true", help="keep syncing whenever something changes (Ctrl-C stops)"
    )
    p.add_argument(
        "--interval", type=float, default=2.0, help="seconds between looks with --watch (default 2)"
    )
    p.add_argument("--no-embed", action="store_true", help="leave the new text's vectors to `memapp embed`")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    ssub = p.add_subparsers(dest="sync_command", metavar="ACTION")

    i = ssub.add_parser("init", help="join a sync folder as this device")
    i.add_argument("path", help="a folder your machines share (Syncthing, Dropbox, a share, a USB stick)")
    i.add_argument("--name", help="this device's name (default: the host name)")
    i.add_argument("--key-file", help="an age identity file (age-keygen) to encrypt the sync files with")
    i.add_argument(
        "--new-device",
        action="store_true",
        help="this chat.db is a copy of another device's: become a new device",
    )
    i.add_argument("--json", action="store_true", help=JSON_HELP)
    i.set_defaults(handler=cmd_init, creates=True)

    st = ssub.add_parser("status", help="devices, when each last synced, what is waiting")
    st.add_argument("--json", action="store_true", help=JSON_HELP)
    st.set_defaults(handler=cmd_status)
