"""Issue 31.12: memory is bounded by the input's shape, not only by the file's size.

Each case runs `memapp import` in a child process under an address-space limit (RLIMIT_AS) set after a
warm-up import (so the limit is headroom above what the program itself needs), and checks that the
import ends with one clear line per part it could not read, imports everything else, and stays within
the limit. Before: a folder holding a `conversations.json` of NUL bytes was read whole before the error
(5.3 GB for 2 GB), and a single-line JSONL of tiny objects was parsed whole (2.1 GB for 200 MB) and
died, or stopped the file with "MemoryError". CI runs small files under a small limit; `make soak`
(MEMAPP_SOAK=1) runs the sizes of the report (2 GB of NUL, 200 MB lines) under 1.5 GB.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.processes import REPO, SOAK, no_embed_config, runner_env

pytestmark = pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="reads /proc (Linux)")

HEADROOM_MB = 1536 if SOAK else 300  # address space above the warmed-up program's own
LINE_MB = 200 if SOAK else 40
NUL_BYTES = 2 * 1024**3 if SOAK else 256 * 1024**2

CHILD = """
import contextlib, io, json, os, resource, sys
from pathlib import Path
from app.cli import main
headroom, db, config, path = int(sys.argv[1]) * 1024**2, *sys.argv[2:]
warm = Path(db).with_name("warm.jsonl")
warm.write_text('{"id": "w", "messages": [{"role": "user", "content": "warm up"}]}\\n')
with contextlib.redirect_stdout(io.StringIO()):
    main(["--db", db, "--config", config, "import", str(warm), "--json"])
vm = int(Path("/proc/self/statm").read_text().split()[0]) * os.sysconf("SC_PAGE_SIZE")
resource.setrlimit(resource.RLIMIT_AS, (vm + headroom, vm + headroom))
code = main(["--db", db, "--config", config, "import", path, "--json"])
# VmHWM, not ru_maxrss: that one also counts the parent's memory at the fork before this process began
hwm = [ln for ln in Path("/proc/self/status").read_text().splitlines() if ln.startswith("VmHWM:")]
rss = int(hwm[0].split()[1]) * 1024
print(json.dumps({"vm": vm, "peak_rss": rss}), file=sys.stderr)
sys.exit(code)
"""


def _import_under_limit(tmp: Path, path: Path) -> tuple[int, dict[str, Any], dict[str, int], str]:
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            CHILD,
            str(HEADROOM_MB),
            str(tmp / "chat.db"),
            str(no_embed_config(tmp)),
            str(path),
        ],
        capture_output=True,
        text=True,
        env=runner_env(tmp),
        cwd=REPO,
        timeout=900,
    )
    assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stdout + proc.stderr, proc.stderr[
        -3000:
    ]
    *_, last = proc.stderr.strip().splitlines() or [""]
    return proc.returncode, json.loads(proc.stdout), json.loads(last), proc.stderr


def _tiny_objects(n_bytes: int, item: str = '{"role": "user", "content": "x"}') -> str:
    return ",".join([item] * (n_bytes // (len(item) + 1)))


def _within_limit(memory: dict[str, int], figures: dict[str, int]) -> None:
    assert memory["peak_rss"] < memory["vm"] + HEADROOM_MB * 1024**2, memory
    figures["imports under a memory limit (hostile shapes)"] = (
        figures.get("imports under a memory limit (hostile shapes)", 0) + 1
    )


def _titles(tmp: Path) -> set[str]:
    from store import Store

    with Store(tmp / "chat.db", embedder=None) as store:
        return {t.external_id or "" for t in store.list_threads()} - {"w"}


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_a_huge_line_of_tiny_objects_is_refused_and_the_rest_imported(
    tmp_path: Path, suffix: str, figures: dict[str, int]
) -> None:
    path = tmp_path / f"threads{suffix}"
    big = '{"id": "big", "messages": [' + _tiny_objects(LINE_MB * 1024**2) + "]}"
    first = '{"id": "before", "messages": [{"role": "user", "content": "before"}]}'
    last = '{"id": "after", "messages": [{"role": "user", "content": "after"}]}'
    with path.open("w", encoding="utf-8") as fp:
        if suffix == ".jsonl":
            fp.write(f"{first}\n{big}\n{last}\n")
        else:
            fp.write(f"[{first}, {big}, {last}]")
    code, report, memory, _ = _import_under_limit(tmp_path, path)
    assert code == 1 and report["threads_added"] == 2, report
    [error] = report["errors"]
    assert error["conversation"] in ("line 2", "thread 1") and "memory" in error["error"], error
    assert _titles(tmp_path) == {"before", "after"}
    _within_limit(memory, figures)


def test_a_folder_with_a_conversations_json_of_nul_bytes_is_refused_at_once(
    tmp_path: Path, figures: dict[str, int]
) -> None:
    folder = tmp_path / "export"
    folder.mkdir()
    with (folder / "conversations.json").open("wb") as fp:
        fp.truncate(NUL_BYTES)  # sparse: NUL bytes that cost no disk
    (folder / "chat.html").write_text("<html></html>", encoding="utf-8")
    code, report, memory, _ = _import_under_limit(tmp_path, folder)
    assert code == 1 and report["threads_added"] == 0
    [error] = report["errors"]
    assert "invalid JSON at character 0" in error["error"], error
    _within_limit(memory, figures)
    assert memory["peak_rss"] < memory["vm"] + 64 * 1024**2  # it was not read


def test_a_session_line_of_tiny_objects_is_refused_and_the_session_imported(
    tmp_path: Path, figures: dict[str, int]
) -> None:
    session = "7d3e9a10-2b4c-4d5e-8f60-718293a4b5c6"

    def line(uuid: str, content: str) -> str:
        return (
            f'{{"parentUuid": null, "isSidechain": false, "sessionId": "{session}", "type": "user", '
            f'"uuid": "{uuid}", "timestamp": "2025-10-02T09:00:00Z", "message": {{"role": "user", '
            f'"content": {content}}}}}'
        )

    path = tmp_path / f"{session}.jsonl"
    with path.open("w", encoding="utf-8") as fp:
        fp.write(line("u1", '"before"') + "\n")
        fp.write(
            line("u2", "[" + _tiny_objects(LINE_MB * 1024**2, '{"type": "text", "text": "x"}') + "]") + "\n"
        )
        fp.write(line("u3", '"after"') + "\n")
    code, report, memory, _ = _import_under_limit(tmp_path, path)
    assert code == 1 and report["messages_added"] == 2, report
    [error] = report["errors"]
    assert "memory" in error["error"], error
    _within_limit(memory, figures)
    assert os.path.getsize(path) > LINE_MB * 1024**2 * 0.9
