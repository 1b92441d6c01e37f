"""Promise 2, concurrency: searching, importing and editing at once on one chat.db loses nothing.

Three kinds of real `memapp` processes (`python -m app …`) run together for a while (about 8 s in CI,
30 s with MEMAPP_SOAK=1 or -m soak):
- a reader: `memapp search --batch -`, fed queries as fast as it answers; every memory it returns
  counts as one access (an UPDATE per search, competing for the write lock);
- importers: `memapp import` of one generated export after another;
- an editor: `memapp memory edit/add/pin` processes one after another, and a second editor that runs
  the same CLI code (`app.cli.main`) in a loop in one process (cli_runner.py's edit loop), for many more
  write transactions than process start-up allows.

Then: every process exited 0 with nothing on stderr (so no "database is locked" reached anyone), every
search answered without an error line, each memory's access_count equals the number of times the reader
was shown it, every acknowledged edit is in the row and in memory_history, every import's threads are
all there, and chat.db passes its integrity and index checks.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import apsw
import pytest

from app.cli import main
from store import Store
from tests.reliability.generated_exports import conversation_texts, write_generic
from tests.reliability.invariants import (
    apply_edit,
    database_problems,
    history_problems,
    memory_state,
    thread_contents,
)
from tests.reliability.processes import REPO, Runner, no_embed_config, runner_env

# serial: several processes on one chat.db, with busy timeouts
pytestmark = [pytest.mark.soak, pytest.mark.serial]

QUERIES = ["garden", "sqlite backup", "rust", "tea coffee", "marathon", "memory", "note", "timer"]
TOPICS = ["garden", "sqlite backup", "rust borrow checker", "tea over coffee", "marathon training", "timer"]


class Memapp:
    """Runs `python -m app --db DB --config CFG …` and keeps what every process said."""

    def __init__(self, db: Path, config: Path, tmp: Path) -> None:
        self.base = [sys.executable, "-m", "app", "--db", str(db), "--config", str(config)]
        self.env = runner_env(tmp)
        self.failures: list[str] = []
        self.lock = threading.Lock()

    def run(self, *args: str) -> Any:
        proc = subprocess.run(
            [*self.base, *args], cwd=REPO, env=self.env, capture_output=True, text=True, timeout=120
        )
        if proc.returncode != 0 or proc.stderr:
            with self.lock:
                self.failures.append(f"{' '.join(args)[:80]}: exit {proc.returncode}: {proc.stderr[-2000:]}")
            return None
        return json.loads(proc.stdout) if "--json" in args else proc.stdout


def _reader(app: Memapp, deadline: float, shown: Counter[int], answers: list[int]) -> None:
    """One `search --batch -` process, one query in flight at a time, until the deadline."""
    proc = subprocess.Popen(
        [*app.base, "search", "--batch", "-", "-k", "10"],
        cwd=REPO,
        env=app.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        bufsize=1,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    n = 0
    while time.monotonic() < deadline:
        proc.stdin.write(json.dumps({"query": QUERIES[n % len(QUERIES)]}) + "\n")
        proc.stdin.flush()
        line = proc.stdout.readline()
        if not line:
            break
        out = json.loads(line)
        if "error" in out:
            app.failures.append(f"search answered an error: {out}")
            break
        shown.update(r["id"] for r in out["results"] if r["kind"] == "memory")
        n += 1
    proc.stdin.close()
    rest = proc.stdout.read()
    err = proc.stderr.read()
    code = proc.wait(timeout=60)
    proc.stdout.close()
    proc.stderr.close()
    if code != 0 or err or rest.strip():
        app.failures.append(f"reader: exit {code}: {err[-2000:]} {rest[:200]}")
    answers.append(n)


def _importer(app: Memapp, tmp: Path, deadline: float, imported: dict[str, list[str]]) -> None:
    n = 0
    while time.monotonic() < deadline:
        spec = conversation_texts(1000 + n, 40, 20)
        path = write_generic(tmp / f"import-{n}.json", spec)
        report = app.run("import", str(path), "--no-embed", "--json")
        if report is None:
            return
        if report["threads_added"] != 40 or report["messages_added"] != spec.messages:
            app.failures.append(f"import {n}: {report}")
        imported.update(spec.by_id())
        n += 1


def _editor(app: Memapp, ids: list[int], deadline: float, expected: dict[int, dict[str, Any]]) -> None:
    n = 0
    while time.monotonic() < deadline:
        mid = ids[n % len(ids)]
        if n % 5 == 4:
            shown = app.run("memory", "pin" if n % 10 == 4 else "unpin", str(mid), "--json")
            key, value = "pinned", n % 10 == 4
        elif n % 7 == 6:
            shown = app.run("memory", "add", f"added while busy, number {n}", "-c", "fact", "--json")
            if shown is not None:
                expected[shown["id"]] = {"content": shown["content"], "pinned": False}
            n += 1
            continue
        else:
            value = f"edited while busy, step {n}: {TOPICS[n % len(TOPICS)]} note"  # type: ignore[assignment]
            shown = app.run("memory", "edit", str(mid), "--text", value, "--json")  # type: ignore[arg-type]
            key = "content"
        if shown is None:
            return
        expected[mid][key] = value
        n += 1


def test_search_import_and_edits_at_once(tmp_path: Path, soak: bool, figures: dict[str, int]) -> None:
    db = tmp_path / "chat.db"
    config = no_embed_config(tmp_path)
    with Store(db, embedder=None) as store:
        ids = [
            store.add_memory(f"memory {i} about {TOPICS[i % len(TOPICS)]} note", "fact").memory.id
            for i in range(24)
        ]
        expected: dict[int, dict[str, Any]] = {
            i: {"content": store.get_memory(i).content, "pinned": False} for i in ids[:12]
        }
    app = Memapp(db, config, tmp_path)
    seconds = 30.0 if soak else 8.0
    journal = tmp_path / "journal.jsonl"
    loop = Runner(
        ["@edit-loop", str(db), str(config), str(journal), "7", str(seconds), ",".join(map(str, ids[12:]))],
        tmp_path,
        tag="edit-loop",
    )
    with Store(db, embedder=None) as store:
        loop_model = {i: memory_state(store, i) for i in ids[12:]}
    loop.go()
    deadline = time.monotonic() + seconds
    shown: Counter[int] = Counter()
    answers: list[int] = []
    imported: dict[str, list[str]] = {}
    workers = [
        threading.Thread(target=_reader, args=(app, deadline, shown, answers)),
        threading.Thread(target=_importer, args=(app, tmp_path, deadline, imported)),
        threading.Thread(target=_editor, args=(app, ids[:12], deadline, expected)),
    ]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=seconds + 180)
    assert loop.wait(timeout=180) == 0 and loop.stderr() == "", loop.stderr()
    assert not app.failures, "\n".join(app.failures)
    steps = [json.loads(line) for line in journal.read_text().splitlines()]
    done = [s["done"] for s in steps if "done" in s]
    assert len(done) == len(steps) / 2 > 20, f"the edit loop made only {len(done)} edits"
    for step in done:
        loop_model[step["id"]] = apply_edit(loop_model[step["id"]], step["op"], step["value"])  # type: ignore[arg-type]
    assert answers and answers[0] > 20, f"the reader answered only {answers} searches"
    assert imported, "no import finished"
    with Store(db, embedder=None) as store:
        assert database_problems(store) == []
        assert history_problems(store) == []
        counts = {
            int(i): int(n) for i, n in store.con.execute("SELECT id, access_count FROM long_term_memories")
        }
        assert sum(counts.values()) == sum(shown.values())
        assert counts == {mid: shown.get(mid, 0) for mid in counts}, "an access-count increment was lost"
        for mid, want in expected.items():
            m = store.get_memory(mid)
            assert (m.content, m.pinned) == (want["content"], want["pinned"]), (
                f"memory {mid}: an edit was lost"
            )
        for mid, state in loop_model.items():
            assert memory_state(store, mid) == state, f"memory {mid}: an edit of the loop was lost"
        assert thread_contents(store, "generic") == imported
    figures["concurrent seconds (search + import + 2 editors)"] = figures.get(
        "concurrent seconds (search + import + 2 editors)", 0
    ) + int(seconds)
    figures["concurrent edits and access increments checked"] = (
        figures.get("concurrent edits and access increments checked", 0) + len(done) + sum(shown.values())
    )
    figures["lost updates"] = figures.get("lost updates", 0)  # every one is asserted above: 0 or a failure


def test_a_lock_held_past_the_timeout_is_a_message_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """If another process keeps the write lock longer than the busy timeout (15 s; 0.2 s here), the
    command stops with one line saying so and exit 1; it used to end in an apsw.BusyError traceback."""
    db = tmp_path / "chat.db"
    Store(db, embedder=None).close()
    monkeypatch.setattr("store.db.BUSY_TIMEOUT_MS", 200)
    holder = apsw.Connection(str(db))
    holder.execute("BEGIN IMMEDIATE")
    try:
        code = main(
            [
                "--db",
                str(db),
                "--config",
                str(no_embed_config(tmp_path)),
                "memory",
                "add",
                "blocked",
                "-c",
                "fact",
            ]
        )
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    err = capsys.readouterr().err
    assert code == 1
    assert "stayed locked by another memapp process for more than 0.2 s" in err and "Traceback" not in err
    with Store(db, embedder=None) as store:
        assert store.list_memories() == []


def test_the_same_memory_added_by_six_processes_at_once_is_one_memory(tmp_path: Path) -> None:
    """Issue 20, D6: six concurrent `memory add` of one text (no model) made six copies; the exact-duplicate
    check is now repeated under the write lock."""
    db = tmp_path / "chat.db"
    config = no_embed_config(tmp_path)
    with Store(db, embedder=None):
        pass
    base = [sys.executable, "-m", "app", "--db", str(db), "--config", str(config)]
    procs = [
        subprocess.Popen(
            [*base, "memory", "add", "I keep spare keys in the blue tin", "--category", "fact", "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=REPO,
            text=True,
        )
        for _ in range(6)
    ]
    results = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in results]
    actions = sorted(json.loads(out)["action"] for out, _ in results)
    assert actions == ["added"] + ["exists"] * 5
    with Store(db, embedder=None) as store:
        assert len(store.list_memories(limit=100)) == 1
