"""bench/ stays a working package: every module imports, `python -m bench --list` names every benchmark,
nothing patches sys.path, and no file names a bench script that is not there.

The benchmarks themselves are too slow for CI; these checks are what catches a renamed helper, a broken
import or a stale `bench/....py` in the docs before someone runs one. About 3 s: one child process imports
every module (numpy, the store, Textual), another lists the benchmarks.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Every module under bench/ except the evaluation data's own generators (bench/eval/*/make.py are run by
# the tests of their data), found by walking the package so a new module is covered without being listed.
_IMPORT_ALL = """
import importlib, pkgutil
import bench

names = [m.name for m in pkgutil.walk_packages(bench.__path__, "bench.") if not m.name.startswith("bench.eval")]
for name in names:
    try:
        importlib.import_module(name)
    except BaseException as exc:
        print("FAILED", name, type(exc).__name__, exc)
print("imported", len(names))
"""


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_every_bench_module_imports() -> None:
    done = _run("-c", _IMPORT_ALL)
    assert done.returncode == 0, done.stderr
    assert "FAILED" not in done.stdout, done.stdout
    assert int(done.stdout.split()[-1]) >= 30, done.stdout  # lib, perf, quality, tune, report, __main__


def test_list_names_every_runnable_module_with_its_docstring() -> None:
    done = _run("-m", "bench", "--list")
    assert done.returncode == 0, done.stderr
    listed = {line.split()[0]: line for line in done.stdout.splitlines()}
    runnable = {
        path.stem
        for group in ("perf", "quality", "tune")
        for path in (ROOT / "bench" / group).glob("*.py")
        if '__name__ == "__main__"' in path.read_text(encoding="utf-8")
    }
    assert set(listed) == runnable | {"report"}
    assert {"search", "eval_search", "eval_truth", "tune_search", "redaction"} <= set(listed)
    # each line carries the module's one-line description, not just its name
    assert all(len(line.split(maxsplit=2)) == 3 for line in listed.values()), done.stdout


def test_an_unknown_name_is_one_clear_line() -> None:
    done = _run("-m", "bench", "no_such_bench")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "bench: no benchmark named 'no_such_bench' (`python -m bench --list` names them)"
    ]


def test_no_file_under_bench_patches_sys_path() -> None:
    patched = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "bench").rglob("*.py")
        if "sys.path" in path.read_text(encoding="utf-8")
    ]
    assert patched == []


# `bench/perf/search.py`, `bench/eval/secrets/make.py`: any path to a Python file under bench/.
BENCH_PATH = re.compile(r"\bbench/[\w/]+\.py\b")


def _text_files() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "Makefile", *(ROOT / "docs").rglob("*.md")]
    for top in ("app", "store", "embeddings", "tests", "bench"):
        files += (ROOT / top).rglob("*.py")
    files += (ROOT / "bench").rglob("*.md")
    return [f for f in files if f.is_file()]


def test_every_bench_path_named_in_code_and_docs_exists() -> None:
    stale = sorted(
        f"{path.relative_to(ROOT)}: {name}"
        for path in _text_files()
        for name in set(BENCH_PATH.findall(path.read_text(encoding="utf-8")))
        if not (ROOT / name).is_file()
    )
    assert stale == []


def test_report_writes_its_table_between_the_markers_and_keeps_the_prose(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from bench import report
    from bench.lib.common import machine

    out = tmp_path / "out"
    out.mkdir()
    result = {
        "date": "2026-11-28",
        "machine": machine(),
        "threads": 50,
        "messages_per_thread": 200,
        "reimport_write_thread_ms": 20.0,
        "reimport_statements": 100,
        "reimport_plus_all_messages_check_ms": 140.0,
        "target_ms": 25,
    }
    (out / "reimport.json").write_text(json.dumps(result))
    page = tmp_path / "summary.md"
    page.write_text("Prose before.\n\n<!-- bench:start -->\nold table\n<!-- bench:end -->\n\nProse after.\n")
    monkeypatch.setattr(report, "OUT", out)
    monkeypatch.setattr(report, "SUMMARY", page)
    assert report.main(["--write"]) == 0
    written = page.read_text()
    assert written.startswith("Prose before.\n\n<!-- bench:start -->\nMeasured 2026-11-28")
    assert "| Re-import of 50 unchanged threads x 200 messages | 20.0 ms, 100 SQL statements |" in written
    assert "| 7.0x | <= 25 ms | yes |" in written and "old table" not in written
    assert written.endswith("<!-- bench:end -->\n\nProse after.\n")
    assert "(not run: search, import" in capsys.readouterr().out


def test_the_summary_page_has_the_markers_report_writes_between() -> None:
    from bench import report

    assert report.MARKERS.search(report.SUMMARY.read_text(encoding="utf-8"))
