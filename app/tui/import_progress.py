"""What the Import screen says while an import runs: the phase, honest counts from the start, and an
estimate that is given up front and then follows the measured rate.

Why this shape: an import has three phases of very different cost: reading (a parse-only pass that
counts threads and messages), embedding and writing (by far the longest, and its speed is per message,
not per thread: one long thread is as much work as fifty short ones), and summarising the threads that
grew. A thread-based bar with Textual's ETA sat at 0 % while the model loaded, jumped 5:11 → 0:57 → 0:10
as threads of different sizes went by, then stood at 100 % while summaries were written. Here the bar
counts messages, the first estimate comes from the rate the last import on this database measured (kept
in its settings; a conservative default the first time), and the summarising phase has its own label.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

from app.text import number
from store.importing import ImportProgress, ImportTotals

RATE_SETTING = "import.messages_per_second.{mode}"
"""Where the measured rate of the last import is kept (per mode: with or without embedding)."""
DEFAULT_RATE = {"embed": 60.0, "plain": 1500.0}
"""First-time guesses (messages per second) on a small laptop; replaced by the measured rate afterwards."""
MEASURED_AFTER = 3.0  # seconds of writing before the measured rate replaces the first guess
_BEFORE_WRITING = {
    "reading": "reading the export",
    "loading the model": "loading the model",
    "embedding": "embedding the first batch",
}


def clock(seconds: float) -> str:
    """0:42, 3:05, 1:02:00."""
    s = max(0, round(seconds))
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


@dataclass
class ImportPhases:
    """Turns totals and progress snapshots into the label under the bar (see the module docstring)."""

    embed: bool
    first_rate: float
    totals: ImportTotals | None = None
    started: float = field(default_factory=time.monotonic)
    last: ImportProgress | None = None
    last_at: float = 0.0

    @property
    def mode(self) -> str:
        return "embed" if self.embed else "plain"

    def reading(self, name: str) -> str:
        return f"Step 1 of 3 · reading {name} (counting threads and messages)…"

    def counted(self, totals: ImportTotals) -> str:
        self.totals = totals
        self.started = time.monotonic()
        guess = totals.messages / max(self.first_rate, 1e-9)
        what = "embedding and writing" if self.embed else "writing (no vectors)"
        return (
            f"Step 2 of 3 · {what}: 0/{number(totals.threads)} threads · 0/{number(totals.messages)} messages"
            f" · about {clock(guess)} (first estimate, at {self.first_rate:,.0f} msg/s)"
        )

    def remaining(self, p: ImportProgress) -> tuple[float, bool]:
        """(seconds left, measured?) for a writing snapshot."""
        total = p.messages_total if p.messages_total is not None else p.messages_done
        left = max(0, total - p.messages_done)
        if p.elapsed >= MEASURED_AFTER and p.messages_done:
            return left / (p.messages_done / p.elapsed), True
        return max(0.0, total / max(self.first_rate, 1e-9) - p.elapsed), False

    def tick(self) -> str | None:
        """The label again with the time that has passed since the last snapshot (shown every second, so
        a first batch that takes a while, with the model still loading, is never a frozen line)."""
        if self.totals is None:
            return None
        now = time.monotonic()
        if self.last is None:
            t = self.totals
            return self.progressed(
                ImportProgress("", 0, t.threads, 0, t.messages, 0, now - self.started), keep=False
            )
        if self.last.phase != "writing":
            return None
        return self.progressed(replace(self.last, elapsed=self.last.elapsed + now - self.last_at), keep=False)

    def progressed(self, p: ImportProgress, *, keep: bool = True) -> str:
        if keep:
            self.last, self.last_at = p, time.monotonic()
        if p.phase == "summarising":
            return (
                f"Step 3 of 3 · summarising the threads that grew: {number(p.threads_done)}/"
                f"{number(p.threads_total or 0)}"
            )
        if p.phase in _BEFORE_WRITING:  # nothing written yet: say what is being waited for
            return f"Step 2 of 3 · {_BEFORE_WRITING[p.phase]} ({number(p.threads_read)} threads read)…"
        of_threads = f"/{number(p.threads_total)}" if p.threads_total is not None else ""
        of_messages = f"/{number(p.messages_total)}" if p.messages_total is not None else ""
        what = "embedding and writing" if self.embed else "writing (no vectors)"
        text = (
            f"Step 2 of 3 · {what}: {number(p.threads_done)}{of_threads} threads · "
            f"{number(p.messages_done)}{of_messages} messages ({number(p.messages_added)} new)"
        )
        if p.messages_total is not None:
            left, measured = self.remaining(p)
            rate = p.messages_done / p.elapsed if p.elapsed > 0 else 0.0
            text += (
                f" · {rate:,.0f} msg/s · about {clock(left)} left"
                if measured
                else f" · about {clock(left)} left (first estimate)"
            )
        return text

    def measured_rate(self, messages: int, seconds: float) -> float | None:
        """The rate to remember for the next estimate (None for an import too small to tell)."""
        if messages < 50 or seconds <= 0.5:
            return None
        return messages / seconds
