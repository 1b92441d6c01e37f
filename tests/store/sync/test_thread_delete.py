"""A thread deleted on one device against what other devices did to it without knowing (the soak's
2026-11-28 divergence): the delete wins over every change made without having seen it (an import of the
same conversation, an append, a rename), on every device and in whatever order the files arrive; an
import made after the delete was seen brings the thread back everywhere."""

from __future__ import annotations

import pytest

from tests.store.sync.sim import Device, Fleet


def _counts(fleet: Fleet) -> list[tuple[int, int]]:
    return [
        (d.store.scalar("SELECT count(*) FROM threads"), d.store.scalar("SELECT count(*) FROM messages"))
        for d in fleet.devices
    ]


def _delete(d: Device) -> None:
    d.store.delete_thread(d.thread_ids()[0])


@pytest.mark.parametrize("full", [False, True])
def test_a_delete_wins_over_an_import_of_the_same_conversation_made_meanwhile(
    fleet: Fleet, full: bool
) -> None:
    """The soak's case: device 0 imports and sends; device 1 imports the same export (or a newer, longer
    one) before it has seen that; device 0 deletes the thread. Before the fix device 0 got the thread
    back from device 1's import while devices 1 and 2 dropped it."""
    a, b, _ = fleet.devices
    fleet.op_import(a, 0, False)
    a.sync()
    fleet.op_import(b, 0, full)
    _delete(a)
    fleet.converge()
    fleet.assert_same()
    assert _counts(fleet) == [(0, 0)] * 3


def test_the_delete_wins_whichever_device_hears_of_it_first(fleet: Fleet) -> None:
    """Device 2 gets the concurrent import before the delete, device 0 after it: the same end."""
    a, b, c = fleet.devices
    fleet.op_import(a, 0, False)
    fleet.converge()
    fleet.op_import(b, 0, True)  # an append of the newer export's messages
    b.sync()
    c.sync()  # device 2 has the appended messages
    _delete(a)
    fleet.converge()
    fleet.assert_same()
    assert _counts(fleet) == [(0, 0)] * 3


def test_importing_again_after_the_delete_brings_the_thread_back_everywhere(fleet: Fleet) -> None:
    a, b, _ = fleet.devices
    fleet.op_import(a, 0, False)
    fleet.converge()
    _delete(a)
    fleet.converge()
    assert _counts(fleet) == [(0, 0)] * 3
    fleet.op_import(b, 0, True)  # device 1 has seen the delete: this import is meant
    fleet.converge()
    fleet.assert_same()
    assert _counts(fleet) == [(1, 6)] * 3
    _delete(b)  # and deleting it again deletes it again
    fleet.op_import(a, 0, False)  # an import that had not seen this second delete
    fleet.converge()
    fleet.assert_same()
    assert _counts(fleet) == [(0, 0)] * 3


def test_changes_made_before_seeing_a_delete_stay_out_of_a_later_reimport(fleet: Fleet) -> None:
    """Device 1 imports a longer export and renames the thread without having seen device 0's delete;
    device 2 imports the conversation again after seeing the delete. Whichever order the three devices'
    files reach each other in, all end with device 2's import alone (not with device 1's messages or
    title on some devices only)."""
    a, b, c = fleet.devices
    fleet.op_import(a, 0, False)
    fleet.converge()
    fleet.op_import(b, 0, True)
    b.store.rename_thread(b.thread_ids()[0], "renamed before the delete arrived")
    _delete(a)
    a.sync()
    c.sync()
    fleet.op_import(c, 0, False)
    c.sync()
    a.sync()  # device 0: its delete, then device 2's import, then device 1's changes
    fleet.converge()
    fleet.assert_same()
    assert _counts(fleet) == [(1, 3)] * 3
    title = a.store.get_thread(a.thread_ids()[0]).title
    assert title == "Conversation conv0"


def test_a_delete_and_import_again_made_before_seeing_another_delete(fleet: Fleet) -> None:
    """Devices 0 and 2 both delete the thread and import it again, each before it has seen the other's
    delete (device 2 before it even synced: it is sent as a delete, then an import, not as an edit that
    removes messages). Each import had not seen the other device's delete, so both deletes win: the
    thread is gone everywhere, and an import made after that brings it back. Before, device 0 lost the
    messages device 2's shorter export lacked, alone."""
    a, _, c = fleet.devices
    fleet.op_import(c, 2, True)
    fleet.converge()
    _delete(a)
    a.sync()
    _delete(c)
    fleet.op_import(a, 2, True)
    fleet.op_import(c, 2, False)
    fleet.converge()
    fleet.assert_same()
    assert _counts(fleet) == [(0, 0)] * 3
    fleet.op_import(c, 2, False)
    fleet.converge()
    fleet.assert_same()
    assert _counts(fleet) == [(1, 3)] * 3


def test_a_thread_deleted_and_imported_again_before_a_sync_meets_an_import_elsewhere(fleet: Fleet) -> None:
    """Device 2 deletes and imports again before it syncs; device 1 imports the same conversation
    meanwhile. Device 2 used to send this as an edit of the thread's creation time (and messages
    removed), which merged with device 1's import differently depending on the order they arrived in
    (devices ended with different creation times); it is now sent as a delete, then an import."""
    _, b, c = fleet.devices
    fleet.op_import(c, 0, True)
    c.sync()
    _delete(c)
    fleet.op_import(b, 0, False)
    fleet.op_import(c, 0, False)
    fleet.converge()
    fleet.assert_same()
    assert _counts(fleet) == [(1, 3)] * 3


def test_a_thread_deleted_and_imported_again_before_a_sync_wins_over_an_import_elsewhere(
    fleet: Fleet,
) -> None:
    """Device 2 deletes the thread and imports a shorter export of it before it syncs; device 0 imports
    the longer one meanwhile. Device 2's delete wins over device 0's import, which had not seen it, and
    device 2's import follows: three messages everywhere. Before, device 0 lost the three messages
    device 2 no longer had while device 2 got them back from device 0's import."""
    a, _, c = fleet.devices
    fleet.op_import(c, 1, True)
    c.sync()
    _delete(c)
    fleet.op_import(a, 1, True)
    fleet.op_import(c, 1, False)
    fleet.converge()
    fleet.assert_same()
    assert _counts(fleet) == [(1, 3)] * 3
