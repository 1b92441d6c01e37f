"""`memapp` processes for the crash and concurrency tests.

    python cli_runner.py [--fake-embedder] [--out FILE] -- ARGV...     # app.cli.main(ARGV), once
    python cli_runner.py [--fake-embedder] -- @edit-loop DB CONFIG JOURNAL SEED [SECONDS [IDS]]
    python cli_runner.py -- @tui-edits DB JOURNAL SEED   # the TUI's +, - and p keys, headless
    python cli_runner.py --zygote          # fork one child per JSON request line on stdin

A single run prints "ready" once its imports are done and starts on a "go" line from stdin, so a test
can time a SIGKILL from the moment real work begins. The zygote does the imports once and forks a child
per request ({"argv", "out", "err", "rc", "fake_embedder"}): it answers with the child's pid and, when
the child ends, writes its exit status to the "rc" file (-9 after a SIGKILL). `--fake-embedder` makes
the store use the deterministic FakeEmbedder instead of loading all-MiniLM (seconds per process), so
vector writes are exercised cheaply.

A request may also carry "kill_at_write": N (the child kills itself just before its Nth write to any file
SQLite writes) and "writes_out": PATH (the child writes how many writes it made there when it ends). Why:
a kill timed by watching chat.db from outside lands only while the command still runs, and short commands
(a schema migration, accepting one suggestion, adding one memory) are often done before the watcher
reacts. Counting SQLite's writes (database, WAL, journal) gives every command a sequence of progress points
it always passes: count them once, then kill before a seeded random one, and every kill lands inside the
work on any machine at any load (the process-crash half of SQLite's own crash tests: what reached the OS
stays, the rest never happened). The counting VFS is installed in the forked child, before the command
opens a connection, as the default, inheriting every method from the platform's own.

The edit loop is what a person editing memories by hand does, through the same CLI code path: each step
is journalled as {"begin": …} before and {"done": …} after `app.cli.main` returns 0, written with
os.write, so after a kill the test knows every edit that was acknowledged and the one in flight.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import os
import random
import signal
import sys
import threading
import time
import traceback
from typing import Any


def _patch_fake_embedder() -> None:
    import store.core
    from embeddings import FakeEmbedder

    assert hasattr(store.core, "make_embedder")  # else the patch below would do nothing
    store.core.make_embedder = lambda *a, **k: FakeEmbedder()  # type: ignore[assignment]


class _WriteCounter:
    """Counts SQLite's writes; at `kill_at` (1-based) the process kills itself instead of writing."""

    def __init__(self, kill_at: int | None) -> None:
        self.kill_at = kill_at
        self.writes = 0
        self.lock = threading.Lock()

    def tick(self) -> None:
        with self.lock:
            self.writes += 1
            if self.kill_at is not None and self.writes >= self.kill_at:
                os.kill(os.getpid(), signal.SIGKILL)


def _count_writes(counter: _WriteCounter) -> Any:
    """Make a counting VFS the default for every connection opened from now on (keep the result alive)."""
    import apsw

    base = apsw.vfs_names()[0]  # the platform's default ("unix")

    class CountingFile(apsw.VFSFile):
        def __init__(self, name: Any, flags: list[int]) -> None:
            super().__init__(base, name, flags)

        def xWrite(self, data: bytes, offset: int) -> None:  # noqa: N802 - apsw's name
            counter.tick()
            super().xWrite(data, offset)

    class CountingVFS(apsw.VFS):
        def __init__(self) -> None:
            super().__init__("memapp-kill-at-write", base, makedefault=True)

        def xOpen(self, name: Any, flags: list[int]) -> apsw.VFSFile:  # noqa: N802 - apsw's name
            return CountingFile(name, flags)

    return CountingVFS()


def _edit_loop(
    main: Any, db: str, config: str, journal: str, seed: int, seconds: float, only: set[int]
) -> int:
    """Edit memories (all, or the ids in `only`) until killed, or for `seconds`."""
    from store import Store

    s = Store(db, embedder=None)
    memories = {
        m.id: m
        for m in s.list_memories(limit=10**6) + s.list_memories(trash=True, limit=10**6)
        if not only or m.id in only
    }
    s.close()
    deadline = time.monotonic() + seconds
    rng = random.Random(seed)
    fd = os.open(journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    step = 0
    while time.monotonic() < deadline:
        mid = rng.choice(sorted(memories))
        m = memories[mid]
        value: Any = None
        if m.deleted_at is not None:
            op, args = "restore", ["memory", "restore", str(mid)]
        else:
            op = rng.choice(["edit", "edit", "importance", "pin", "rm"])
            if op == "edit":
                value = f"seed {seed} step {step}: memory {mid} rewritten by hand"
                args = ["memory", "edit", str(mid), "--text", value]
            elif op == "importance":
                value = rng.randint(1, 10)
                args = ["memory", "edit", str(mid), "--importance", str(value)]
            elif op == "pin":
                value = not m.pinned
                args = ["memory", "pin" if value else "unpin", str(mid)]
            else:
                args = ["memory", "rm", str(mid)]
        record = {"step": step, "seed": seed, "id": mid, "op": op, "value": value}
        os.write(fd, (json.dumps({"begin": record}) + "\n").encode())
        with contextlib.redirect_stdout(io.StringIO()):
            code = main(["--db", db, "--config", config, *args, "--json"])
        if code != 0:
            print(f"step {step}: {args} exited {code}", file=sys.stderr)
            return int(code)
        changes = {
            "edit": {"content": value},
            "importance": {"importance": value},
            "pin": {"pinned": value},
            "rm": {"deleted_at": 1.0},
            "restore": {"deleted_at": None},
        }[op]
        memories[mid] = dataclasses.replace(m, **changes)
        os.write(fd, (json.dumps({"done": record}) + "\n").encode())
        step += 1
    return 0


def _tui_edits(db: str, journal: str, seed: int) -> int:
    """The TUI's own edits until killed: the real app, run headless, on its Memories screen, pressing
    `+`, `-` and `p` on a memory picked with the arrow keys. Each press is journalled as {"begin": …}
    before and {"done": …} once its write (a worker) has finished and the screen has shown it."""
    import asyncio

    from textual.worker import WorkerState

    from app.tui.app import MemApp
    from app.tui.screens.memories import MemoriesScreen
    from store import Store

    rng = random.Random(seed)
    fd = os.open(journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    store = Store(db, embedder=None)

    async def run() -> None:
        app = MemApp(store, greet=False)

        async def workers_done() -> None:
            """Every worker finished or cancelled (a screen switch cancels its predecessor's loaders, and
            `wait_for_complete` raises WorkerCancelled for those)."""
            while any(w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in app.workers):
                await asyncio.sleep(0.005)

        async with app.run_test(size=(100, 30)) as pilot:
            await app.action_go("memories")
            while not (
                isinstance(app.screen, MemoriesScreen)
                and app.screen.query("#memories-table")
                and not app.holding_keys
            ):
                await pilot.pause(0.02)
            screen = app.screen
            await workers_done()
            step = 0
            while True:
                for _ in range(rng.randint(0, 3)):
                    await pilot.press(rng.choice(["down", "up"]))
                mid = screen.current_id()
                if mid is None:
                    await pilot.pause(0.02)
                    continue
                op = rng.choice(["plus", "minus", "p"])
                record = {"step": step, "seed": seed, "id": mid, "op": op}
                os.write(fd, (json.dumps({"begin": record}) + "\n").encode())
                await pilot.press(op)
                await workers_done()
                await pilot.pause()
                os.write(fd, (json.dumps({"done": record}) + "\n").encode())
                step += 1

    asyncio.run(run())
    return 0


def _run(main: Any, argv: list[str]) -> int:
    if argv[:1] == ["@tui-edits"]:
        db, journal, seed = argv[1:4]
        return _tui_edits(db, journal, int(seed))
    if argv[:1] == ["@edit-loop"]:
        db, config, journal, seed, *rest = argv[1:]
        seconds = float(rest[0]) if rest else float("inf")
        only = {int(i) for i in rest[1].split(",")} if len(rest) > 1 else set()
        return _edit_loop(main, db, config, journal, int(seed), seconds, only)
    code = main(argv)
    sys.stdout.flush()
    return int(code or 0)


def _kill_around(when: str, target: str) -> None:
    """SIGKILL this process just before or just after every call of `target` ("module:function"): a kill at
    a named step that is no SQLite write (a rename, a file overwritten with os.pwrite)."""
    import importlib

    module_name, attr = target.split(":")
    module = importlib.import_module(module_name)
    real = getattr(module, attr)

    def killing(*args: Any, **kwargs: Any) -> Any:
        if when == "before":
            os.kill(os.getpid(), signal.SIGKILL)
        result = real(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)
        return result

    setattr(module, attr, killing)


def _redirect(fd: int, path: str) -> None:
    target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(target, fd)
    os.close(target)


def _zygote(main: Any) -> int:
    """Fork a child per request line; report its pid, and its exit status in the request's rc file."""
    pending: dict[int, str] = {}

    def reap(*_: object) -> None:
        while True:
            try:
                # WNOWAIT: write the status before the pid is released, so the test never kills a
                # recycled pid; then reap.
                info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                return
            if info is None:
                return
            rc_path = pending.pop(info.si_pid, None)
            code = -info.si_status if info.si_code in (os.CLD_KILLED, os.CLD_DUMPED) else info.si_status
            if rc_path is not None:
                with open(rc_path + ".tmp", "w") as fh:
                    fh.write(str(code))
                os.replace(rc_path + ".tmp", rc_path)
            os.waitpid(info.si_pid, 0)

    signal.signal(signal.SIGCHLD, reap)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    for line in sys.stdin:
        request = json.loads(line)
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
        pid = os.fork()
        if pid == 0:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            code = 1
            counter = _WriteCounter(request.get("kill_at_write"))
            try:
                _redirect(1, request["out"])
                _redirect(2, request["err"])
                if request.get("stdin"):
                    source = os.open(request["stdin"], os.O_RDONLY)
                    os.dup2(source, 0)
                    os.close(source)
                    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - the child's own
                sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115 - the child's own
                sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
                if request["fake_embedder"]:
                    _patch_fake_embedder()
                if request.get("kill_around"):
                    _kill_around(*request["kill_around"])
                if request.get("kill_at_write") is not None or request.get("writes_out"):
                    vfs = _count_writes(counter)  # noqa: F841 - registered while it lives
                code = _run(main, request["argv"])
            except BaseException:
                traceback.print_exc()
            finally:
                if request.get("writes_out"):
                    with open(request["writes_out"], "w") as fh:
                        fh.write(str(counter.writes))
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        pending[pid] = request["rc"]
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
        sys.stdout.write(f"{pid}\n")
        sys.stdout.flush()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fake-embedder", action="store_true")
    parser.add_argument("--zygote", action="store_true")
    parser.add_argument("--out", default=os.devnull)
    parser.add_argument("argv", nargs="*")
    opts = parser.parse_args()

    from app.cli import build_parser
    from app.cli import main as memapp_main
    from store import Store, cleanup, maintenance  # noqa: F401 - imported now, not after "go"
    from store.importing import pipeline  # noqa: F401

    build_parser()  # imports every command module
    with Store(":memory:", embedder=None) as warm:  # loads the tokenizer's BPE file and sqlite-vec once
        warm.tokens.count("warm up")
    if opts.zygote:
        return _zygote(memapp_main)
    if opts.fake_embedder:
        _patch_fake_embedder()
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    if sys.stdin.readline().strip() != "go":
        return 3
    _redirect(1, opts.out)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115 - lives as long as the process
    return _run(memapp_main, opts.argv)


if __name__ == "__main__":
    sys.exit(main())
