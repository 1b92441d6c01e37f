"""App-wide messages: things that happen off the UI thread and that more than one screen cares about."""

from __future__ import annotations

from textual.message import Message


class ModelStateChanged(Message):
    """The embedding model finished loading (state 'ready') or could not ('unavailable: why').

    Posted by the app's model worker; the status line and the search screen react to it.
    """

    def __init__(self, state: str) -> None:
        super().__init__()
        self.state = state


class CountsChanged(Message):
    """Fresh counts for the status line, read in a worker after any write."""

    def __init__(self, threads: int, messages: int, memories: int, trash: int) -> None:
        super().__init__()
        self.threads = threads
        self.messages = messages
        self.memories = memories
        self.trash = trash
