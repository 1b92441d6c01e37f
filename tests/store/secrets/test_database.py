"""`memapp secrets scan` / `redact` on a chat.db filled with `[privacy] redact = "off"` (or before
redaction existed): counts without values, then a rewrite of every text column with its indexes, history
and vectors, idempotent; and the commands themselves, end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from store import Store
from store.config import Config, PrivacyConfig
from store.extract.summaries import summarize_thread
from store.records import MessageIn, ThreadIn
from store.secrets.database import redact_database, scan
from tests.reliability.invariants import database_problems, history_problems
from tests.store.secrets.test_entry import ANT, AWS, GH, PW, Recorder, _thread_with_secrets, dump


def _filled(path: Path) -> Store:
    s = Store(path, embedder=Recorder(), config=Config(privacy=PrivacyConfig(redact="off")))
    tid = s.write_thread(_thread_with_secrets()).thread_id
    s.write_thread(ThreadIn("jsonl", "clean", "groceries", [MessageIn("user", "buy apples and pears", "c1")]))
    m = s.add_memory(f"My GitHub token is {GH}", "fact").memory
    s.edit_memory(m.id, content=f"My GitHub token is {GH}, the old one was revoked")
    s.add_memory("I like tea", "preference")
    summarize_thread(s, tid, use_model=False)
    return s


def test_scan_counts_by_kind_table_thread_and_month_and_never_shows_a_value(tmp_path: Path) -> None:
    s = _filled(tmp_path / "chat.db")
    try:
        report = scan(s).to_json()
        text = json.dumps(report)
        for value in (AWS, GH, ANT, PW):
            assert value not in text
        assert report["by_kind"]["github-token"] >= 3  # the message, the memory and its history
        # the AWS key is in the title shown and in the title the export gave (threads.source_title)
        assert report["by_kind"]["aws-access-key"] == 2 and report["by_kind"]["anthropic-key"] == 1
        assert "memory_history.new" in report["by_table"] and "messages.metadata" in report["by_table"]
        [top] = [t for t in report["by_thread"] if t["thread_id"] == 1]
        assert top["title"] == "deploy with [secret: aws-access-key]"  # the title as it will read
        assert sum(report["by_month"].values()) == report["secrets"]
    finally:
        s.close()


def test_redact_rewrites_rows_history_index_and_vectors_and_a_rerun_finds_nothing(tmp_path: Path) -> None:
    s = _filled(tmp_path / "chat.db")
    try:
        embedder = s.embedder
        assert isinstance(embedder, Recorder)
        before_messages = s.stats()["messages"]
        embedder.seen.clear()
        report = redact_database(s)
        assert report.secrets == scan_total(report)
        assert report.messages_to_embed >= 1 and report.memories_to_embed == 1
        dumped = dump(s)
        for value in (AWS, GH, ANT, PW):
            assert value not in dumped and value[:12] not in dumped.lower()
        assert not any(GH in t for t in embedder.seen)
        assert database_problems(s) == [] and history_problems(s) == []
        # re-embedded from the redacted text: nothing is missing a vector
        assert s.stats()["messages"] == before_messages
        assert not s.messages_missing_vectors(10) and not s.memories_missing_vectors(10)
        m = s.list_memories(category="fact")[0]
        assert m.content == "My GitHub token is [secret: github-token], the old one was revoked"
        again = redact_database(s)
        assert again.secrets == 0 and scan(s).secrets == 0
    finally:
        s.close()


def scan_total(report: object) -> int:
    return sum(getattr(report, "by_kind").values())  # noqa: B009


def test_the_commands_report_and_rewrite(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    _filled(db).close()
    cfg = tmp_path / "c.toml"
    cfg.write_text("[embedding]\nenabled = false\n")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "app", "--db", str(db), "--config", str(cfg), "secrets", *args],
            capture_output=True,
            text=True,
            timeout=120,
        )

    human = run("scan")
    assert human.returncode == 0, human.stderr
    assert "secrets in" in human.stdout and "github-token" in human.stdout and GH not in human.stdout
    as_json = json.loads(run("scan", "--json").stdout)
    assert as_json["secrets"] >= 6
    done = run("redact", "--no-embed")
    assert done.returncode == 0 and "replaced" in done.stdout and "memapp embed" in done.stdout
    assert json.loads(run("scan", "--json").stdout)["secrets"] == 0
    assert "nothing to rewrite" in run("redact").stdout
    missing = tmp_path / "nope.db"
    out = subprocess.run(
        [sys.executable, "-m", "app", "--db", str(missing), "secrets", "scan"], capture_output=True, text=True
    )
    assert out.returncode == 2 and "no database" in out.stderr and not missing.exists()
