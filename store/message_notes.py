"""Short lines about a message that are not its text: tool calls, attachments, the model that answered.

Why here and not in the views: the TUI's thread view and `memapp threads show` must say the same thing,
and store/ is what both import. Nothing here touches the database; it reads `Message.metadata` as the
importers wrote it (store/importing/formats/).
"""

from __future__ import annotations

from collections import Counter
from typing import Any


def tool_line(metadata: dict[str, Any]) -> str | None:
    """ "7 tool calls: Bash ×4, Read ×2, Edit · 1 failed", or None for a message without calls."""
    calls = metadata.get("tool_calls")
    if not isinstance(calls, list) or not calls:
        return None
    names = Counter(str(c.get("name") or "?") if isinstance(c, dict) else "?" for c in calls)
    parts = [name if n == 1 else f"{name} ×{n}" for name, n in names.most_common(6)]
    if len(names) > 6:
        parts.append(f"{len(names) - 6} more")
    failed = sum(1 for c in calls if isinstance(c, dict) and c.get("error"))
    noun = "tool call" if len(calls) == 1 else "tool calls"
    line = f"{len(calls)} {noun}: {', '.join(parts)}"
    if len(calls) == 1 and isinstance(calls[0], dict) and calls[0].get("input"):
        line += f" ({calls[0]['input']})"
    return line + (f" · {failed} failed" if failed else "")


def notes(metadata: dict[str, Any]) -> list[str]:
    """Every note line for a message: tool calls, attachments, model."""
    out = []
    if line := tool_line(metadata):
        out.append(line)
    attachments = [str(a) for a in metadata.get("attachments") or [] if isinstance(a, str | int | float)]
    if attachments:
        out.append("attached: " + ", ".join(attachments))
    if isinstance(metadata.get("model"), str) and metadata["model"]:
        out.append(f"model: {metadata['model']}")
    return out


def thread_notes(metadata: dict[str, Any]) -> str | None:
    """ "project /home/ana/src/tide · branch main · model gpt-4o" for a thread, or None."""
    parts = []
    for key, label in (("project", "project"), ("git_branch", "branch"), ("model", "model")):
        if isinstance(metadata.get(key), str) and metadata[key]:
            parts.append(f"{label} {metadata[key]}")
    return " · ".join(parts) or None
