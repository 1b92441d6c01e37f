"""TUI start-up: process start to first painted screen, against a minimal Textual app; prints JSON.

    .venv/bin/python -m bench startup [--runs 7 | --quick]

Both apps run as fresh processes on a pseudo-terminal (120x40, so Textual uses its real Linux driver and
writes real escape codes), started the way `memapp --db chat.db` starts. A hook installed before the
app is imported notes the moment Textual's `Ready` event arrives (it is posted right after the first
frame has been written to the terminal) and whether torch or sentence-transformers were imported by
then; memapp also notes when the Threads table shows its first rows, and then exits. The chat.db has
100,000 messages in 5,000 threads and 10,000 memories. Runs alternate between the two apps, after one
warm-up run of each (disk caches, and the bytecode: PYTHONDONTWRITEBYTECODE is not passed on).

A last run keeps memapp open until the embedding model has loaded in its worker, idles three seconds,
and reports resident memory (issue 19 target: <= 400 MiB, torch never imported: onnxruntime encodes).

Target (issue 7): memapp's first paint <= 1.5x the minimal app's; the model not loaded before it.
"""

from __future__ import annotations

import json
import os
import sys
import time

CHILD = len(sys.argv) > 2 and sys.argv[1] == "--child"


def _hook(kind: str, out_path: str) -> None:
    """In the child, before the app is imported: record first paint, then exit (or idle, then exit)."""
    t0 = float(os.environ["BENCH_T0"])
    from textual import events
    from textual.app import App

    result: dict[str, object] = {}
    original = App.on_event

    async def on_event(self: App[object], event: events.Event) -> None:
        if isinstance(event, events.Ready) and "first_paint_s" not in result:
            result["first_paint_s"] = time.monotonic() - t0
            result["model_modules_at_paint"] = sorted(
                m for m in ("torch", "sentence_transformers") if m in sys.modules
            )
            self.set_interval(0.005, lambda: _poll(self))
        await original(self, event)

    def _poll(app: App[object]) -> None:
        if kind == "memapp" and "threads_listed_s" not in result:
            tables = app.screen.query("#threads-table")
            if tables and getattr(tables.first(), "row_count", 0) > 0:
                result["threads_listed_s"] = time.monotonic() - t0
        done = kind != "memapp" or "threads_listed_s" in result
        if kind == "idle":
            status = getattr(app, "status", None)
            if getattr(status, "semantic", "") == "ready" and "model_ready_s" not in result:
                result["model_ready_s"] = time.monotonic() - t0
                app.set_timer(3.0, lambda: _finish(app))
            return
        if done or time.monotonic() - t0 > 30:
            _finish(app)

    def _finish(app: App[object]) -> None:
        with open("/proc/self/status") as fh:
            status = fh.read().splitlines()
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                result["rss_mib" if key == "VmRSS" else "peak_rss_mib"] = int(value.split()[0]) / 1024
        result["torch_imported"] = "torch" in sys.modules
        store = getattr(app, "_store", None)
        if store is not None and hasattr(store, "vector_memory_bytes"):
            result["held_vector_bytes"] = store.vector_memory_bytes()
            result["held_keyword_bytes"] = store.keyword_memory_bytes()
            result["embedder_backend"] = getattr(store.embedder, "backend", None)
        with open(out_path, "w") as fh:
            json.dump(result, fh)
        app.exit()

    App.on_event = on_event  # type: ignore[method-assign,assignment]


def _child() -> None:
    kind, out_path = sys.argv[2], sys.argv[3]
    _hook(kind, out_path)
    if kind == "minimal":
        from textual.app import App, ComposeResult
        from textual.widgets import Footer, Header, Static

        class Minimal(App[None]):
            def compose(self) -> ComposeResult:
                yield Header()
                yield Static("Hello, world: one screen.")
                yield Footer()

        Minimal().run()
        return
    from app.cli import main

    main(["--db", sys.argv[4]])


if CHILD:
    _child()
    sys.exit(0)

# -- the parent ---------------------------------------------------------------------------------------------

import argparse  # noqa: E402
import fcntl  # noqa: E402
import pty  # noqa: E402
import statistics  # noqa: E402
import struct  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import termios  # noqa: E402
import threading  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from bench.lib.common import DATA_VERSION, ROOT, Words, data_file, emit, remove_db  # noqa: E402

N_THREADS, PER_THREAD, N_MEMORIES = 5000, 20, 10_000
BUILD = 1  # bump when build() changes what it writes


def build(path: Path) -> float:
    from store import Store
    from store.records import CATEGORIES, MessageIn, ThreadIn

    t0 = time.perf_counter()
    tmp = path.with_suffix(".building")
    remove_db(tmp)
    store = Store(tmp, embedder=None)
    words = Words(9)
    rng = np.random.default_rng(9)
    for h in range(N_THREADS):
        start = 1.6e9 + h * 20_000.0
        msgs = [
            MessageIn(
                "user" if i % 2 == 0 else "assistant",
                words.text(rng, int(np.clip(rng.lognormal(np.log(60), 0.8), 3, 800)), h % 40, h % 400, h),
                f"m{i}",
                start + 60 * i,
            )
            for i in range(PER_THREAD)
        ]
        store.write_thread(
            ThreadIn("bench", f"t{h}", f"Conversation {h}", msgs, created_at=start), embed=False
        )
    for j in range(N_MEMORIES):
        store.add_memory(
            words.text(rng, int(rng.integers(8, 30)), j % 40, j % 400, j), CATEGORIES[j % 4], force=True
        )
    store.close()
    os.replace(tmp, path)
    return time.perf_counter() - t0


def launch(kind: str, db: Path | None, timeout: float = 120) -> dict[str, object]:
    """Start one child on a 120x40 pseudo-terminal; return what its hook recorded."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        env = {
            **os.environ,
            "TERM": "xterm-256color",
            "COLUMNS": "120",
            "LINES": "40",
            "MEMAPP_CONFIG": str(Path(tmp) / "none.toml"),
        }
        # Both apps start from compiled bytecode, as an installed memapp does (pip compiles it at install,
        # an editable install writes it on its first run): with PYTHONDONTWRITEBYTECODE=1 inherited from
        # the shell, the warm-up could not write it and every run would recompile memapp's own modules.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        argv = [sys.executable, "-m", "bench.perf.startup", "--child", kind, str(out)] + (
            [str(db)] if db else []
        )
        drained = threading.Thread(target=_drain, args=(master,), daemon=True)
        env["BENCH_T0"] = repr(time.monotonic())
        proc = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=ROOT, close_fds=True
        )
        os.close(slave)
        drained.start()
        try:
            proc.wait(timeout=timeout)
        finally:
            if proc.poll() is None:
                proc.kill()
            os.close(master)
        if not out.exists():
            raise SystemExit(f"startup child {kind} recorded nothing (exit {proc.returncode})")
        return dict(json.loads(out.read_text()))


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 65536):
            pass
    except OSError:
        pass


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="3 runs of each app")
    ap.add_argument("--idle-only", action="store_true", help="only the idle run with the model loaded")
    a = ap.parse_args()
    if a.quick:
        a.runs = 3
    db = data_file(
        f"startup-{N_THREADS * PER_THREAD}-d{DATA_VERSION}-b{BUILD}.db",
        stale=f"startup-{N_THREADS * PER_THREAD}-",
    )
    build_s = None if db.exists() else round(build(db), 1)
    if a.idle_only:  # only the idle run (RSS with semantic search ready)
        idle = launch("idle", db, timeout=180)
        print(
            json.dumps(
                {"idle_with_model": idle, "load_average_1_5_15": [round(x, 2) for x in os.getloadavg()]}
            )
        )
        return
    launch("memapp", db)  # one warm-up each: the first start also pays for cold .pyc and disk caches
    launch("minimal", None)
    runs: dict[str, list[dict[str, object]]] = {"memapp": [], "minimal": []}
    for _ in range(a.runs):
        runs["memapp"].append(launch("memapp", db))
        runs["minimal"].append(launch("minimal", None))
    idle = launch("idle", db, timeout=180)

    def p50(kind: str, key: str) -> float:
        return round(statistics.median(float(r[key]) * 1000 for r in runs[kind]), 1)  # type: ignore[arg-type]

    paint, base = p50("memapp", "first_paint_s"), p50("minimal", "first_paint_s")
    listed = p50("memapp", "threads_listed_s")
    loaded_early = sorted({m for r in runs["memapp"] for m in r["model_modules_at_paint"]})  # type: ignore[attr-defined]
    ratio = round(paint / base, 3)
    listed_ratio = round(listed / base, 3)  # the first screen with its data, against the bare app's frame
    idle_rss = round(float(idle["rss_mib"]), 1)  # type: ignore[arg-type]
    targets = {
        "first_paint_le_1.5x_minimal": ratio <= 1.5,
        "model_not_loaded_before_paint": not loaded_early,
        "idle_rss_le_400MiB_no_torch": idle_rss <= 400 and not idle.get("torch_imported"),
    }
    summary = (
        f"startup: memapp first paint {paint:.0f} ms vs minimal Textual app {base:.0f} ms ({ratio:.2f}x), "
        f"threads listed at {listed:.0f} ms ({listed_ratio:.2f}x), model modules at paint: {loaded_early or 'none'}; idle with the "
        f"model loaded {idle_rss:.0f} MiB RSS; targets "
        f"{'met' if all(targets.values()) else 'MISSED: ' + ', '.join(k for k, v in targets.items() if not v)}"
    )
    emit(
        "startup",
        {
            "database": {
                "messages": N_THREADS * PER_THREAD,
                "threads": N_THREADS,
                "memories": N_MEMORIES,
                "db_mb": round(db.stat().st_size / 1e6, 1),
                "build_s": build_s,
            },
            "runs": a.runs,
            "first_paint_ms": {
                "memapp_p50": paint,
                "minimal_p50": base,
                "ratio": ratio,
                "memapp_all": [round(float(str(r["first_paint_s"])) * 1000, 1) for r in runs["memapp"]],
                "minimal_all": [round(float(str(r["first_paint_s"])) * 1000, 1) for r in runs["minimal"]],
            },
            "threads_listed_ms_p50": listed,
            "threads_listed_vs_minimal_paint": listed_ratio,
            "threads_listed_all": [
                round(float(r["threads_listed_s"]) * 1000, 1)  # type: ignore[arg-type]
                for r in runs["memapp"]
            ],
            "model_modules_at_first_paint": loaded_early,
            "idle_with_model": {
                "model_ready_ms": round(float(idle["model_ready_s"]) * 1000),  # type: ignore[arg-type]
                "rss_mib": idle_rss,
                "peak_rss_mib": round(float(idle["peak_rss_mib"]), 1),  # type: ignore[arg-type]
                "torch_imported": idle.get("torch_imported"),
                "embedder_backend": idle.get("embedder_backend"),
                "held_vector_bytes": idle.get("held_vector_bytes"),
            },
            "load_average_1_5_15": [round(x, 2) for x in os.getloadavg()],
            "targets": targets,
        },
        summary,
    )


if __name__ == "__main__":
    main()
