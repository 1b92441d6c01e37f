"""What `memapp import` draws on a terminal while it works: the phase in words, then a bar of messages.

Why the phase: a bar appears at once, but its numbers only exist later. The export is first read once to
count its threads and messages (seconds for a big one), then the model loads and embeds the first batch
(seconds more) before the first thread is written: the bar sat at 0 % all that time (issue 28.16). Until
there is something to count, the line says what is happening (counting, with the numbers so far;
reading; loading the model; embedding the first batch), then it is the bar with threads, messages, rate
and time left, and at the end the summarising of the threads that grew.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from store.importing import ImportProgress, ImportTotals

Updater = Callable[[ImportProgress], None] | None
# What a phase before the first write is called on the line (store.importing.run.ImportProgress.phase).
_BEFORE_WRITING = {
    "reading": "reading the export",
    "loading the model": "loading the model",
    "embedding": "embedding the first batch",
}


class _Display:
    """The rich progress line on stderr, and the callbacks that move it."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            Progress,
            SpinnerColumn,
            TaskProgressColumn,
            TextColumn,
            TimeRemainingColumn,
        )

        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            TaskProgressColumn(),
            TextColumn(
                "{task.fields[threads]} threads, {task.fields[messages]} messages, {task.fields[rate]}"
            ),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self.task = self.progress.add_task(
            "reading the export", total=None, threads="-", messages="-", rate="-"
        )

    def count(self, fn: Callable[[Callable[[ImportTotals], None]], ImportTotals]) -> ImportTotals:
        """Run the counting pass `fn`, showing its counts as they grow; then the bar has its totals."""

        def seen(t: ImportTotals) -> None:
            self.progress.update(
                self.task,
                description="counting",
                threads=f"{t.threads:,}",
                messages=f"{t.messages:,}",
                rate="-",
            )

        totals = fn(seen)
        self.progress.update(
            self.task,
            description="starting",
            total=max(totals.messages, 1),
            threads=f"0/{totals.threads:,}",
            messages=f"0/{totals.messages:,}",
        )
        return totals

    def update(self, p: ImportProgress) -> None:
        if p.phase in _BEFORE_WRITING:
            self.progress.update(
                self.task,
                description=_BEFORE_WRITING[p.phase],
                threads=f"{p.threads_read:,} read" + (f" of {p.threads_total:,}" if p.threads_total else ""),
            )
            return
        if p.phase == "summarising":
            self.progress.update(
                self.task,
                description="summarising",
                total=max(1, p.threads_total or 1),
                completed=p.threads_done,
                threads=f"{p.threads_done}/{p.threads_total}",
                messages="-",
                rate="grown threads",
            )
            return
        fields: dict[str, Any] = {
            "threads": f"{p.threads_done:,}/{p.threads_total:,}"
            if p.threads_total is not None
            else p.threads_done,
            "messages": f"{p.messages_done:,}/{p.messages_total:,}"
            if p.messages_total is not None
            else p.messages_done,
            "rate": f"{p.messages_done / max(p.elapsed, 1e-9):.0f} msg/s",
        }
        self.progress.update(self.task, description="importing", completed=p.messages_done, **fields)


class _Silent:
    """No terminal (or --json): the same calls, nothing drawn."""

    def count(self, fn: Callable[[Callable[[ImportTotals], None]], ImportTotals]) -> ImportTotals:
        return fn(lambda _t: None)

    def update(self, p: ImportProgress) -> None:
        pass


@contextmanager
def progress_display(show: bool) -> Iterator[_Display | _Silent]:
    """The progress line on stderr while the block runs (`show`), or nothing."""
    if not show:
        yield _Silent()
        return
    display = _Display()
    with display.progress:
        yield display
