"""Many writers at once on one chat.db: threads of this process (TUI-like workers, an import, MCP tool
handlers) and other processes, every read-modify-write counted (issue 31, 1 and 5).

What it proves:
- every call finishes within a bound far below the busy timeout (before the write queue, a thread
  waiting for the lock stalled the one holding it: calls took until the timeout, then failed);
- no update is lost: importance +1/-1 pairs (the TUI's `+`/`-`), pin toggles (`p`) and accesses
  (searches) from all of them leave each memory where it started, memory_history holds one row per
  change, and access_count equals the accesses made (tests/reliability/rmw_worker.py);
- the import and every MCP add landed whole, and chat.db passes its checks.

3 s in CI, 30 s in the soak run (`make soak`).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import apsw
import pytest

from app.mcp.memory_tools import add_memory, search_memory
from app.mcp.results import MemorySearch
from store import Store
from store.importing.pipeline import import_paths
from tests.reliability.generated_exports import conversation_texts, write_generic
from tests.reliability.invariants import database_problems, history_problems, thread_contents
from tests.reliability.processes import REPO, runner_env
from tests.reliability.rmw_worker import MAX_WORKERS, START_IMPORTANCE, Tally, run_threads

pytestmark = [pytest.mark.serial, pytest.mark.soak]

WORKER = Path(__file__).resolve().parent / "rmw_worker.py"
IN_PROCESS, PROCESSES, THREADS_EACH = 3, 2, 2
BOUND_S = 5.0  # the longest any one call may take (busy timeout 15 s; a turn comes within milliseconds)


def _rows(db: Path) -> tuple[int, ...]:
    """Row counts of the canonical tables, read from `db` alone (a copy has no -wal beside it)."""
    con = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        tables = ("long_term_memories", "memory_history", "threads", "messages")
        return tuple(int(str(con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0])) for t in tables)
    finally:
        con.close()


class Timed:
    """The longest call and any error of a group of threads."""

    def __init__(self) -> None:
        self.slowest = 0.0
        self.calls = 0
        self.errors: list[str] = []
        self.lock = threading.Lock()

    def run(self, fn: object, *args: object) -> object:
        t = time.monotonic()
        try:
            return fn(*args)  # type: ignore[operator]
        except Exception as exc:
            with self.lock:
                self.errors.append(f"{type(exc).__name__}: {exc}")
            return None
        finally:
            with self.lock:
                self.slowest = max(self.slowest, time.monotonic() - t)
                self.calls += 1


def _mcp_handler(
    store: Store, n: int, deadline: float, timed: Timed, added: list[str], shown: Counter[int]
) -> None:
    """What the MCP server's worker threads do: add_memory and search_memory, one after another (each
    memory a search returns counts one access: `shown`)."""
    i = 0
    while time.monotonic() < deadline:
        text = f"handler {n} remembers fact {i} about the garden"
        if timed.run(add_memory, store, text, "fact") is not None:
            added.append(text)
        found = timed.run(search_memory, store, f"garden fact {i}")
        if isinstance(found, MemorySearch):
            with timed.lock:
                shown.update(hit.id for hit in found.results)
        i += 1


def test_threads_and_processes_write_at_once_with_no_lost_update(
    tmp_path: Path, soak: bool, figures: dict[str, int]
) -> None:
    assert IN_PROCESS + PROCESSES * THREADS_EACH <= MAX_WORKERS
    seconds = 30.0 if soak else 3.0
    db = tmp_path / "chat.db"
    with Store(db, embedder=None) as store:
        ids = [
            store.add_memory(
                f"shared memory {i} for the workers", "fact", importance=START_IMPORTANCE
            ).memory.id
            for i in range(4)
        ]
    spec = conversation_texts(31, 60 if soak else 20, 20)
    export = write_generic(tmp_path / "export.json", spec)

    idle = apsw.Connection(str(db))  # open elsewhere all along (an idle TUI): no last-close checkpoint
    procs = [
        subprocess.Popen(
            [sys.executable, str(WORKER), str(db), str(seconds), str(p), str(THREADS_EACH)]
            + [str(tmp_path / f"tally-{p}.json"), *map(str, ids)],
            cwd=REPO,
            env=runner_env(tmp_path),
            stderr=subprocess.PIPE,
            text=True,
        )
        for p in range(PROCESSES)
    ]
    store = Store(db, embedder=None)
    deadline = time.monotonic() + seconds
    timed = Timed()
    added: list[str] = []
    imported: list[object] = []
    tui: list[Tally] = []
    shown: Counter[int] = Counter()

    def tui_workers() -> None:
        tui.append(run_threads(store, ids, seconds, 99, IN_PROCESS))

    def importer() -> None:
        imported.append(timed.run(lambda: import_paths(store, [export], embed=False, summarize=False)))

    threads = [
        threading.Thread(target=tui_workers),
        threading.Thread(target=importer),
        *(
            threading.Thread(target=_mcp_handler, args=(store, n, deadline, timed, added, shown))
            for n in range(2)
        ),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=seconds + 300)
    store.close()  # flushes access counts still waiting
    for p in procs:
        _, err = p.communicate(timeout=seconds + 300)
        assert p.returncode == 0, err

    total = Tally()
    total.add(tui[0])
    total.accesses.update(shown)
    for n in range(PROCESSES):
        total.add(Tally.from_json(json.loads((tmp_path / f"tally-{n}.json").read_text())))
    assert total.errors == [] and timed.errors == [], (total.errors + timed.errors)[:5]
    slowest = max(total.slowest, timed.slowest)
    assert slowest < BOUND_S, f"a call took {slowest:.2f} s"
    assert imported and getattr(imported[0], "ok", False), imported

    with Store(db, embedder=None) as check:
        assert database_problems(check) == [] and history_problems(check) == []
        lost = 0
        for mid in ids:
            m = check.get_memory(mid)
            lost += abs(m.importance - START_IMPORTANCE) + int(m.pinned)
            lost += abs(m.access_count - total.accesses[mid])
            assert m.importance == START_IMPORTANCE and not m.pinned, f"memory {mid}: {m}"
            assert m.access_count == total.accesses[mid], f"memory {mid}: an access was lost"
        changes = sum(1 for mid in ids for h in check.memory_history(mid) if h.event == "importance")
        toggles = sum(1 for mid in ids for h in check.memory_history(mid) if h.event in ("pin", "unpin"))
        assert changes == total.importance_changes, "an importance change was lost"
        assert toggles == total.toggles, "a pin toggle was lost"
        assert thread_contents(check, "generic") == spec.by_id()
        contents = {m.content for m in check.list_memories(limit=10**6)}
        assert set(added) <= contents, "an acknowledged MCP add is missing"
    # 2 s after the load ended, a plain copy of chat.db alone (no -wal) holds every row (store.checkpoints).
    time.sleep(2.0)
    copy = tmp_path / "plain-copy.db"
    shutil.copyfile(db, copy)
    idle.close()
    assert _rows(copy) == _rows(db), "a plain copy taken 2 s after the load missed recent writes"
    counted = total.importance_changes + total.toggles + sum(total.accesses.values())
    figures["read-modify-writes counted under mixed load"] = (
        figures.get("read-modify-writes counted under mixed load", 0) + counted
    )
    figures["writer threads and processes at once"] = max(
        figures.get("writer threads and processes at once", 0), IN_PROCESS + 3 + PROCESSES * THREADS_EACH
    )
    figures["lost updates"] = figures.get("lost updates", 0) + lost  # asserted 0 above
    figures["plain-copy backups checked 2 s after load"] = (
        figures.get("plain-copy backups checked 2 s after load", 0) + 1
    )
    figures["longest write call under mixed load (ms)"] = max(
        figures.get("longest write call under mixed load (ms)", 0), int(slowest * 1000)
    )
