"""One message of a thread: a header line (role, position, time, tokens) above the body, in one widget.

Assistant text is rendered as Markdown with Rich's renderer: its height is known as soon as it is laid
out, which the message window needs to keep the reader's place when it loads earlier messages above
(Textual's Markdown widget mounts its blocks later, from a parser thread), and one widget per message
keeps a page of them cheap to lay out. Everything else is shown literally; control characters are made
visible in both.
"""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group
from rich.markdown import Markdown
from rich.text import Text
from textual.widgets import Static

from app.text import literal, number, when
from store import Message
from store.message_notes import notes

ROLE_LABELS = {"user": "You", "assistant": "Assistant", "system": "System", "tool": "Tool"}


class MessageView(Static):
    """A message; `-<role>` classes let the app stylesheet style each role."""

    DEFAULT_CSS: ClassVar[str] = """
    MessageView {
        height: auto;
        padding: 0 1;
        margin: 0 0 1 0;
    }
    """

    def __init__(self, message: Message, *, index: int, estimated: bool = False) -> None:
        role = message.role if message.role in ROLE_LABELS else "other"
        super().__init__(self.compose_message(message, index, estimated), classes=f"-{role}")
        self.message = message
        self.index = index

    @staticmethod
    def compose_message(m: Message, index: int, estimated: bool) -> Group:
        header = Text(no_wrap=True, overflow="ellipsis")
        header.append(ROLE_LABELS.get(m.role, literal(m.role)), style="bold")
        header.append(f"  #{index + 1}", style="dim")
        if m.created_at is not None:
            header.append(f" · {when(m.created_at)}", style="dim")
        header.append(f" · {number(m.token_count, estimated)} tokens", style="dim")
        # Tool calls, attachments, the model: one dim line each, literal (names come from the export).
        lines = [
            Text(literal(line), style="dim italic", no_wrap=True, overflow="ellipsis")
            for line in notes(m.metadata)
        ]
        body = literal(m.content)
        if not body:
            return Group(header, *lines)
        if m.role == "assistant":
            return Group(header, *lines, Markdown(body, code_theme="ansi_dark", hyperlinks=False))
        return Group(header, *lines, Text(body))
