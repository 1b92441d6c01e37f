"""Errors the store raises with a message meant for the person at the keyboard."""


class StoreError(Exception):
    """Base class: the message is shown to the user as it is."""


class SchemaTooNewError(StoreError):
    """The file was written by a newer memapp; we refuse to touch it."""


class NotADatabaseError(StoreError):
    """The path is not an SQLite database (or is corrupt); it is left as it is."""


class NotFoundError(StoreError):
    """No row with that id."""


class InvalidInputError(StoreError):
    """An argument is out of range (unknown category, importance 11, empty text...)."""


class DuplicateMemoryError(StoreError):
    """A near-duplicate exists that may not be merged automatically (pinned or hand-edited)."""

    def __init__(self, message: str, existing_id: int, similarity: float) -> None:
        super().__init__(message)
        self.existing_id = existing_id
        self.similarity = similarity


class PinnedMemoryError(StoreError):
    """A caller that may not touch pinned memories (the MCP tools) asked to change or trash one."""

    def __init__(self, memory_id: int) -> None:
        super().__init__(f"memory {memory_id} is pinned")
        self.memory_id = memory_id


class EncryptionKeyError(StoreError):
    """chat.db is encrypted and no passphrase opens it (none found, or a wrong one): nothing was touched.
    The message never holds the passphrase or the key (store.crypto.keys)."""
