"""MemApp implements the Host protocol the screens type against (app/tui/host.py)."""

from __future__ import annotations

import inspect

from app.tui.app import MemApp
from app.tui.host import Host
from app.tui.screens.memory_edit import MemoryEditScreen, open_memory_editor
from app.tui.screens.thread_view import ThreadViewScreen
from store import Store
from tests.app.tui.tui_helpers import make_app, settle


def _as_host(app: MemApp) -> Host:
    return app  # mypy checks here that MemApp has every Host member, with compatible types


def test_memapp_has_every_host_member() -> None:
    members = {name for name, _ in inspect.getmembers(Host) if not name.startswith("_")}
    assert members, "the protocol lists members"
    assert {name for name in members if not hasattr(MemApp, name)} == set()
    assert _as_host.__annotations__["return"] == "Host"


async def test_the_editor_opens_its_source_thread_through_the_host(tui_store: Store) -> None:
    """ctrl+g in the memory editor asks the app (Host.open_thread) for the thread view, at the message:
    the editor no longer imports the thread view, which imports the editor."""
    from store import MessageIn, ThreadIn
    from store.truth import Source

    tid = tui_store.write_thread(
        ThreadIn("manual", None, "Backups", [MessageIn("user", "the nightly backup runs at 3am")])
    ).thread_id
    message = tui_store.get_messages(tid)[0]
    memory = tui_store.add_memory("the nightly backup runs at 3am", category="fact").memory
    source = Source("extract", tid, "Backups", message.id, message.seq, "user", "the nightly backup", None)
    app = make_app(tui_store, greet=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        open_memory_editor(app, memory, source=source)
        await settle(pilot)
        assert isinstance(app.screen, MemoryEditScreen)
        await pilot.press("ctrl+g")
        await settle(pilot)
        assert isinstance(app.screen, ThreadViewScreen)
        assert (app.screen.thread_id, app.screen.message_id, app.screen.nav) == (tid, message.id, "memories")
