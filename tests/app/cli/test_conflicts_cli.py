"""`memapp conflicts`, `memapp search --as-of` and the provenance in `memory show`, on a real chat.db whose
memories were written with the fake embedder (the CLI itself runs keyword-only: the model is not the point)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from embeddings.embedder import FakeEmbedder
from store import Store
from store.records import MessageIn, ThreadIn


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def seeded(db_path: Path) -> dict[str, int]:
    s = Store(db_path, embedder=FakeEmbedder())
    try:
        uv = s.add_memory("I prefer uv over pip for Python projects", "preference").memory
        pip = s.add_memory("I prefer pip over uv for Python projects", "preference").memory
        light = s.add_memory("Prefers light mode in the editor", "preference", pinned=True).memory
        dark = s.add_memory("Prefers dark mode in the editor", "preference")
        tid = s.write_thread(
            ThreadIn("test", "t", "Eggs", [MessageIn("user", "I like my eggs soft")])
        ).thread_id
        row = s.con.execute("SELECT id FROM messages WHERE thread_id = ?", (tid,)).fetchone()
        assert row is not None
        egg = s.add_memory(
            "Likes soft-boiled eggs",
            "preference",
            origin="extract",
            source_thread_id=tid,
            source_message_id=int(row[0]),  # type: ignore[arg-type]
        ).memory
        return {
            "uv": uv.id,
            "pip": pip.id,
            "light": light.id,
            "dark": dark.memory.id,
            "conflict": dark.conflicts[0],
            "egg": egg.id,
            "message": int(row[0]),  # type: ignore[arg-type]
            "thread": tid,
        }
    finally:
        s.close()


def test_conflicts_list_and_resolve(capsys, no_model_config, db_path, seeded) -> None:  # type: ignore[no-untyped-def]
    db = ["--db", str(db_path)]
    code, out, _ = run(capsys, *db, "conflicts", "list", "--json")
    assert code == 0
    [c] = json.loads(out)
    assert (c["id"], c["relation"], c["suggested"], c["new"]["id"], c["old"]["id"]) == (
        seeded["conflict"],
        "reversal",
        "new",
        seeded["dark"],
        seeded["light"],
    )
    code, out, _ = run(capsys, *db, "conflicts")
    assert code == 0 and "Prefers dark mode in the editor" in out and "--keep new" in out
    code, out, _ = run(capsys, *db, "conflicts", "list", "--all", "--json")
    assert sorted(x["status"] for x in json.loads(out)) == ["open", "resolved"]  # the automatic supersede too
    code, out, err = run(
        capsys, *db, "conflicts", "resolve", str(seeded["conflict"]), "--keep", "both", "--json"
    )
    assert code == 0, err
    assert json.loads(out)["resolution"] == "both"
    code, out, _ = run(capsys, *db, "conflicts", "list")
    assert "no conflicts to review" in out
    code, _, err = run(capsys, *db, "conflicts", "resolve", "999", "--keep", "new")
    assert code != 0 and "no conflict with id 999" in err
    code, _, err = run(capsys, *db, "conflicts", "resolve", str(seeded["conflict"]), "--keep", "perhaps")
    assert code == 2 and "invalid choice" in err


def test_memory_show_says_what_superseded_it_and_where_it_came_from(
    capsys, no_model_config, db_path, seeded
) -> None:  # type: ignore[no-untyped-def]
    db = ["--db", str(db_path)]
    code, out, _ = run(capsys, *db, "memory", "show", str(seeded["uv"]))
    assert code == 0
    assert "(superseded)" in out and f"superseded by memory {seeded['pip']}" in out
    code, out, _ = run(capsys, *db, "memory", "show", str(seeded["pip"]), "--json")
    data = json.loads(out)
    assert data["supersedes"] == [seeded["uv"]] and data["valid_until"] is None
    code, out, _ = run(capsys, *db, "memory", "show", str(seeded["egg"]))
    assert f"source:      message {seeded['message']} (user, turn 0) in thread {seeded['thread']}" in out
    code, out, _ = run(capsys, *db, "memory", "show", str(seeded["egg"]), "--json")
    assert json.loads(out)["source"]["message_id"] == seeded["message"]


def test_search_as_of_and_memory_hits_say_their_source(capsys, no_model_config, db_path, seeded) -> None:  # type: ignore[no-untyped-def]
    db = ["--db", str(db_path)]
    code, out, _ = run(capsys, *db, "search", "uv pip", "--scope", "memories", "--json", "--no-touch")
    hits = json.loads(out)["results"]
    assert [h["id"] for h in hits] == [seeded["pip"], seeded["uv"]]  # the superseded one ranks below
    assert hits[1]["superseded_by"] == seeded["pip"]
    code, out, _ = run(capsys, *db, "search", "uv pip", "--scope", "memories", "--no-touch")
    assert f"superseded by memory {seeded['pip']}" in out
    code, out, _ = run(capsys, *db, "search", "eggs", "--scope", "memories", "--no-touch")
    assert f"from message {seeded['message']} in thread {seeded['thread']}" in out
    code, out, _ = run(
        capsys, *db, "search", "uv pip", "--scope", "memories", "--as-of", "2001-01-01", "--json"
    )
    assert json.loads(out)["results"] == []  # nothing was known then
    code, _, err = run(capsys, *db, "search", "uv", "--as-of", "yesterday")
    assert code == 2 and "not a date" in err


def test_memory_list_by_state(capsys, no_model_config, db_path, seeded) -> None:  # type: ignore[no-untyped-def]
    db = ["--db", str(db_path)]
    code, out, _ = run(capsys, *db, "memory", "list", "--state", "superseded", "--json")
    assert [m["id"] for m in json.loads(out)] == [seeded["uv"]]
    code, out, _ = run(capsys, *db, "memory", "list", "--state", "conflicts", "--json")
    assert sorted(m["id"] for m in json.loads(out)) == sorted([seeded["light"], seeded["dark"]])
    code, out, _ = run(capsys, *db, "memory", "list")
    assert any(line.split()[:2] == [str(seeded["uv"]), "~"] for line in out.splitlines())


def test_conflicts_say_why_in_plain_words_and_merge_takes_your_text(
    capsys, no_model_config, db_path, seeded
) -> None:  # type: ignore[no-untyped-def]
    db = ["--db", str(db_path)]
    code, out, _ = run(capsys, *db, "conflicts")
    assert code == 0
    assert "The newer memory says the opposite of the older one. Why: opposite words (light/dark)." in out
    assert "--keep both (keep both)" in out and "--keep merge" in out
    code, out, err = run(
        capsys, *db, "conflicts", "resolve", str(seeded["conflict"]), "--keep", "new", "--text", "x"
    )
    assert code != 0 and "--keep merge" in err  # a text of your own only goes with a merge
    text = "Prefers dark mode in the editor, light mode for printing"
    code, out, _ = run(
        capsys, *db, "conflicts", "resolve", str(seeded["conflict"]), "--keep", "merge", "--text", text
    )
    assert code == 0 and "merge into one memory" in out
    code, out, _ = run(capsys, *db, "memory", "show", str(seeded["light"]))
    assert text in out and "edited by hand" in out


def test_memory_supersede_by_hand(capsys, no_model_config, db_path) -> None:  # type: ignore[no-untyped-def]
    s = Store(db_path, embedder=FakeEmbedder())
    try:
        pixel = s.add_memory("Phone: Pixel 6", "fact").memory
        iphone = s.add_memory("Got an iPhone 15 for my birthday", "fact").memory
        assert s.get_memory(pixel.id).valid_until is None  # nothing said it changed: both kept
    finally:
        s.close()
    db = ["--db", str(db_path)]
    code, out, _ = run(capsys, *db, "memory", "supersede", str(pixel.id), str(iphone.id))
    assert code == 0 and f"memory {pixel.id} is superseded by memory {iphone.id}" in out
    code, out, _ = run(capsys, *db, "memory", "list", "--state", "current", "--json")
    assert [m["id"] for m in json.loads(out)] == [iphone.id]
    code, _, err = run(capsys, *db, "memory", "supersede", str(pixel.id), str(pixel.id))
    assert code != 0 and "cannot supersede itself" in err
