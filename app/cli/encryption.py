"""`memapp init [--encrypt]`, `encrypt`, `decrypt`, `rekey`, `key remember|forget|status`.

None of these opens the Store: encrypt/decrypt/rekey must be chat.db's only user while they copy it
(store.crypto.convert), and this process's own connections would count as another user.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from app.cli.common import JSON_HELP, Context, UsageError
from app.cli.passphrase import current_passphrase, new_passphrase
from store import db as chat_db
from store.crypto import Converted, create_encrypted, decrypt, encrypt, keys, rekey

STDIN_HELP = "read the passphrase from the first line of stdin instead of asking on the terminal"
REMEMBER_HELP = "also store the passphrase in the OS keyring, so memapp opens chat.db without asking"


def cmd_init(ctx: Context) -> None:
    path = ctx.db_path
    if path.exists() and path.stat().st_size > 0:
        raise UsageError(f"{path} already exists; nothing was changed")
    if ctx.args.encrypt:
        passphrase = new_passphrase(ctx.args.passphrase_stdin)
        create_encrypted(path, passphrase)
    chat_db.connect(path).close()  # the schema, as any first open makes it
    remembered = _remember(path, ctx.args.remember) if ctx.args.encrypt else False
    state = "encrypted" if ctx.args.encrypt else "plain"
    ctx.emit(
        {"path": str(path), "state": state, "remembered": remembered},
        lambda: print(f"created {path} ({state}){_remember_note(remembered)}"),
    )


def cmd_encrypt(ctx: Context) -> None:
    path = ctx.db_path
    keys.require_support(path)
    if keys.state(path) == "encrypted":
        raise UsageError(f"{path} is already encrypted (`memapp rekey` changes its passphrase)")
    passphrase = new_passphrase(ctx.args.passphrase_stdin)
    done = encrypt(path, passphrase)
    remembered = _remember(path, ctx.args.remember)
    _report(ctx, done, remembered, "the plain file was overwritten and removed")


def cmd_decrypt(ctx: Context) -> None:
    path = ctx.db_path
    if keys.state(path) != "encrypted":
        raise UsageError(f"{path} is not encrypted")
    salt = keys.salt_of(path)
    done = decrypt(path)
    keys.keyring_delete(salt)  # the entry named this encrypted file, which no longer exists
    _report(ctx, done, False, "backups and age-encrypted exports made before stay encrypted")


def cmd_rekey(ctx: Context) -> None:
    path = ctx.db_path
    if keys.state(path) != "encrypted":
        raise UsageError(f"{path} is not encrypted (`memapp encrypt` encrypts it)")
    old_salt = keys.salt_of(path)
    old = keys.key_for(path)  # the current passphrase first: a wrong one stops here, before asking a new one
    passphrase = new_passphrase(ctx.args.passphrase_stdin)
    done = rekey(path, passphrase)
    had_entry = keys.keyring_delete(old_salt)
    remembered = _remember(path, ctx.args.remember or had_entry)
    note = "backups made before keep the old passphrase"
    if old.source == keys.PASSPHRASE_COMMAND:
        note += f"; change what {keys.PASSPHRASE_COMMAND} prints to the new one"
    _report(ctx, done, remembered, note)


def cmd_key(ctx: Context) -> None:
    path = ctx.db_path
    if ctx.args.action == "status":
        _key_status(ctx, path)
        return
    if keys.state(path) != "encrypted":
        raise UsageError(f"{path} is not encrypted: it has no passphrase")
    salt = keys.salt_of(path)
    if ctx.args.action == "forget":
        gone = keys.keyring_delete(salt)
        ctx.emit(
            {"path": str(path), "forgotten": gone},
            lambda: print(
                "removed the passphrase from the keyring" if gone else "the keyring held no passphrase for it"
            ),
        )
        return
    passphrase = current_passphrase(path, ctx.args.passphrase_stdin)
    keys.keyring_set(salt, passphrase)
    ctx.emit(
        {"path": str(path), "remembered": True},
        lambda: print(f"stored the passphrase of {path} in the OS keyring"),
    )


def _key_status(ctx: Context, path: Path) -> None:
    state = keys.state(path)
    info: dict[str, Any] = {"path": str(path), "state": state}
    if state == "encrypted":
        salt = keys.salt_of(path)
        info.update(
            cipher=f"{keys.CIPHER} (SQLite3 Multiple Ciphers), PBKDF2-HMAC-SHA256 {keys.KDF_ITERATIONS} iterations",
            keyring_entry=f"{keys.KEYRING_SERVICE} / {keys.keyring_entry(salt)}",
            in_keyring=keys.keyring_get(salt) is not None,
            passphrase_command=bool(os.environ.get(keys.PASSPHRASE_COMMAND, "").strip()),
        )

    def human() -> None:
        print(f"database:   {path} ({state})")
        if state == "encrypted":
            print(f"cipher:     {info['cipher']}")
            print(
                f"keyring:    {'holds its passphrase' if info['in_keyring'] else 'no entry'} ({info['keyring_entry']})"
            )
            cmd = "set" if info["passphrase_command"] else "not set"
            print(f"command:    {keys.PASSPHRASE_COMMAND} {cmd}")

    ctx.emit(info, human)


def _remember(path: Path, wanted: bool) -> bool:
    found = keys.unlocked(path)
    if not wanted or found is None:
        return False
    keys.keyring_set(keys.salt_of(path), found.passphrase)
    return True


def _remember_note(remembered: bool) -> str:
    return "; its passphrase is in the OS keyring" if remembered else ""


def _report(ctx: Context, done: Converted, remembered: bool, note: str) -> None:
    data = {
        "path": str(done.path),
        "before": done.before,
        "after": done.after,
        "tables_checked": done.tables,
        "rows_checked": done.rows,
        "bytes": done.bytes,
        "remembered": remembered,
    }
    ctx.emit(
        data,
        lambda: print(
            f"{done.path}: {done.before} -> {done.after} ({done.rows} rows in {done.tables} tables checked in "
            f"the copy before it replaced the old file); {note}{_remember_note(remembered)}"
        ),
    )


def _with_passphrase_options(p: argparse.ArgumentParser, remember: bool = True) -> None:
    p.add_argument("--passphrase-stdin", action="store_true", help=STDIN_HELP)
    if remember:
        p.add_argument("--remember", action="store_true", help=REMEMBER_HELP)
    p.add_argument("--json", action="store_true", help=JSON_HELP)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("init", help="create chat.db (encrypted with --encrypt)")
    p.add_argument("--encrypt", action="store_true", help="encrypt it with a passphrase you choose now")
    _with_passphrase_options(p)
    p.set_defaults(handler=cmd_init, creates=True)

    p = sub.add_parser("encrypt", help="encrypt an existing plain chat.db with a new passphrase")
    _with_passphrase_options(p)
    p.set_defaults(handler=cmd_encrypt)

    p = sub.add_parser("decrypt", help="turn an encrypted chat.db back into a plain one")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(handler=cmd_decrypt)

    p = sub.add_parser("rekey", help="change the passphrase of an encrypted chat.db")
    _with_passphrase_options(p)
    p.set_defaults(handler=cmd_rekey)

    p = sub.add_parser("key", help="the passphrase in the OS keyring: remember, forget, status")
    p.add_argument("action", choices=["remember", "forget", "status"])
    _with_passphrase_options(p, remember=False)
    p.set_defaults(handler=cmd_key)
