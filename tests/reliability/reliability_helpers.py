"""Shared by the reliability tests: generated exports, a killable CLI process, and the invariants of chat.db.

Why a runner process instead of `python -m app …` each time: a CLI process spends ~0.6 s importing
before it touches the database, so a kill at a random moment would mostly hit the imports. The runner
(cli_runner.py) does those imports, says "ready", and waits for "go" before calling the same
`app.cli.main` that `memapp` runs; the next process is started while the current one works, so CI pays
the start-up cost once per kill in parallel instead of serially.

A plain module with a unique name (not conftest.py), imported directly by the test files, like
tests/store/importing/formats/import_helpers.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw

from store import Store

REPO = Path(__file__).resolve().parents[2]
RUNNER = Path(__file__).resolve().parent / "cli_runner.py"
SOAK = os.environ.get("MEMAPP_SOAK", "") not in ("", "0")


def no_embed_config(directory: Path) -> Path:
    """A config that never loads a model (keyword search only): CLI processes start in ~0.6 s."""
    path = directory / "no-embed.toml"
    path.write_text("[embedding]\nenabled = false\n", encoding="utf-8")
    return path


def runner_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMAPP_")}
    env["PYTHONPATH"] = str(REPO)
    env["MEMAPP_CONFIG"] = str(tmp / "absent-config.toml")
    env["MEMAPP_DB"] = str(tmp / "absent-chat.db")
    env["HF_HUB_OFFLINE"] = "1"
    return env


# -- generated exports -----------------------------------------------------------------------------


@dataclass
class ExportSpec:
    """What a generated export holds: conversation ids in file order, and each one's message texts."""

    threads: list[tuple[str, list[str]]] = field(default_factory=list)

    @property
    def messages(self) -> int:
        return sum(len(m) for _, m in self.threads)

    def by_id(self) -> dict[str, list[str]]:
        return dict(self.threads)


_WORDS = (
    "sqlite",
    "wal",
    "checkpoint",
    "vector",
    "index",
    "embedding",
    "import",
    "thread",
    "memory",
    "summary",
    "garden",
    "bread",
    "rust",
    "python",
    "backup",
    "restic",
    "timer",
    "coffee",
    "tea",
    "lisbon",
    "marathon",
    "budget",
    "invoice",
    "textual",
    "widget",
    "pilot",
    "snapshot",
    "cosine",
    "token",
    "chunk",
    "merge",
    "pinned",
    "trash",
    "cleanup",
    "decay",
    "recall",
)


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n)).capitalize() + "."


def conversation_texts(seed: int, n_threads: int, per_thread: int) -> ExportSpec:
    rng = random.Random(seed)
    spec = ExportSpec()
    for t in range(n_threads):
        n = max(2, per_thread + rng.randint(-per_thread // 2, per_thread // 2))
        texts = [
            f"[{t}:{i}] " + " ".join(_sentence(rng, rng.randint(5, 18)) for _ in range(rng.randint(1, 4)))
            for i in range(n)
        ]
        spec.threads.append((f"conv-{seed}-{t:05d}", texts))
    return spec


def write_chatgpt(path: Path, spec: ExportSpec) -> Path:
    """A ChatGPT `conversations.json`: each conversation a linear mapping tree, user/assistant turns."""
    convs = []  # type: ignore[var-annotated]
    for conv_id, texts in spec.threads:
        mapping: dict[str, Any] = {"root": {"id": "root", "message": None, "parent": None, "children": []}}
        parent = "root"
        t0 = 1_700_000_000.0 + len(convs) * 1000
        for i, text in enumerate(texts):
            node = f"{conv_id}-n{i}"
            mapping[parent]["children"].append(node)
            mapping[node] = {
                "id": node,
                "parent": parent,
                "children": [],
                "message": {
                    "id": node,
                    "author": {"role": "user" if i % 2 == 0 else "assistant"},
                    "create_time": t0 + i,
                    "content": {"content_type": "text", "parts": [text]},
                    "status": "finished_successfully",
                    "metadata": {},
                },
            }
            parent = node
        convs.append(
            {
                "id": conv_id,
                "title": f"Conversation {conv_id}",
                "create_time": t0,
                "update_time": t0 + len(texts),
                "current_node": parent,
                "mapping": mapping,
            }
        )
    path.write_text(json.dumps(convs), encoding="utf-8")
    return path


def write_generic(path: Path, spec: ExportSpec) -> Path:
    """The documented generic JSON list: `[{"id", "title", "messages": [{"id", "role", "content"}]}]`."""
    threads = [
        {
            "id": conv_id,
            "title": f"Thread {conv_id}",
            "messages": [
                {
                    "id": f"{conv_id}-m{i}",
                    "role": "user" if i % 2 == 0 else "assistant",
                    "content": text,
                    "created_at": 1_700_000_000 + i,
                }
                for i, text in enumerate(texts)
            ],
        }
        for conv_id, texts in spec.threads
    ]
    path.write_text(json.dumps(threads), encoding="utf-8")
    return path


# -- killable CLI processes ------------------------------------------------------------------------


class Killable:
    """A running `memapp` command that a test can kill at a chosen moment and then inspect."""

    out: Path
    err: Path
    started: float

    def poll(self) -> int | None:
        raise NotImplementedError

    def _kill(self) -> None:
        raise NotImplementedError

    def wait(self, timeout: float = 300) -> int:
        deadline = time.monotonic() + timeout
        while (code := self.poll()) is None:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.out.stem} still running after {timeout} s")
            time.sleep(0.005)
        return code

    def kill_after(self, delay: float) -> bool:
        """SIGKILL `delay` seconds after the start. True if it was still running (a real kill)."""
        while self.poll() is None:
            if time.monotonic() >= self.started + delay:
                self._kill()
                self.wait()
                return True
            time.sleep(0.002)
        return False

    def kill_when(self, db: Path, sql: str, target: int, *, extra: float = 0.0, timeout: float = 120) -> bool:
        """SIGKILL once `sql` (a number) reaches `target` in chat.db, plus `extra` seconds: a kill at a
        chosen point of progress, whatever the machine's speed. True if it was still running."""
        deadline = time.monotonic() + timeout
        con: apsw.Connection | None = None
        try:
            while self.poll() is None and time.monotonic() < deadline:
                if con is None and db.exists():
                    con = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
                    con.set_busy_timeout(5000)
                try:
                    value = con.execute(sql).fetchone()[0] if con is not None else None  # type: ignore[index]
                except apsw.SQLError:  # the table is not there yet
                    value = None
                if value is not None and value >= target:
                    time.sleep(extra)
                    break
                time.sleep(0.003)
        finally:
            if con is not None:
                con.close()
        return self.kill_after(0.0)

    def stderr(self) -> str:
        return self.err.read_text(encoding="utf-8", errors="replace") if self.err.exists() else ""

    def stdout(self) -> str:
        return self.out.read_text(encoding="utf-8") if self.out.exists() else ""


class Runner(Killable):
    """A fresh `python cli_runner.py` process: imports, says "ready", and starts on `go()`."""

    def __init__(self, args: list[str], tmp: Path, *, fake_embedder: bool = False, tag: str = "run") -> None:
        self.out = tmp / f"{tag}.out"
        self.err = tmp / f"{tag}.err"
        cmd = [sys.executable, str(RUNNER), "--out", str(self.out)]
        if fake_embedder:
            cmd.append("--fake-embedder")
        with self.err.open("wb") as err:
            self.proc = subprocess.Popen(
                [*cmd, "--", *args],
                cwd=REPO,
                env=runner_env(tmp),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
            )

    def go(self) -> None:
        assert self.proc.stdout is not None and self.proc.stdin is not None
        line = self.proc.stdout.readline()
        assert line.strip() == b"ready", f"runner did not start: {line!r} {self.stderr()}"
        self.proc.stdin.write(b"go\n")
        self.proc.stdin.close()
        self.proc.stdout.close()
        self.started = time.monotonic()

    def poll(self) -> int | None:
        return self.proc.poll()

    def _kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)


class Zygote:
    """One cli_runner.py process that has done every import and forks a child per command.

    A fresh CLI process spends ~0.6 s of CPU importing before it touches chat.db, which would make a
    20-kill series mostly start-up time; a forked child starts in milliseconds and is as separate a
    process as any for SIGKILL and SQLite's locks. The zygote reaps its children and writes each exit
    status to a file, since only a parent can wait for a process.
    """

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.n = 0
        env = runner_env(tmp)
        env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")  # no pools to fork
        self.proc = subprocess.Popen(
            [sys.executable, str(RUNNER), "--zygote"],
            cwd=REPO,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.strip() == b"ready", f"zygote did not start: {line!r}"

    def run(
        self,
        args: list[str],
        *,
        fake_embedder: bool = False,
        tag: str | None = None,
        kill_at_write: int | None = None,
        count_writes: bool = False,
    ) -> ForkedJob:
        """Fork a child running `memapp ARGS`. `kill_at_write=N`: it SIGKILLs itself just before its Nth
        write to a file SQLite writes; `count_writes`: `job.writes()` says how many it made (cli_runner.py)."""
        self.n += 1
        name = tag or f"job-{self.n}"
        job = ForkedJob(self.tmp / f"{name}.out", self.tmp / f"{name}.err", self.tmp / f"{name}.rc")
        request = {
            "argv": args,
            "out": str(job.out),
            "err": str(job.err),
            "rc": str(job.rc),
            "fake_embedder": fake_embedder,
            "kill_at_write": kill_at_write,
            "writes_out": str(job.writes_file) if count_writes else None,
        }
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write((json.dumps(request) + "\n").encode())
        self.proc.stdin.flush()
        job.pid = int(self.proc.stdout.readline())
        job.started = time.monotonic()
        return job

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        if self.proc.stderr is not None:
            self.proc.stderr.close()

    def __enter__(self) -> Zygote:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ForkedJob(Killable):
    def __init__(self, out: Path, err: Path, rc: Path) -> None:
        self.out, self.err, self.rc = out, err, rc
        self.writes_file = rc.with_suffix(".writes")
        self.pid = 0

    def writes(self) -> int:
        """How many writes the finished command made (run with `count_writes=True`)."""
        return int(self.writes_file.read_text())

    def poll(self) -> int | None:
        try:
            return int(self.rc.read_text())
        except (FileNotFoundError, ValueError):
            return None

    def _kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):  # it ended between the poll and the kill
            os.kill(self.pid, signal.SIGKILL)


def kill_at_a_write(
    zygote: Zygote, db: Path, args: list[str], rng: random.Random, *, fake_embedder: bool = True
) -> bool:
    """Run `memapp --db DB ARGS` on a copy of `db` to count the writes it makes, then on `db`, killed just
    before a seeded random one of them (cli_runner.py says why). True if the kill landed; False when the
    command writes nothing from this state."""
    probe = db.with_name("probe.db")
    for suffix in ("", "-wal"):
        if Path(f"{db}{suffix}").exists():
            shutil.copyfile(f"{db}{suffix}", f"{probe}{suffix}")
    counted = zygote.run(["--db", str(probe), *args], fake_embedder=fake_embedder, count_writes=True)
    assert counted.wait() in (0, 1), counted.stderr()
    total = counted.writes()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{probe}{suffix}").unlink(missing_ok=True)
    if total == 0:  # a no-op from this state (e.g. adding a memory that is already there): nothing to kill
        return False
    job = zygote.run(
        ["--db", str(db), *args], fake_embedder=fake_embedder, kill_at_write=rng.randint(1, total)
    )
    return job.wait() == -9


def count_kills(figures: dict[str, int], what: str, n: int) -> None:
    """Add `n` landed kills of `what` to the soak figures (tests/reliability/conftest.py)."""
    figures[f"kills survived ({what})"] = figures.get(f"kills survived ({what})", 0) + n


# -- invariants ---------------------------------------------------------------------------------------


def database_problems(store: Store) -> list[str]:
    """Everything that must hold in chat.db at any moment, even right after a SIGKILL."""
    problems = []
    integrity = store.integrity_check()
    if integrity != "ok":
        problems.append(f"integrity_check: {integrity}")
    problems += store.check_indexes()
    bad = store.con.execute(
        "SELECT t.id, t.message_count, count(m.id), t.token_count, coalesce(sum(m.token_count), 0) "
        "FROM threads t LEFT JOIN messages m ON m.thread_id = t.id GROUP BY t.id "
        "HAVING t.message_count != count(m.id) OR t.token_count != coalesce(sum(m.token_count), 0)"
    ).fetchall()
    problems += [
        f"thread {r[0]}: message_count {r[1]} but {r[2]} messages; token_count {r[3]} vs {r[4]}" for r in bad
    ]
    gaps = store.con.execute(
        "SELECT thread_id FROM messages GROUP BY thread_id HAVING max(seq) - min(seq) + 1 != count(*) "
        "OR min(seq) != 0"
    ).fetchall()
    problems += [f"thread {r[0]}: message seqs are not 0..n-1" for r in gaps]
    for fts, table, key in (
        ("fts_messages", "messages", "id"),
        ("fts_memories", "long_term_memories", "id"),
        ("fts_summaries", "thread_summaries", "thread_id"),
    ):
        stray = store.con.execute(  # type: ignore[index]
            f"SELECT count(*) FROM {fts} WHERE rowid NOT IN (SELECT {key} FROM {table})"
        ).fetchone()[0]
        if stray:
            problems.append(f"{fts} has {stray} rows for no {table} row")
    if store.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'vec_chunks'"):
        odd = store.con.execute(  # type: ignore[index]
            "SELECT (SELECT count(*) FROM vec_chunks WHERE chunk_id NOT IN (SELECT id FROM message_chunks)) + "
            "(SELECT count(*) FROM message_chunks WHERE id NOT IN (SELECT chunk_id FROM vec_chunks))"
        ).fetchone()[0]
        if odd:
            problems.append(f"{odd} chunk rows and chunk vectors do not pair up")
    unchunked = store.con.execute(  # type: ignore[index]
        "SELECT count(*) FROM message_chunks c LEFT JOIN messages m ON m.id = c.message_id WHERE m.id IS NULL"
    ).fetchone()[0]
    if unchunked:
        problems.append(f"{unchunked} message chunks point at no message")
    return problems


def thread_contents(store: Store, source: str) -> dict[str, list[str]]:
    """external_id -> message texts in order, for every thread of `source`."""
    out: dict[str, list[str]] = {}
    rows = store.con.execute(
        "SELECT t.external_id, m.content FROM threads t JOIN messages m ON m.thread_id = t.id "
        "WHERE t.source = ? ORDER BY t.id, m.seq",
        (source,),
    )
    for ext, content in rows:
        out.setdefault(ext, []).append(content)
    empty = store.con.execute(
        "SELECT external_id FROM threads t WHERE source = ? AND NOT EXISTS "
        "(SELECT 1 FROM messages m WHERE m.thread_id = t.id)",
        (source,),
    )
    for (ext,) in empty:
        out[ext] = []
    return out


# -- memory history -----------------------------------------------------------------------------------

TRACKED = ("content", "category", "importance", "pinned", "deleted")


def memory_state(store: Store, memory_id: int) -> dict[str, Any] | None:
    row = store.con.execute(
        "SELECT content, category, importance, pinned, deleted_at IS NOT NULL "
        "FROM long_term_memories WHERE id = ?",
        (memory_id,),
    ).fetchone()
    return (
        None
        if row is None
        else dict(zip(TRACKED, (row[0], row[1], row[2], bool(row[3]), bool(row[4])), strict=True))
    )


def apply_edit(state: dict[str, Any], op: str, value: Any) -> dict[str, Any]:
    """A memory_state after one step of cli_runner's edit loop."""
    changed = dict(state)
    if op in ("edit", "importance", "pin"):
        changed[{"edit": "content", "importance": "importance", "pin": "pinned"}[op]] = value
    elif op in ("rm", "restore"):
        changed["deleted"] = op == "rm"
    return changed


def history_problems(store: Store) -> list[str]:
    """Replay memory_history for every memory: each event's old values must be the state before it, and
    the replayed state must be the row as it is (or gone, after a purge). So every change is recorded
    with its old and new values, and nothing changed a memory without a history row."""
    problems: list[str] = []
    ids = {
        int(r[0])
        for r in store.con.execute(
            "SELECT id FROM long_term_memories UNION SELECT memory_id FROM memory_history"
        )
    }
    for mid in sorted(ids):
        state: dict[str, Any] | None = None
        for ev in store.memory_history(mid):
            old, new = ev.old or {}, ev.new or {}
            if ev.event == "add":
                if state is not None:
                    problems.append(f"memory {mid}: 'add' event for an id already in use")
                state = {
                    "content": new.get("content"),
                    "category": new.get("category"),
                    "importance": new.get("importance"),
                    "pinned": bool(new.get("pinned")),
                    "deleted": False,
                }
                continue
            if state is None:
                problems.append(f"memory {mid}: {ev.event} event before it was added")
                break
            if ev.event == "purge":
                if not state["deleted"] or state["pinned"]:
                    problems.append(f"memory {mid}: purged while {'pinned' if state['pinned'] else 'active'}")
                state = None
                continue
            for key, value in old.items():
                field_ = "deleted" if key == "deleted_at" else key
                before = value is not None if key == "deleted_at" else value
                if field_ in state and state[field_] != before:
                    problems.append(
                        f"memory {mid}: {ev.event} says old {key}={value!r}, but it was {state[field_]!r}"
                    )
            for key, value in new.items():
                if key == "deleted_at":
                    state["deleted"] = value is not None
                elif key in state:
                    state[key] = bool(value) if key == "pinned" else value
        actual = memory_state(store, mid)
        if actual != state:
            problems.append(f"memory {mid}: history replays to {state}, but the row is {actual}")
    return problems
