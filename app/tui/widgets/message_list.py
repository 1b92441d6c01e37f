"""A scrolling window onto a thread's messages that loads more as the reader reaches either end.

Why a window: a 5,000-message thread cannot be mounted as 5,000 widgets (seconds to open, memory for
nothing). The list holds at most `MAX_MOUNTED` messages, starting with `PAGE` around where the reader
wants to be; scrolling near the bottom appends the next page, near the top prepends the previous one,
and the far end is dropped so the window stays small. Prepending keeps the reader's place: the first
message already shown is remembered with its distance from the top of the viewport and put back there
once the new ones are laid out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from textual.containers import VerticalScroll
from textual.widgets import Static
from textual.worker import Worker

from app.text import number
from app.tui.widgets.message_view import MessageView
from app.tui.work import run_in_thread
from store import Message

PAGE = 20
MAX_MOUNTED = 100
EDGE = 3  # lines from either end of the scroll range that count as "reached the end"
SETTLE_TRIES = 20  # refreshes to wait for the new messages' layout before scrolling to the target

Fetch = Callable[[int, int], Sequence[Message]]


class MessageList(VerticalScroll):
    """Messages [start, end) of `total`, loaded in pages through `fetch(offset, limit)` (a thread worker)."""

    DEFAULT_CSS: ClassVar[str] = """
    MessageList {
        height: 1fr;
        & > .edge { height: 1; color: $text-muted; text-align: center; }
    }
    """

    def __init__(self, fetch: Fetch, total: int, *, estimated: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self.fetch = fetch
        self.total = total
        self.estimated = estimated
        self.start = 0
        self.end = 0
        self.busy = False
        self.target: int | None = None
        self._settling = False  # a target to scroll to once the messages just mounted are laid out
        self._top = Static("", classes="edge", markup=False)
        self._bottom = Static("", classes="edge", markup=False)

    def compose(self):  # type: ignore[no-untyped-def]
        yield self._top
        yield self._bottom

    def on_mount(self) -> None:
        self.watch(self, "scroll_y", self._scrolled, init=False)
        self.watch(self, "virtual_size", self._laid_out_again, init=False)

    @property
    def views(self) -> list[MessageView]:
        return list(self.query_children(MessageView))

    # -- whole-window jumps -----------------------------------------------------------------------

    def open_at(self, index: int | None) -> None:
        """Show the window around message `index` (0-based; None: the beginning) with it at the top."""
        self.target = index
        start = 0 if index is None else max(0, min(index - 2, self.total - PAGE))
        self._load(start, PAGE, self._replace)

    def current(self) -> MessageView | None:
        """The message the reader is on: the highlighted one (a search hit, a find match) if it is on
        screen, else the first one whose top is in view."""
        views = self.views
        top, bottom = self.scroll_y, self.scroll_y + self.scrollable_content_region.height
        target = next((v for v in views if v.has_class("-target")), None)
        if target is not None and top - 1 <= target.virtual_region.y < bottom:
            return target
        return next((v for v in views if v.virtual_region.y >= top - 1), views[-1] if views else None)

    def first(self) -> None:
        if self.start == 0:
            self.scroll_home(animate=False)
        else:
            self.open_at(None)

    def last(self) -> None:
        if self.end >= self.total:
            self.scroll_end(animate=False)
            return
        self.target = None
        self._load(max(0, self.total - PAGE), PAGE, self._replace_at_end)

    # -- loading --------------------------------------------------------------------------------------

    def _load(self, offset: int, limit: int, then: Callable[[int, list[Message]], object]) -> Worker[None]:
        self.busy = True
        fetch = self.fetch

        def done(rows: list[Message]) -> object:
            return then(offset, rows)

        def failed(_exc: BaseException) -> None:
            self.busy = False

        return run_in_thread(
            self,
            lambda: list(fetch(offset, limit)),
            done,
            group="messages",
            exclusive=True,
            description="reading messages",
            on_error=failed,
        )

    def _make(self, offset: int, rows: list[Message]) -> list[MessageView]:
        return [MessageView(m, index=offset + i, estimated=self.estimated) for i, m in enumerate(rows)]

    async def _replace(self, offset: int, rows: list[Message]) -> None:
        await self.remove_children(MessageView)
        self.start, self.end = offset, offset + len(rows)
        await self.mount_all(self._make(offset, rows), before=self._bottom)
        self._update_edges()
        self._settling = True
        self.call_after_refresh(self._settle_on_target)

    async def _replace_at_end(self, offset: int, rows: list[Message]) -> None:
        await self._replace(offset, rows)
        self.call_after_refresh(lambda: self.scroll_end(animate=False, immediate=True))

    def _settle_on_target(self, tries: int = 0) -> None:
        """Scroll the target message (a search hit, a find match) to the top, once it is laid out.

        Why wait: Textual can run an after-refresh callback before the layout that was due (when the
        screen's refresh is deferred, e.g. under load or inside a batch update); the new messages then
        have no position yet and the scroll landed at the top of the window, not at the hit (issue
        28.6). So this looks again after the next refreshes, and the content-size watcher
        (`_laid_out_again`) calls it once the layout has happened."""
        if not self._settling:
            return
        target = next((v for v in self.views if v.index == self.target), None)
        for view in self.views:
            view.set_class(view is target, "-target")
        if target is not None and not self._placed(target):
            if tries < SETTLE_TRIES:
                self.call_after_refresh(self._settle_on_target, tries + 1)
            else:
                self.busy = False  # paging works meanwhile; the layout watcher still scrolls to it
            return
        self._settling = False
        if target is not None:
            self.scroll_to(y=target.virtual_region.y, animate=False, immediate=True)
        else:
            self.scroll_home(animate=False, immediate=True)
        self.busy = False

    def _placed(self, view: MessageView) -> bool:
        """Whether `view` has its place in the laid-out content (a widget not laid out yet has an empty
        region, and scrolling is clamped to the content size the last layout gave)."""
        region = view.virtual_region
        return region.height > 0 and self.virtual_size.height >= region.bottom

    def _laid_out_again(self, _size: object) -> None:
        # Called from inside the layout pass (the content size is set before the viewport's): scroll
        # once that pass is over, or the scroll is clamped to the old size.
        if self._settling:
            self.call_after_refresh(self._settle_on_target, SETTLE_TRIES)

    def _scrolled(self, _y: float) -> None:
        if self.busy or not self.views:
            return
        if self.scroll_y >= self.max_scroll_y - EDGE and self.end < self.total:
            self._load(self.end, PAGE, self._append)
        elif self.scroll_y <= EDGE and self.start > 0:
            offset = max(0, self.start - PAGE)
            self._load(offset, self.start - offset, self._prepend)

    async def _append(self, offset: int, rows: list[Message]) -> None:
        if offset != self.end:  # the window moved meanwhile
            self.busy = False
            return
        await self.mount_all(self._make(offset, rows), before=self._bottom)
        self.end += len(rows)
        extra = len(self.views) - MAX_MOUNTED
        self._update_edges()
        if extra > 0:
            await self._drop_top(extra)
        else:
            self.busy = False

    async def _drop_top(self, count: int) -> None:
        views = self.views
        keep = views[count]
        before = keep.virtual_region.y
        await self.remove_children(views[:count])
        self.start += count
        self._update_edges()

        def fix() -> None:
            self.scroll_to(
                y=max(0, self.scroll_y - (before - keep.virtual_region.y)), animate=False, immediate=True
            )
            self.busy = False

        self.call_after_refresh(fix)

    async def _prepend(self, offset: int, rows: list[Message]) -> None:
        views = self.views
        if not views or offset + len(rows) != self.start:
            self.busy = False
            return
        anchor = views[0]
        from_top = anchor.virtual_region.y - self.scroll_y
        await self.mount_all(self._make(offset, rows), after=self._top)
        self.start = offset
        extra = len(self.views) - MAX_MOUNTED
        if extra > 0:
            await self.remove_children(self.views[-extra:])
            self.end -= extra
        self._update_edges()

        def fix() -> None:
            self.scroll_to(y=anchor.virtual_region.y - from_top, animate=False, immediate=True)
            self.busy = False

        self.call_after_refresh(fix)

    def _update_edges(self) -> None:
        self._top.update(
            f"▲ {number(self.start)} earlier — scroll up or press Home"
            if self.start
            else "— start of thread —"
        )
        left = self.total - self.end
        self._bottom.update(
            f"▼ {number(left)} more — scroll down or press End" if left else "— end of thread —"
        )
