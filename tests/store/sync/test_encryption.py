"""An encrypted pair: with a sealer (age through pyrage), the sync folder holds no plain text, the two
devices converge, and a device without the key, or with another one, is told so in one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyrage import x25519

from store.sync import engine, files, state
from store.sync.crypto import AgeSealer, identity_from_secret, sealer_for, set_key_source
from store.sync.files import SyncFileError
from tests.store.sync.sim import Fleet, differences

SECRET = "Vacation plans: hiking the Dolomites in June"


def test_an_encrypted_pair_converges_and_the_folder_holds_no_text() -> None:
    key = b"the database key both devices unlock chat.db with"
    fleet = Fleet.make(2, sealers=[AgeSealer.from_secret(key), AgeSealer.from_secret(key)])
    try:
        a, b = fleet.devices
        a.store.add_memory(SECRET, "project")
        fleet.op_import(a, 1, True)
        fleet.converge()
        ida = a.store.list_memories()[0].id
        b.store.edit_memory(b.store.list_memories()[0].id, content=SECRET + " and July")
        fleet.converge()
        first, second = fleet.dumps()
        assert first == second, differences(first, second)
        assert a.store.get_memory(ida).content == SECRET + " and July"
        folder = Path(state.device(a.store.con).folder)
        written = [p for p in folder.rglob("*.memsync")]
        assert len(written) >= 2
        for p in written:
            data = p.read_bytes()
            assert b"Dolomites" not in data and b"conversation 1" not in data
            assert data[len(files.MAGIC)] & files.SEALED
        # Without the key, or with another key: a clear refusal, nothing applied.
        plain = files.read_json(folder / state.device(a.store.con).id / "device.json")
        assert plain is not None and "Dolomites" not in str(plain)
        with pytest.raises(SyncFileError, match="encrypted"):
            files.read(written[0], None)
        with pytest.raises(SyncFileError, match="cannot be decrypted"):
            files.read(written[0], AgeSealer.from_secret(b"another key"))
    finally:
        fleet.close()


def test_the_key_source_and_key_files(tmp_path: Path) -> None:
    fleet = Fleet.make(1)
    try:
        store = fleet.devices[0].store
        assert sealer_for(store, None) is None  # a plain chat.db and no key file: files in the clear
        identity = x25519.Identity.generate()
        key_file = tmp_path / "sync.key"
        key_file.write_text(f"# created: by age-keygen\n{identity}\n")
        sealer = sealer_for(store, str(key_file))
        assert sealer is not None and sealer.unseal(AgeSealer(identity).seal(b"x")) == b"x"
        # The encryption at rest plugs in the database key: it wins over the key file.
        set_key_source(lambda s: b"database key")
        try:
            from_db = sealer_for(store, str(key_file))
            assert from_db is not None
            assert str(from_db.recipient) == str(identity_from_secret(b"database key").to_public())
        finally:
            set_key_source(None)
        bad = tmp_path / "bad.key"
        bad.write_text("not a key\n")
        with pytest.raises(Exception, match="no age identity"):
            sealer_for(store, str(bad))
    finally:
        fleet.close()


def test_a_copy_syncing_as_the_same_device_is_refused(tmp_path: Path) -> None:
    import shutil

    fleet = Fleet.make(1)
    try:
        a = fleet.devices[0]
        a.store.add_memory("first", "fact")
        a.sync()
        for suffix in ("", "-wal"):  # a copy of the file as it stands (what a backup holds)
            shutil.copyfile(f"{a.store.path}{suffix}", tmp_path / f"copy.db{suffix}")
        from store import Store
        from tests.store.sync.sim import tokens

        copy = Store(tmp_path / "copy.db", embedder=None, tokens=tokens())
        with copy.con:  # a copy from before: it forgets it wrote file 1, as a restored backup would
            state.put(copy.con, "nonce", "0123456789abcdef")
            state.put(copy.con, "out_seq", 0)
        with pytest.raises(Exception, match="--new-device"):
            engine.sync(copy, None, embed=False)
        engine.init(copy, Path(state.device(copy.con).folder), "the copy", new_device=True)
        copy.add_memory("second", "fact")
        engine.sync(copy, None, embed=False)
        a.sync()
        assert sorted(m.content for m in a.store.list_memories()) == ["first", "second"]
        copy.close()
    finally:
        fleet.close()
