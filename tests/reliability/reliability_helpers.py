"""Shared by the reliability tests: generated exports, a killable CLI process, and the invariants of chat.db.

Why a runner process instead of `python -m app …` each time: a CLI process spends ~0.6 s importing
before it touches the database, so a kill at a random moment would mostly hit the imports. The runner
(cli_runner.py) does those imports, says "ready", and waits for "go" before calling the same
`app.cli.main` that `memapp` runs; the next process is started while the current one works, so CI pays
the start-up cost once per kill in parallel instead of serially.

A plain module with a unique name (not conftest.py), imported directly by the test files, like
tests/importers/import_helpers.py.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

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


_WORDS = ("sqlite wal checkpoint vector index embedding import thread memory summary garden bread "
          "rust python backup restic timer coffee tea lisbon marathon budget invoice textual widget "
          "pilot snapshot cosine token chunk merge pinned trash cleanup decay recall").split()


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n)).capitalize() + "."


def conversation_texts(seed: int, n_threads: int, per_thread: int) -> ExportSpec:
    rng = random.Random(seed)
    spec = ExportSpec()
    for t in range(n_threads):
        n = max(2, per_thread + rng.randint(-per_thread // 2, per_thread // 2))
        texts = [f"[{t}:{i}] " + " ".join(_sentence(rng, rng.randint(5, 18)) for _ in range(rng.randint(1, 4)))
                 for i in range(n)]
        spec.threads.append((f"conv-{seed}-{t:05d}", texts))
    return spec


def write_chatgpt(path: Path, spec: ExportSpec) -> Path:
    """A ChatGPT `conversations.json`: each conversation a linear mapping tree, user/assistant turns."""
    convs = []
    for conv_id, texts in spec.threads:
        mapping: dict[str, Any] = {"root": {"id": "root", "message": None, "parent": None, "children": []}}
        parent = "root"
        t0 = 1_700_000_000.0 + len(convs) * 1000
        for i, text in enumerate(texts):
            node = f"{conv_id}-n{i}"
            mapping[parent]["children"].append(node)
            mapping[node] = {
                "id": node, "parent": parent, "children": [],
                "message": {"id": node, "author": {"role": "user" if i % 2 == 0 else "assistant"},
                            "create_time": t0 + i, "content": {"content_type": "text", "parts": [text]},
                            "status": "finished_successfully", "metadata": {}},
            }
            parent = node
        convs.append({"id": conv_id, "title": f"Conversation {conv_id}", "create_time": t0,
                      "update_time": t0 + len(texts), "current_node": parent, "mapping": mapping})
    path.write_text(json.dumps(convs), encoding="utf-8")
    return path


def write_generic(path: Path, spec: ExportSpec) -> Path:
    """The documented generic JSON list: `[{"id", "title", "messages": [{"id", "role", "content"}]}]`."""
    threads = [{"id": conv_id, "title": f"Thread {conv_id}",
                "messages": [{"id": f"{conv_id}-m{i}", "role": "user" if i % 2 == 0 else "assistant",
                              "content": text, "created_at": 1_700_000_000 + i} for i, text in enumerate(texts)]}
               for conv_id, texts in spec.threads]
    path.write_text(json.dumps(threads), encoding="utf-8")
    return path


# -- killable CLI processes ------------------------------------------------------------------------


class Runner:
    """A cli_runner.py process that has done its imports and waits for `go()`."""

    def __init__(self, args: list[str], tmp: Path, *, fake_embedder: bool = False, tag: str = "run") -> None:
        self.out = tmp / f"{tag}.out"
        self.err = tmp / f"{tag}.err"
        cmd = [sys.executable, str(RUNNER), "--out", str(self.out)]
        if fake_embedder:
            cmd.append("--fake-embedder")
        self._err_fp = self.err.open("wb")
        self.proc = subprocess.Popen([*cmd, "--", *args], cwd=REPO, env=runner_env(tmp), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self._err_fp)
        self.started: float | None = None

    def go(self) -> None:
        assert self.proc.stdout is not None and self.proc.stdin is not None
        line = self.proc.stdout.readline()
        assert line.strip() == b"ready", f"runner did not start: {line!r} {self.stderr()}"
        self.proc.stdin.write(b"go\n")
        self.proc.stdin.flush()
        self.started = time.monotonic()

    def kill_after(self, delay: float) -> bool:
        """SIGKILL `delay` seconds after go(). True if the process was still running (a real kill)."""
        assert self.started is not None
        try:
            self.proc.wait(timeout=max(0.0, self.started + delay - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()
            self._close()
            return True
        self._close()
        return False

    def wait(self, timeout: float = 300) -> int:
        code = self.proc.wait(timeout=timeout)
        self._close()
        return code

    def discard(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._close()

    def _close(self) -> None:
        for fp in (self.proc.stdin, self.proc.stdout):
            if fp is not None and not fp.closed:
                try:
                    fp.close()
                except BrokenPipeError:
                    pass
        self._err_fp.close()

    def stderr(self) -> str:
        self._err_fp.flush()
        return self.err.read_text(encoding="utf-8", errors="replace")

    def stdout(self) -> str:
        return self.out.read_text(encoding="utf-8") if self.out.exists() else ""


class KillSeries:
    """Runs the same command again and again, each process started while the previous one works."""

    def __init__(self, args: list[str], tmp: Path, *, fake_embedder: bool = False) -> None:
        self.args = args
        self.tmp = tmp
        self.fake = fake_embedder
        self.n = 0
        self._next: Runner | None = None

    def start(self) -> Runner:
        runner = self._next or self._spawn()
        runner.go()
        self._next = self._spawn()
        return runner

    def _spawn(self) -> Runner:
        self.n += 1
        return Runner(self.args, self.tmp, fake_embedder=self.fake, tag=f"run-{self.n}")

    def close(self) -> None:
        if self._next is not None:
            self._next.discard()
            self._next = None


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
        "HAVING t.message_count != count(m.id) OR t.token_count != coalesce(sum(m.token_count), 0)").fetchall()
    problems += [f"thread {r[0]}: message_count {r[1]} but {r[2]} messages; token_count {r[3]} vs {r[4]}"
                 for r in bad]
    gaps = store.con.execute(
        "SELECT thread_id FROM messages GROUP BY thread_id HAVING max(seq) - min(seq) + 1 != count(*) "
        "OR min(seq) != 0").fetchall()
    problems += [f"thread {r[0]}: message seqs are not 0..n-1" for r in gaps]
    unchunked = store.con.execute(
        "SELECT count(*) FROM message_chunks c LEFT JOIN messages m ON m.id = c.message_id "
        "WHERE m.id IS NULL").fetchone()[0]
    if unchunked:
        problems.append(f"{unchunked} message chunks point at no message")
    return problems


def thread_contents(store: Store, source: str) -> dict[str, list[str]]:
    """external_id -> message texts in order, for every thread of `source`."""
    out: dict[str, list[str]] = {}
    rows = store.con.execute(
        "SELECT t.external_id, m.content FROM threads t JOIN messages m ON m.thread_id = t.id "
        "WHERE t.source = ? ORDER BY t.id, m.seq", (source,))
    for ext, content in rows:
        out.setdefault(ext, []).append(content)
    empty = store.con.execute(
        "SELECT external_id FROM threads t WHERE source = ? AND NOT EXISTS "
        "(SELECT 1 FROM messages m WHERE m.thread_id = t.id)", (source,))
    for (ext,) in empty:
        out[ext] = []
    return out


def read_lines(fp: IO[str]) -> list[str]:
    return [line for line in fp.read().splitlines() if line.strip()]
