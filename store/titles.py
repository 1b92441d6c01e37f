"""Which title a re-imported thread shows: the person's rename, unless the export renamed it too.

Why a second title is kept (`threads.source_title`, migration 8): the title shown can be changed by hand
(`memapp threads rename`, `e` in the TUI), and a re-import compared it with the export's title, found
them different, and put the export's back: re-importing an unchanged export undid every rename. Knowing
the title the export gave last time tells "the person renamed it here" (keep theirs) from "the thread was
renamed where it came from" (take the new one, as a newer export brings new messages).

A thread stored before migration 8 has no source title (NULL): whether its title is a rename cannot be
known, so it is kept, and the export's title is remembered from then on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from store.records import Thread, ThreadIn


def imported_title(export_title: str, shown: str | None, source: str | None) -> tuple[str, str | None]:
    """(title to show, source title to keep) after importing a thread whose export calls it
    `export_title` ("" when the read saw no title: a session read from an offset) over a stored one that
    shows `shown` and was last imported as `source` (None for a new thread: `shown` is None then)."""
    export_title = export_title.strip()
    if shown is None:  # a new thread
        title = export_title or "Untitled"
        return title, title
    if not export_title:
        return shown, source
    if source is not None and export_title != source:
        return export_title, export_title  # renamed in the export: a newer export's title wins
    return shown, export_title


def unchanged(thread: ThreadIn, found: Thread) -> bool:
    """Writing `thread`, which has no new message, over `found` would change nothing (the same titles, no
    later activity), so a re-import need not take the write lock for it."""
    title, source = imported_title(thread.title, found.title, found.source_title)
    return (title, source) == (found.title, found.source_title) and (
        thread.updated_at or 0.0
    ) <= found.updated_at
