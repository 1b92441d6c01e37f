"""Every configuration number is range-checked with a message that gives the range (issue 20, D8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from store.config import RANGES, Config, load_config
from store.errors import StoreError


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("toml", "said"),
    [
        ("[memory]\nmerge_threshold = 0.2\n", "memory.merge_threshold must be between 0.5 and 1"),
        ("[memory]\nmerge_threshold = 1.5\n", "memory.merge_threshold must be between 0.5 and 1"),
        ("[summary]\ntrigger_messages = 0\n", "summary.trigger_messages must be between 1"),
        ("[cleanup]\nolder_than_days = -5\n", "cleanup.older_than_days must be between 0"),
        ("[context]\nsafety_margin = 1.0\n", "context.safety_margin must be between 0 and 0.9"),
        ("[embedding]\nbatch_size = 0\n", "embedding.batch_size must be between 1"),
        ("[embedding]\nchunk_tokens = 100\nchunk_overlap = 100\n", "chunk_overlap must be smaller"),
    ],
)
def test_out_of_range_values_are_refused_with_the_range(tmp_path: Path, toml: str, said: str) -> None:
    with pytest.raises(StoreError, match=said):
        load_config(_write(tmp_path, toml))


def test_the_defaults_are_inside_every_range() -> None:
    cfg = Config()
    for name, (low, high) in RANGES.items():
        section, key = name.split(".")
        assert low <= getattr(getattr(cfg, section), key) <= high, name


def test_edges_of_a_range_are_accepted(tmp_path: Path) -> None:
    cfg = load_config(_write(tmp_path, "[memory]\nmerge_threshold = 1.0\n[cleanup]\nmin_access = 0\n"))
    assert cfg.memory.merge_threshold == 1.0 and cfg.cleanup.min_access == 0
