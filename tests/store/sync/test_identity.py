"""Global ids (migration 9): every insert path gets one, imported rows get the same one on every
machine, and an old database gets its ids when it is upgraded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from embeddings import FakeEmbedder
from store import Store
from store.export import export_json, restore_json
from store.importing.pipeline import import_paths
from store.sync.followups import derived_uid
from store.truth.classify import Verdict

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
UID_TABLES = ["threads", "messages", "long_term_memories", "memory_history", "memory_conflicts"]


def _missing(store: Store) -> dict[str, int]:
    out = {t: int(store.scalar(f"SELECT count(*) FROM {t} WHERE uid IS NULL")) for t in UID_TABLES}
    out["memory_history.memory_uid"] = int(
        store.scalar("SELECT count(*) FROM memory_history WHERE memory_uid IS NULL")
    )
    return out


def _uids(store: Store, table: str) -> list[str]:
    return [str(r[0]) for r in store.con.execute(f"SELECT uid FROM {table} ORDER BY uid")]


def test_every_insert_path_gets_a_uid(store: Store, tmp_path: Path) -> None:
    report = import_paths(store, [FIXTURES / "import" / "chatgpt" / "conversations.json"], embed=False)
    assert report.threads_added
    import_paths(store, [FIXTURES / "import" / "generic" / "threads.jsonl"], embed=False)
    manual = store.add_memory("I keep my notes in plain text", "preference").memory
    imported = store.add_memory("Lives in Lisbon", "fact", origin="import").memory
    forced = store.add_memory("Lives in Lisbon", "fact", origin="import", force=True).memory
    store.edit_memory(manual.id, content="I keep my notes in Markdown", pinned=True)
    store.delete_memory(manual.id)
    store.restore_memory(manual.id)
    store.touch_memories([manual.id])
    store.open_conflict(manual.id, imported.id, Verdict("unsure", "review", 0.5, ("test",)))
    store.rename_thread(store.thread_ids()[0], "Renamed")
    store.purge_trash(older_than_days=0)
    assert _missing(store) == {t: 0 for t in _missing(store)}
    for table in UID_TABLES:  # unique, and the kinds of id the migration documents
        uids = _uids(store, table)
        assert len(uids) == len(set(uids))
    assert imported.id != forced.id
    rows = {int(i): str(u) for i, u in store.con.execute("SELECT id, uid FROM long_term_memories")}  # type: ignore[arg-type]
    assert rows[manual.id].startswith("u:")  # typed by hand: new by definition
    assert rows[imported.id] == f"h:fact:{imported_hash(store, imported.id)}"
    assert rows[forced.id].startswith("u:")  # the deterministic one was taken: random, no failed insert
    # A restore of an export keeps the uids; an export from before migration 9 gets new ones.
    data = export_json(store)
    copy = Store(tmp_path / "copy.db", embedder=FakeEmbedder())
    restore_json(copy, data)
    assert _uids(copy, "threads") == _uids(store, "threads")
    for table in data["tables"].values():
        for row in table:
            row.pop("uid", None)
            row.pop("memory_uid", None)
    fresh = Store(tmp_path / "fresh.db", embedder=FakeEmbedder())
    restore_json(fresh, json.loads(json.dumps(data)))
    assert _missing(fresh) == {t: 0 for t in _missing(fresh)}
    copy.close()
    fresh.close()


def imported_hash(store: Store, memory_id: int) -> str:
    return str(store.scalar("SELECT content_hash FROM long_term_memories WHERE id = ?", (memory_id,)))


def test_the_same_export_imported_on_two_machines_has_the_same_ids(tmp_path: Path) -> None:
    paths = [
        FIXTURES / "import" / "chatgpt" / "conversations.json",
        FIXTURES / "import" / "generic" / "threads.jsonl",
    ]
    a = Store(tmp_path / "a.db", embedder=FakeEmbedder())
    b = Store(tmp_path / "b.db", embedder=FakeEmbedder())
    import_paths(a, paths, embed=False)
    import_paths(b, list(reversed(paths)), embed=False)  # another order: other local ids
    for table in ("threads", "messages"):
        assert _uids(a, table) == _uids(b, table)
        assert not any(u.startswith("u:") for u in _uids(a, table))
    a.close()
    b.close()


def test_an_old_database_gets_ids_when_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    shutil.copyfile(FIXTURES / "chat-v1.db", path)
    s = Store(path, embedder=FakeEmbedder())
    assert _missing(s) == {t: 0 for t in _missing(s)}
    for table in UID_TABLES:
        uids = _uids(s, table)
        assert len(uids) == len(set(uids))
    # The history of each memory points at the memory's uid.
    bad = s.scalar(
        "SELECT count(*) FROM memory_history h JOIN long_term_memories m ON m.id = h.memory_id "
        "WHERE h.memory_uid != m.uid"
    )
    assert bad == 0 and s.scalar("SELECT count(*) FROM threads") > 0
    s.close()


def test_derived_uids_are_stable() -> None:
    assert derived_uid("c", "u:1", "0000000001.aa") == derived_uid("c", "u:1", "0000000001.aa")
    assert derived_uid("c", "u:1", "0000000001.aa") != derived_uid("c", "u:1", "0000000002.aa")
