"""Generated chat exports for the reliability tests: many threads of random words, in two formats.

Why generated: a crash or concurrency test needs exports large enough that a kill lands mid-import, and
needs to know exactly what each thread holds so the test can check what landed was whole. An ExportSpec
is that record (conversation ids in file order, each one's message texts), seeded, so a failure repeats.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class ExportSpec:
    """What a generated export holds: conversation ids in file order, and each one's message texts."""

    threads: list[tuple[str, list[str]]] = field(default_factory=list)

    @property
    def messages(self) -> int:
        return sum(len(m) for _, m in self.threads)

    def by_id(self) -> dict[str, list[str]]:
        return dict(self.threads)


_WORDS = (
    "sqlite",
    "wal",
    "checkpoint",
    "vector",
    "index",
    "embedding",
    "import",
    "thread",
    "memory",
    "summary",
    "garden",
    "bread",
    "rust",
    "python",
    "backup",
    "restic",
    "timer",
    "coffee",
    "tea",
    "lisbon",
    "marathon",
    "budget",
    "invoice",
    "textual",
    "widget",
    "pilot",
    "snapshot",
    "cosine",
    "token",
    "chunk",
    "merge",
    "pinned",
    "trash",
    "cleanup",
    "decay",
    "recall",
)


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n)).capitalize() + "."


def conversation_texts(seed: int, n_threads: int, per_thread: int) -> ExportSpec:
    rng = random.Random(seed)
    spec = ExportSpec()
    for t in range(n_threads):
        n = max(2, per_thread + rng.randint(-per_thread // 2, per_thread // 2))
        texts = [
            f"[{t}:{i}] " + " ".join(_sentence(rng, rng.randint(5, 18)) for _ in range(rng.randint(1, 4)))
            for i in range(n)
        ]
        spec.threads.append((f"conv-{seed}-{t:05d}", texts))
    return spec


def write_chatgpt(path: Path, spec: ExportSpec) -> Path:
    """A ChatGPT `conversations.json`: each conversation a linear mapping tree, user/assistant turns."""
    convs = []  # type: ignore[var-annotated]
    for conv_id, texts in spec.threads:
        mapping: dict[str, Any] = {"root": {"id": "root", "message": None, "parent": None, "children": []}}
        parent = "root"
        t0 = 1_700_000_000.0 + len(convs) * 1000
        for i, text in enumerate(texts):
            node = f"{conv_id}-n{i}"
            mapping[parent]["children"].append(node)
            mapping[node] = {
                "id": node,
                "parent": parent,
                "children": [],
                "message": {
                    "id": node,
                    "author": {"role": "user" if i % 2 == 0 else "assistant"},
                    "create_time": t0 + i,
                    "content": {"content_type": "text", "parts": [text]},
                    "status": "finished_successfully",
                    "metadata": {},
                },
            }
            parent = node
        convs.append(
            {
                "id": conv_id,
                "title": f"Conversation {conv_id}",
                "create_time": t0,
                "update_time": t0 + len(texts),
                "current_node": parent,
                "mapping": mapping,
            }
        )
    path.write_text(json.dumps(convs), encoding="utf-8")
    return path


def write_generic(path: Path, spec: ExportSpec) -> Path:
    """The documented generic JSON list: `[{"id", "title", "messages": [{"id", "role", "content"}]}]`."""
    threads = [
        {
            "id": conv_id,
            "title": f"Thread {conv_id}",
            "messages": [
                {
                    "id": f"{conv_id}-m{i}",
                    "role": "user" if i % 2 == 0 else "assistant",
                    "content": text,
                    "created_at": 1_700_000_000 + i,
                }
                for i, text in enumerate(texts)
            ],
        }
        for conv_id, texts in spec.threads
    ]
    path.write_text(json.dumps(threads), encoding="utf-8")
    return path
