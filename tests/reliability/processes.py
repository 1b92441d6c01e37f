"""Killable `memapp` processes for the reliability tests, and the environment they run in.

Why a runner process instead of `python -m app …` each time: a CLI process spends ~0.6 s importing
before it touches the database, so a kill at a random moment would mostly hit the imports. The runner
(cli_runner.py) does those imports, says "ready", and waits for "go" before calling the same
`app.cli.main` that `memapp` runs; the next process is started while the current one works, so CI pays
the start-up cost once per kill in parallel instead of serially. For series of many kills a Zygote
forks each command from one process that has done every import.

The reliability helpers are plain modules with unique names (not conftest.py), imported directly by the
test files, like tests/store/importing/formats/import_helpers.py: this one runs and kills processes,
generated_exports.py writes the files they import, invariants.py checks chat.db afterwards.
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
from pathlib import Path

import apsw

REPO = Path(__file__).resolve().parents[2]
RUNNER = Path(__file__).resolve().parent / "cli_runner.py"
SOAK = os.environ.get("MEMAPP_SOAK", "") not in ("", "0")


def no_embed_config(directory: Path) -> Path:
    """A config that never loads a model (keyword search only): CLI processes start in ~0.6 s."""
    path = directory / "no-embed.toml"
    path.write_text("[embedding]\nenabled = false\n", encoding="utf-8")
    return path


def end(proc: subprocess.Popen[bytes], timeout: float = 30) -> None:
    """Close the process's stdin (a zygote's or an MCP server's cue to finish), wait for it, and kill it
    if it does not end within `timeout` seconds."""
    if proc.stdin is not None:
        proc.stdin.close()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def runner_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMAPP_")}
    env["PYTHONPATH"] = str(REPO)
    env["MEMAPP_CONFIG"] = str(tmp / "absent-config.toml")
    env["MEMAPP_DB"] = str(tmp / "absent-chat.db")
    env["HF_HUB_OFFLINE"] = "1"
    env["MEMAPP_STRICT_WRITES"] = "1"  # a write that skips the write lock fails (store/writelock.py)
    return env


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
                except apsw.SQLError:  # the table is not there yet; a connection that read the empty
                    value = None  # schema keeps answering from its cache: open a new one next time
                    if con is not None:
                        con.close()
                        con = None
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

    def __init__(self, tmp: Path, env_extra: dict[str, str] | None = None) -> None:
        self.tmp = tmp
        self.n = 0
        env = {**runner_env(tmp), **(env_extra or {})}
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
        stdin: Path | None = None,
        kill_around: tuple[str, str] | None = None,
    ) -> ForkedJob:
        """Fork a child running `memapp ARGS`. `kill_at_write=N`: it SIGKILLs itself just before its Nth
        write to a file SQLite writes; `count_writes`: `job.writes()` says how many it made (cli_runner.py);
        `stdin`: a file the child reads as its standard input (e.g. a new passphrase); `kill_around=("before"
        or "after", "module:function")`: it SIGKILLs itself at that call (a step that is no SQLite write)."""
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
            "stdin": str(stdin) if stdin is not None else None,
            "kill_around": list(kill_around) if kill_around else None,
        }
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write((json.dumps(request) + "\n").encode())
        self.proc.stdin.flush()
        job.pid = int(self.proc.stdout.readline())
        job.started = time.monotonic()
        return job

    def close(self) -> None:
        end(self.proc)
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
