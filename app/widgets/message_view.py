"""One message of a thread: a header line (role, position, time, tokens) and the body.

Assistant text is rendered as Markdown with Rich's renderer, in one widget: its height is known as soon
as it is laid out, which the message window needs to keep the reader's place when it loads earlier
messages above (Textual's Markdown widget mounts its blocks later, from a parser thread). Everything
else is shown literally. Control characters are made visible in both.
"""

from __future__ import annotations

from typing import ClassVar

from rich.markdown import Markdown
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from app.widgets.format import literal, number, when
from store import Message

ROLE_LABELS = {"user": "You", "assistant": "Assistant", "system": "System", "tool": "Tool"}


class MessageView(Vertical):
    """A message; `-<role>` classes let the app stylesheet style each role."""

    DEFAULT_CSS: ClassVar[str] = """
    MessageView {
        height: auto;
        padding: 0 1;
        margin: 0 0 1 0;
        & > .message-header { height: 1; }
        & > .message-body { height: auto; }
    }
    """

    def __init__(self, message: Message, *, index: int, estimated: bool = False) -> None:
        super().__init__(classes=f"-{message.role if message.role in ROLE_LABELS else 'other'}")
        self.message = message
        self.index = index
        self.estimated = estimated

    def compose(self) -> ComposeResult:
        m = self.message
        header = Text(no_wrap=True, overflow="ellipsis")
        header.append(ROLE_LABELS.get(m.role, m.role), style="bold")
        header.append(f"  #{self.index + 1}", style="dim")
        if m.created_at is not None:
            header.append(f" · {when(m.created_at)}", style="dim")
        header.append(f" · {number(m.token_count, self.estimated)} tokens", style="dim")
        yield Static(header, classes="message-header")
        body = literal(m.content)
        if m.role == "assistant":
            yield Static(Markdown(body, code_theme="ansi_dark", hyperlinks=False), classes="message-body")
        else:
            yield Static(Text(body), classes="message-body")
