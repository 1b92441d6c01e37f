"""What the Claude Code and Codex readers share: turning a coding agent's event log into a thread.

Why tool calls are condensed: a coding session is mostly tool traffic (file reads, shell output, diffs),
often megabytes of it, and none of it is what the person said or was told. Indexed as prose it would
drown search and summaries in `ls` output. So the words stay messages, and each run of tool calls
between two of them becomes one message with role "tool", empty text and the calls (name, a one-line
input, whether it failed) in its metadata; the thread view and `threads show` print it as one line.

Why a run is keyed by its first line, and each call keeps its own id: the file is read in pieces (a
session still being written is imported after every turn), and a piece may end in the middle of a run.
The rest of the run then starts a new run message keyed by its own first line. A file read again in
other pieces (it shrank and grew back, or was rewritten) cuts its runs elsewhere, so the run keys alone
would store a call twice, or skip the calls a stored run gained; store.importing.sessions therefore
drops the calls whose ids the thread already holds.

Both readers also go over their lines the same way (`objects`, `problem_if_it_fails`): a line that is not
a JSON object, or one the reader fails on, becomes an ImportProblem naming its byte offset, and the rest
of the session is still read. Lines are read one at a time (store.importing.formats.lines), so only the
messages kept, never the tool output, are held for a whole session.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from store.importing.formats._common import ImportProblem, Item, describe
from store.importing.formats.lines import Lines
from store.records import MessageIn

MAX_CALLS_PER_MESSAGE = 2000  # a longer run is split: metadata stays a reasonable size


class TranscriptBuilder:
    """Messages in order; tool calls and their results folded into runs."""

    def __init__(self) -> None:
        self.messages: list[MessageIn] = []
        self._run: MessageIn | None = None
        self._calls: dict[str, dict[str, Any]] = {}  # call id -> the call's record in a run or message

    def say(
        self,
        role: str,
        text: str,
        external_id: str,
        created_at: float | None,
        metadata: dict[str, Any] | None = None,
        calls: list[tuple[str, dict[str, Any]]] | None = None,
    ) -> None:
        """A message with words; tool calls made in the same line go into its own metadata."""
        self._run = None
        meta = dict(metadata or {})
        if calls:
            meta["tool_calls"] = [self._remember(cid, call) for cid, call in calls]
        self.messages.append(MessageIn(role, text, external_id, created_at, meta))

    def call(
        self, external_id: str, created_at: float | None, calls: list[tuple[str, dict[str, Any]]]
    ) -> None:
        """Tool calls with no words around them: added to the current run (a new one if none)."""
        for cid, call in calls:
            run = self._run
            if run is None or len(run.metadata["tool_calls"]) >= MAX_CALLS_PER_MESSAGE:
                ext = external_id if run is None or run.external_id != external_id else f"{external_id}+{cid}"
                run = MessageIn("tool", "", ext, created_at, {"tool_calls": []})
                self.messages.append(run)
                self._run = run
            run.metadata["tool_calls"].append(self._remember(cid, call))

    def result(self, call_id: str | None, failed: bool) -> None:
        """A tool's result: only whether it failed is kept (the output itself is not conversation)."""
        call = self._calls.get(call_id or "")
        if call is not None and failed:
            call["error"] = True

    def _remember(self, call_id: str, call: dict[str, Any]) -> dict[str, Any]:
        if call_id:
            self._calls[call_id] = call
            call["id"] = call_id  # a call is known by it when a session is read again in other pieces
        return call

    def session_model(self, meta: dict[str, Any]) -> None:
        """The first model named goes into the thread's metadata as the session's; a message keeps its
        own only when it differs."""
        models = [m.metadata["model"] for m in self.messages if "model" in m.metadata]
        if models:
            meta["model"] = models[0]
            for m in self.messages:
                if m.metadata.get("model") == models[0]:
                    del m.metadata["model"]


def objects(
    lines: Lines, path: Path, session: str, out: list[Item], what: str
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(byte offset, object) for every line that is a JSON object; any other line is a problem in `out`.

    A file whose first line is not JSON is not `what` at all: one problem, nothing read (the next read
    starts at the beginning again). A file that cannot be read ends the read where it failed."""
    first = lines.start == 0
    try:
        for offset, obj, error in lines:
            if first and not isinstance(obj, dict):
                out.append(ImportProblem(str(path), None, f"not {what} (its first line is not JSON)"))
                lines.end = 0
                return
            first = False
            if error or not isinstance(obj, dict):
                out.append(
                    ImportProblem(str(path), session, f"byte {offset}: line is {error or 'not an object'}")
                )
                continue
            yield offset, obj
    except OSError as exc:
        out.append(ImportProblem(str(path), None, describe(exc)))
    if lines.bad_utf8:
        n = lines.bad_utf8
        out.append(
            ImportProblem(
                str(path),
                session,
                f"{n} invalid UTF-8 byte{'s' if n > 1 else ''} (the first in the line at byte "
                f"{lines.first_bad_utf8}) shown as U+FFFD; the lines were imported",
                note=True,
            )
        )


@contextmanager
def problem_if_it_fails(out: list[Item], path: Path, session: str, offset: int) -> Iterator[None]:
    """Reading one line: if it fails, the failure is a problem in `out`, and the session goes on."""
    try:
        yield
    except Exception as exc:  # one odd line must not lose the session
        out.append(ImportProblem(str(path), session, f"byte {offset}: {describe(exc)}"))
