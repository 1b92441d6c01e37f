"""What the Claude Code and Codex readers share: turning a coding agent's event log into a thread.

Why tool calls are condensed: a coding session is mostly tool traffic (file reads, shell output, diffs),
often megabytes of it, and none of it is what the person said or was told. Indexed as prose it would
drown search and summaries in `ls` output. So the words stay messages, and each run of tool calls
between two of them becomes one message with role "tool", empty text and the calls (name, a one-line
input, whether it failed) in its metadata; the thread view and `threads show` print it as one line.

Why a run is keyed by its first line: the file is read in pieces (a session still being written is
imported after every turn), and a piece may end in the middle of a run. The rest of the run then starts
a new run message keyed by its own first line; re-reading the whole file later keys the whole run by the
same first line, which is stored already, so nothing is imported twice.
"""

from __future__ import annotations

from typing import Any

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
        return call
