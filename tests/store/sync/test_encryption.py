"""An encrypted pair: with a sealer (age through pyrage), the sync folder holds no plain text, the two
devices converge, and a device without the key, or with another one, is told so in one line. Two
encrypted chat.db files (each with its own salt) sealing with their shared passphrase, end to end."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyrage import x25519

from store import Store
from store.crypto import keys
from store.crypto.convert import create_encrypted
from store.crypto.seal import Sealer as DatabaseSealer
from store.sync import engine, files, state
from store.sync.crypto import SYNC_CONTEXT, AgeSealer, sealer_for
from store.sync.files import SyncFileError
from tests.store.sync.sim import Fleet, differences, tokens

SECRET = "Vacation plans: hiking the Dolomites in June"


def test_an_encrypted_pair_converges_and_the_folder_holds_no_text() -> None:
    phrase = "the passphrase both devices unlock chat.db with"
    sealers: list[files.Sealer | None] = [
        DatabaseSealer(phrase, SYNC_CONTEXT),
        DatabaseSealer(phrase, SYNC_CONTEXT),
    ]
    fleet = Fleet.make(2, sealers=sealers)
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
            files.read(written[0], DatabaseSealer("another passphrase", SYNC_CONTEXT))
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


def test_two_encrypted_databases_sync_sealed_by_their_passphrase(tmp_path: Path) -> None:
    """Each device's chat.db is encrypted with its own salt (so its own database key); the files they
    exchange are sealed with what they share, the passphrase, and never hold plain text."""
    phrase = "correct horse battery staple"
    folder = tmp_path / "Sync"
    stores = []
    for name in ("laptop", "desktop"):
        db = tmp_path / name / "chat.db"
        create_encrypted(db, phrase)
        stores.append(Store(db, embedder=None, tokens=tokens()))
    laptop, desktop = stores
    try:
        assert keys.salt_of(laptop.path) != keys.salt_of(desktop.path)
        for store, name in ((laptop, "laptop"), (desktop, "desktop")):
            engine.init(store, folder, name)
        laptop.add_memory(SECRET, "project")
        sealer = sealer_for(laptop, None)
        assert isinstance(sealer, DatabaseSealer)
        engine.sync(laptop, sealer, embed=False)
        engine.sync(desktop, sealer_for(desktop, None), embed=False)
        assert [m.content for m in desktop.list_memories()] == [SECRET]
        written = list(folder.rglob("*.memsync"))
        assert written and all(b"Dolomites" not in p.read_bytes() for p in written)
        assert all(p.read_bytes()[len(files.MAGIC)] & files.SEALED for p in written)
    finally:
        for store in stores:
            store.close()
