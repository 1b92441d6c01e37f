"""Asking a person for chat.db's passphrase on a terminal (getpass: nothing echoed, nothing in the history).

Only on a terminal: the MCP server and the hooks run with a pipe on stdin and must never block on a prompt
nobody sees; they get their passphrase from MEMAPP_PASSPHRASE_COMMAND or the keyring (store.crypto.keys).
A new passphrase is asked twice; without a terminal it may come on stdin (`--passphrase-stdin`), as
`docker login --password-stdin` does: never on the command line, where `ps` and the shell history see it.
"""

from __future__ import annotations

import getpass
import sys
from pathlib import Path

from app.text import short_path
from store import InvalidInputError
from store.crypto import keys

MIN_LENGTH = 8


def on_terminal() -> bool:
    return sys.stdin is not None and sys.stdin.isatty() and sys.stderr.isatty()


def _ask(path: Path, attempt: int) -> str | None:
    if attempt > 1:
        print("memapp: that passphrase does not open it", file=sys.stderr)
    try:
        return getpass.getpass(f"passphrase for {short_path(path)}: ", stream=sys.stderr)
    except (EOFError, KeyboardInterrupt):
        print(file=sys.stderr)
        return None


def install_prompt() -> None:
    """Let an encrypted chat.db ask for its passphrase when this process runs on a terminal."""
    keys.set_prompt(_ask if on_terminal() else None)


def new_passphrase(from_stdin: bool, what: str = "new passphrase") -> str:
    """A new passphrase: the first line of stdin with `from_stdin`, else asked twice on the terminal."""
    if from_stdin:
        line = sys.stdin.readline()
        text = line[:-1] if line.endswith("\n") else line
        text = text[:-1] if text.endswith("\r") else text
    elif on_terminal():
        try:
            text = getpass.getpass(f"{what}: ", stream=sys.stderr)
            again = getpass.getpass(f"{what} again: ", stream=sys.stderr)
        except (EOFError, KeyboardInterrupt):
            raise InvalidInputError("no passphrase given; nothing was changed") from None
        if text != again:
            raise InvalidInputError("the two passphrases differ; nothing was changed")
    else:
        raise InvalidInputError(
            f"give the {what} on a terminal, or on stdin with --passphrase-stdin (never as an argument)"
        )
    if len(text) < MIN_LENGTH:
        raise InvalidInputError(
            f"the passphrase must have at least {MIN_LENGTH} characters (a few random words are best); "
            "nothing was changed"
        )
    return text


def current_passphrase(path: Path, from_stdin: bool) -> str:
    """The passphrase of the encrypted chat.db at `path`, typed now (stdin or the terminal), checked."""
    if from_stdin:
        line = sys.stdin.readline().rstrip("\r\n")
        if keys.unlock(path, line, "stdin"):
            return line
        raise keys_error(path)
    if not on_terminal():
        raise InvalidInputError(
            "type the passphrase on a terminal, or give it on stdin with --passphrase-stdin"
        )
    for attempt in range(1, keys.PROMPT_ATTEMPTS + 1):
        text = _ask(path, attempt)
        if text is None:
            break
        if keys.unlock(path, text, "prompt"):
            return text
    raise keys_error(path)


def keys_error(path: Path) -> Exception:
    from store import EncryptionKeyError

    return EncryptionKeyError(f"that passphrase does not open {path}; nothing was changed")
