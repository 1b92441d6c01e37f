"""Import: pick an export (type a path with completion, or browse), run the importer in a worker with a
progress bar, then see what was added and what was skipped (file and conversation, with the reason).

The importer is `store.importing.pipeline.import_paths`, the same pipeline as `memapp import`: each thread in its
own transaction, idempotent, embeddings batched. Progress arrives as messages posted from the worker,
at most ten a second, so a fast import is not slowed down by redrawing.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.suggester import Suggester
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Button, DirectoryTree, Input, Label, ProgressBar, Select, Static, Switch
from textual.worker import Worker, WorkerState

from app.text import literal, number
from app.tui.import_progress import DEFAULT_RATE, RATE_SETTING, ImportPhases
from app.tui.screens.base import MemappScreen
from app.tui.widgets.on_off import OnOffSwitch
from store.importing import (
    FORMATS,
    ImportProgress,
    ImportReport,
    ImportTotals,
    count_export,
    import_paths,
    load_demo,
)

PROGRESS_EVERY = 0.1  # seconds between progress messages


class PathSuggester(Suggester):
    """Completes the last part of a path from the directory listing (→ or End accepts)."""

    def __init__(self) -> None:
        super().__init__(use_cache=False, case_sensitive=True)

    async def get_suggestion(self, value: str) -> str | None:
        if not value:
            return None
        return await asyncio.to_thread(self._complete, value)

    @staticmethod
    def _complete(value: str) -> str | None:
        path = Path(os.path.expanduser(value))
        folder, stem = (path, "") if value.endswith(os.sep) else (path.parent, path.name)
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            return None
        for name in names:
            if name.startswith(stem) and name != stem and (stem.startswith(".") or not name.startswith(".")):
                suffix = os.sep if (folder / name).is_dir() else ""
                return value + name[len(stem) :] + suffix
        return None


class ImportScreen(MemappScreen):
    """Choose a file or folder and import it."""

    NAV = "import"
    TITLE = "Import"
    AUTO_FOCUS = "#import-path"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "start", "Import", id="import-start", tooltip="Import the chosen file or folder"),
        Binding("ctrl+b", "browse", "Browse", id="import-browse", tooltip="Pick the file from a folder tree"),
        Binding("ctrl+t", "demo", "Demo data", id="import-demo", tooltip="Import the bundled demo data"),
        Binding(
            "escape",
            "leave",
            "Leave box",
            show=False,
            id="import-leave",
            tooltip="Out of the path box (then 1-5 switch screens); from the folder tree, back to the box",
        ),
    ]

    class Progressed(Message):
        """A throttled progress snapshot from the import worker."""

        def __init__(self, progress: ImportProgress) -> None:
            super().__init__()
            self.progress = progress

    class Counted(Message):
        """The parse-only pass finished: totals for the progress bar."""

        def __init__(self, totals: ImportTotals) -> None:
            super().__init__()
            self.totals = totals

    class Finished(Message):
        """The import finished (whatever was skipped is in the report)."""

        def __init__(self, path: str, report: ImportReport, seconds: float) -> None:
            super().__init__()
            self.path = path
            self.report = report
            self.seconds = seconds

    def __init__(self) -> None:
        super().__init__()
        self.running = False
        self.phases = ImportPhases(True, DEFAULT_RATE["embed"])
        self._ticker: Timer | None = None

    def compose_body(self) -> list[Widget]:
        return [
            Static(
                "ChatGPT or Claude exports (.zip, folder or .json), simonw/llm logs.db, Open WebUI or generic "
                "JSON/JSONL. Importing a file again adds only what is new.",
                id="import-intro",
                markup=False,
            ),
            Horizontal(
                Input(
                    placeholder="Path to a file or folder (→ completes)",
                    id="import-path",
                    suggester=PathSuggester(),
                    select_on_focus=False,  # coming back from the tree, typing must add to the path
                ),
                Button("Import", id="import-go", variant="primary"),
                classes="toolbar",
            ),
            Horizontal(
                Label("Format", classes="field-label"),
                Select(
                    [("detect", "auto"), *[(f, f) for f in FORMATS]],
                    value="auto",
                    allow_blank=False,
                    id="import-format",
                ),
                Label("Embed now", classes="field-label"),
                OnOffSwitch(
                    True,
                    switch_id="import-embed",
                    on="on",
                    off="off: embed later",
                    tooltip="Off: faster import; run `memapp embed` later",
                ),
                classes="toolbar",
            ),
            ProgressBar(id="import-progress", show_eta=False),
            Static("", id="import-progress-label", markup=False),
            VerticalScroll(Static("", id="import-report", markup=False), id="import-report-box"),
        ]

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#import-progress").display = False
        self.query_one("#import-report-box").display = False

    # -- choosing ------------------------------------------------------------------------------------

    async def action_browse(self) -> None:
        """Show (or hide) a folder tree to pick from; mounted on first use, since it reads the disk."""
        found = self.query("#import-tree")
        if not found:
            start = Path(self.query_one("#import-path", Input).value.strip() or "~").expanduser()
            root = start if start.is_dir() else start.parent if start.parent.is_dir() else Path.home()
            tree = DirectoryTree(root, id="import-tree")
            await self.query_one("#body").mount(tree, before="#import-progress")
            tree.focus()
            return
        tree = found.first(DirectoryTree)
        tree.display = not tree.display
        if tree.display:
            tree.focus()
        else:  # never leave the focus on a hidden widget: keys typed next go back to the path box
            self.query_one("#import-path", Input).focus()

    def action_leave(self) -> None:
        """Esc: from the folder tree back to the path box (the tree hides); from the path box out of it;
        elsewhere nothing."""
        path_input = self.query_one("#import-path", Input)
        tree = self.query("#import-tree")
        if tree and tree.first().has_focus:
            tree.first().display = False
            path_input.focus()
        elif path_input.has_focus:
            self.query_one("#import-go", Button).focus()
        # Anywhere else (the report, a button) Esc leaves the focus where it is: it never puts you into
        # the box, where the screen keys would be typed as text.

    @on(DirectoryTree.FileSelected, "#import-tree")
    @on(DirectoryTree.DirectorySelected, "#import-tree")
    def _picked(self, event: DirectoryTree.FileSelected | DirectoryTree.DirectorySelected) -> None:
        path_input = self.query_one("#import-path", Input)
        path_input.value = str(event.path)
        if isinstance(event, DirectoryTree.FileSelected):
            self.query_one("#import-go", Button).focus()

    # -- running -------------------------------------------------------------------------------------

    @on(Input.Submitted, "#import-path")
    @on(Button.Pressed, "#import-go")
    def action_start(self) -> None:
        if self.running:
            self.notify("An import is already running.", markup=False)
            return
        raw = self.query_one("#import-path", Input).value.strip()
        if not raw:
            self._say("Type the path of an export first, or press ctrl+b to browse.")
            return
        path = Path(raw).expanduser()
        if not path.exists():
            self._say(f"There is no file or folder at {literal(str(path))}.")
            return
        fmt = str(self.query_one("#import-format", Select).value)
        embed = self.query_one("#import-embed", Switch).value
        self.phases = ImportPhases(embed, DEFAULT_RATE["embed" if embed else "plain"])
        self._begin(self.phases.reading(path.name))
        self.import_worker(str(path), fmt, embed)

    def action_demo(self) -> None:
        if self.running:
            self.notify("An import is already running.", markup=False)
            return
        embed = self.query_one("#import-embed", Switch).value
        self.phases = ImportPhases(embed, DEFAULT_RATE["embed" if embed else "plain"])
        self._begin("Loading the demo data…")
        self.import_worker(None, "generic", embed)

    def _begin(self, label: str) -> None:
        if self.memapp.status.semantic == "loading" and self.query_one("#import-embed", Switch).value:
            label += " (the embedding model is still loading: the first threads wait for it)"
        self.running = True
        self.query_one("#import-go", Button).disabled = True
        bar = self.query_one("#import-progress", ProgressBar)
        bar.display = True
        bar.update(total=None, progress=0)
        for tree in self.query("#import-tree"):
            tree.display = False
        self.query_one("#import-report-box").display = False
        self._say(label)

    def _say(self, text: str) -> None:
        self.query_one("#import-progress-label", Static).update(text)

    @work(thread=True, exclusive=True, group="import", exit_on_error=False, description="importing")
    def import_worker(self, path: str | None, fmt: str, embed: bool) -> None:
        """Count, then import, posting throttled progress; the report comes back in Finished."""
        store = self.store
        started = time.monotonic()
        last = 0.0

        phase = ""
        written: float | None = None  # when the last thread was written (summarising starts)

        def progress(p: ImportProgress) -> None:
            nonlocal last, phase, written
            t = time.monotonic()
            if p.phase == "summarising" and written is None:
                written = t
            finished = p.threads_total is not None and p.threads_done >= p.threads_total
            if t - last >= PROGRESS_EVERY or finished or p.phase != phase:  # a new phase is always shown
                last, phase = t, p.phase
                self.post_message(self.Progressed(p))

        mode = "embed" if embed else "plain"
        if path is None:
            report = load_demo(store, embed=embed, progress=progress)
            label = "the demo data"
        else:
            saved = store.get_setting(RATE_SETTING.format(mode=mode))
            self.phases.first_rate = float(saved) if saved else DEFAULT_RATE[mode]
            totals = count_export([path], fmt)
            self.post_message(self.Counted(totals))
            writing = time.monotonic()
            report = import_paths(store, [path], fmt, embed=embed, progress=progress, totals=totals)
            label = path
            # The rate of step 2 only (embedding and writing), which is what the next first estimate is of.
            rate = self.phases.measured_rate(totals.messages, (written or time.monotonic()) - writing)
            if rate is not None:  # the next import's first estimate
                store.set_setting(RATE_SETTING.format(mode=mode), f"{rate:.1f}")
        self.post_message(self.Finished(label, report, time.monotonic() - started))

    def on_import_screen_counted(self, message: ImportScreen.Counted) -> None:
        bar = self.query_one("#import-progress", ProgressBar)
        bar.update(total=max(1, message.totals.messages), progress=0)
        self._say(self.phases.counted(message.totals))
        self._ticker = self.set_interval(1.0, self._tick, name="import-progress")

    def _tick(self) -> None:
        text = self.phases.tick() if self.running else None
        if text is not None:
            self._say(text)

    def _stop_ticking(self) -> None:
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None

    def on_import_screen_progressed(self, message: ImportScreen.Progressed) -> None:
        """The bar counts messages while writing (their cost, unlike threads', is even), grown threads
        while summarising."""
        p = message.progress
        bar = self.query_one("#import-progress", ProgressBar)
        if p.phase == "summarising":
            bar.update(total=max(1, p.threads_total or 1), progress=p.threads_done)
        elif p.messages_total is not None:
            bar.update(total=max(1, p.messages_total), progress=p.messages_done)
        self._say(self.phases.progressed(p))

    def on_import_screen_finished(self, message: ImportScreen.Finished) -> None:
        self.running = False
        self._stop_ticking()
        self.query_one("#import-go", Button).disabled = False
        r = message.report
        bar = self.query_one("#import-progress", ProgressBar)
        bar.update(total=max(1, bar.total or 1), progress=bar.total or 1)
        self._say(f"Done in {message.seconds:.1f} s.")
        self._show_report(message.path, r)
        self.memapp.data_changed()
        self.notify(
            f"Import finished: {r.threads_added} threads added, {r.threads_updated} updated, "
            f"{r.messages_added} messages, {r.memories_added} memories"
            + (f", {r.skipped} skipped." if r.skipped else "."),
            title="Import",
            severity="warning" if r.skipped else "information",
            markup=False,
        )

    def _show_report(self, path: str, r: ImportReport) -> None:
        text = Text()
        text.append(f"Imported {literal(path)}\n", style="bold")
        text.append(
            f"  threads added     {number(r.threads_added)}\n"
            f"  threads updated   {number(r.threads_updated)}\n"
            f"  threads unchanged {number(r.threads_unchanged)}\n"
            f"  messages added    {number(r.messages_added)}\n"
            f"  memories added    {number(r.memories_added)}"
            f"{f' ({number(r.memories_existing)} already known)' if r.memories_existing else ''}\n"
        )
        if r.suggestions_added or r.suggestions_known:
            text.append(
                f"  suggestions added {number(r.suggestions_added)} (ctrl+p › Review imported memory suggestions;"
                " nothing becomes a memory until you accept it)\n"
            )
        if r.files_read or r.files_unchanged:
            text.append(
                f"  session files     {number(r.files_read)} read, {number(r.files_unchanged)} unchanged\n"
            )
        if r.vector_problem:
            text.append(f"  no vectors written: {literal(r.vector_problem)} (run `memapp embed` later)\n")
        for problems, heading in ((r.notes, "Repaired (nothing skipped)"), (r.errors, "Skipped")):
            if problems:
                text.append(f"\n{heading} {len(problems)}:\n", style="bold")
            for e in problems:
                where = literal(e.file) + (f" › {literal(e.conversation)}" if e.conversation else "")
                text.append(f"  {where}\n    {literal(e.error)}\n")
        text.append("\nPress 1 to browse the threads, 2 for the memories, 3 to search.", style="italic")
        self.query_one("#import-report", Static).update(text)
        box = self.query_one("#import-report-box")
        box.display = True
        box.focus()  # out of the path box, so the screen keys (1-5) work at once

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        super().on_worker_state_changed(event)
        if event.worker.group == "import" and event.state in (WorkerState.ERROR, WorkerState.CANCELLED):
            self.running = False
            self._stop_ticking()
            self.query_one("#import-go", Button).disabled = False
            self._say("The import stopped. Threads written before that are complete.")
