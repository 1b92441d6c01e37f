"""`memapp profile`: the same profile the MCP tool returns, as text or JSON, within the budget."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from store import Store


def test_profile_text_and_json(
    capsys: pytest.CaptureFixture[str], no_model_config: Path, db_path: Path
) -> None:
    with Store(db_path, embedder=None) as s:
        s.add_memory("Prefers tea over coffee", "preference", importance=4)
        pinned = s.add_memory("Always answer in British English", "preference", pinned=True).memory
    assert main(["--db", str(db_path), "profile", "--budget", "200", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["memories"][0]["id"] == pinned.id and data["tokens"] <= 200 and data["left_out"] == 0
    assert main(["--db", str(db_path), "profile", "-b", "200", "--no-touch"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("[Long-term memories about the user]\n- (preference, pinned) Always answer")
    assert "2 memories (1 pinned); 0 left out" in out
    with Store(db_path, embedder=None) as s:  # the first run counted an access, --no-touch did not
        assert s.get_memory(pinned.id).access_count == 1
    assert main(["--db", str(db_path), "profile", "-b", "-3"]) == 2
    assert "must be 0 or more" in capsys.readouterr().err
