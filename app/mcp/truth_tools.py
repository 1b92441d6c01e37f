"""Keeping memories true over MCP (issue 17): the conflicts queue an assistant can show and, when the user
says so, resolve; and the provenance/validity fields that memory results carry (app.mcp.results).

Why the assistant may resolve at all: the user is in the conversation; "you told me you prefer uv, and
now pip: which is it?" is the natural place to ask. The tool's description says to ask first, and every
resolution is history on both memories (undoable: `both` reinstates a superseded memory, the trash keeps
what `old`/`merge` removed)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, Field

from app.mcp.args import MAX_ID, MAX_K
from app.mcp.results import MemoryOut

if TYPE_CHECKING:
    from store import Store
    from store.truth import Conflict

ConflictId = Annotated[int, Field(ge=1, le=MAX_ID, description="The conflict's id (from list_conflicts).")]
Keep = Annotated[
    Literal["new", "old", "both", "merge"],
    Field(
        description="new: the old memory is superseded by the new one; old: the new one goes to the trash; "
        "both: both stay current; merge: one memory with the new wording."
    ),
]
MergeText = Annotated[
    str | None,
    Field(
        description="Only with keep=merge: the one memory in the user's own words (an edited merge), "
        'e.g. "Uses Firefox at home and Chrome at work". Without it the merge keeps the new wording.'
    ),
]
ConflictLimit = Annotated[int, Field(ge=1, le=MAX_K, description=f"How many conflicts to list (1-{MAX_K}).")]


class ConflictOut(BaseModel):
    id: int
    relation: str = Field(description="reversal, update, paraphrase or unsure: what the classifier saw.")
    reasons: list[str] = Field(description="What differs (negation, antonym, number changed, …).")
    similarity: float | None
    status: str = Field(description="open or resolved.")
    resolution: str | None
    suggested: str = Field(description="The answer the classifier leans to.")
    new: MemoryOut
    old: MemoryOut

    @classmethod
    def of(cls, c: Conflict) -> ConflictOut:
        return cls(
            id=c.id,
            relation=c.relation,
            reasons=list(c.reasons),
            similarity=c.similarity,
            status=c.status,
            resolution=c.resolution,
            suggested=c.suggested,
            new=MemoryOut.of(c.new),
            old=MemoryOut.of(c.old),
        )

    def line(self) -> str:
        why = ", ".join(self.reasons) or "close in meaning"
        state = (
            f"suggested: {self.suggested}" if self.status == "open" else f"resolved: kept {self.resolution}"
        )
        return f"[conflict {self.id}] {self.relation} ({why}); {state}\n  new {self.new.line()}\n  old {self.old.line()}"


class ConflictList(BaseModel):
    conflicts: list[ConflictOut]

    def render(self) -> str:
        if not self.conflicts:
            return "No conflicts to review."
        return "\n".join(c.line() for c in self.conflicts)


class ConflictResolved(BaseModel):
    message: str
    conflict: ConflictOut

    def render(self) -> str:
        return f"{self.message}\n{self.conflict.line()}"


def list_conflicts(store: Store, limit: ConflictLimit = 20) -> ConflictList:
    """Pairs of the user's memories that may contradict or repeat each other and wait for the user's
    decision (newest first): e.g. "prefers uv over pip" next to a pinned "prefers pip over uv". Show them
    to the user when relevant; resolve one only with the user's answer."""
    from store.truth import list_conflicts as open_conflicts

    return ConflictList(conflicts=[ConflictOut.of(c) for c in open_conflicts(store, limit=limit)])


def resolve_conflict(
    store: Store,
    id: ConflictId,  # noqa: A002
    keep: Keep,
    text: MergeText = None,
) -> ConflictResolved:
    """Record the user's decision on a conflict: keep the new memory (the old one is superseded: kept, but
    no longer current), keep the old one (the new one goes to the trash), both (both stay current), or
    merge them (one memory, the new wording; with `text`, the user's own wording, as `memapp conflicts
    resolve --keep merge --text` does). Ask the user first. Both memories' history records it."""
    from store.truth import resolve_conflict as resolve

    c = resolve(store, id, keep, content=text)
    return ConflictResolved(
        message=f"Resolved conflict {c.id}: kept {c.resolution} (memories {c.new_id} and {c.old_id}).",
        conflict=ConflictOut.of(c),
    )
