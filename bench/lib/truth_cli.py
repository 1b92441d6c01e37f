"""Run truth pairs the way a user does: through the installed `memapp` console script (`--via cli`).

The in-process evaluation (bench/quality/eval_truth.py) calls `Store.add_memory` directly. An outside tester
runs the real command instead, and anything the CLI does on the way (how it builds its Store from the
config, which embedder that loads, what it does to the text) changes what a user sees. So each pair gets
its own temporary HOME, with the data, config and cache directories inside it, and is run as a user would:

    memapp memory add -c CATEGORY --json -- OLD
    memapp memory add -c CATEGORY --json -- NEW
    memapp memory list --json          # which of the two is still current
    memapp conflicts list --json       # what a conflict suggests (merge: "offer", else "queue")

No `--db`: the database is the default one of that HOME (`~/.local/share/memapp/chat.db`), as for a user.
The one exception to the fresh HOME is the model cache (`MEMAPP_CACHE_DIR`): it is the caller's, so the ONNX
copy of the model is made once, as it is on a user's machine, and not once per pair. The CLI has no
default category (`--category` is required), so the category is the caller's choice too.

The outcome is read from the CLI's own JSON output with the same five answers as the in-process
`outcome()`: merge, supersede, offer, queue, both (or `error: ...` when a command failed).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench.lib.truth_data import Pair

MAX_WORKERS = 2  # the machine is shared: never more than two memapp processes at once
TIMEOUT_S = 300  # one command, the model's first load included


class CliError(Exception):
    """A memapp command exited non-zero or printed something that is not the JSON it promises."""


def memapp_script() -> str:
    """The `memapp` console script installed beside the running Python (the venv's), else the one on PATH."""
    beside = Path(sys.executable).parent / "memapp"
    if beside.exists():
        return str(beside)
    found = shutil.which("memapp")
    if found is None:
        raise SystemExit("eval_truth --via cli: no `memapp` console script (run `make .venv/.installed`)")
    return found


def model_cache_dir() -> str:
    """The caller's model cache: `MEMAPP_CACHE_DIR`, else the platform cache dir memapp itself uses."""
    if env := os.environ.get("MEMAPP_CACHE_DIR"):
        return env
    import platformdirs

    return platformdirs.user_cache_dir("memapp", appauthor=False)


def sample(pairs: Sequence[Pair], limit: int | None) -> list[Pair]:
    """`limit` pairs, the same ones on every run and machine, spread evenly over the four groups.

    Each group's pairs are ordered by a hash of their texts (not by file or line, so adding pairs elsewhere
    leaves a sample mostly as it was), then the groups are taken in turn."""
    if limit is None or limit >= len(pairs):
        return list(pairs)

    def key(p: Pair) -> bytes:
        return hashlib.sha256(f"sample\t{p.old}\t{p.new}".encode()).digest()

    queues: dict[str, list[Pair]] = {}
    for p in sorted(pairs, key=key):
        queues.setdefault(p.group, []).append(p)
    out: list[Pair] = []
    while len(out) < limit:
        for group in sorted(queues):
            if queues[group] and len(out) < limit:
                out.append(queues[group].pop(0))
    return out


def user_env(home: Path, keyword_only: bool) -> dict[str, str]:
    """A fresh user's environment: HOME and the XDG directories in `home`, no memapp setting carried over
    from the caller except the model cache (and the write-lock check the tests turn on)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMAPP_", "XDG_"))}
    env.update(
        HOME=str(home),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        MEMAPP_CACHE_DIR=model_cache_dir(),
    )
    if os.environ.get("MEMAPP_STRICT_WRITES"):
        env["MEMAPP_STRICT_WRITES"] = os.environ["MEMAPP_STRICT_WRITES"]
    if keyword_only:  # `--embedder none`: the user's config turns the model off
        cfg = home / ".config" / "memapp" / "config.toml"
        cfg.parent.mkdir(parents=True, exist_ok=True)
        cfg.write_text("[embedding]\nenabled = false\n", encoding="utf-8")
    return env


def memapp_json(memapp: str, args: Sequence[str], env: dict[str, str], cwd: Path) -> Any:
    """Run one memapp command and return its JSON output."""
    proc = subprocess.run(
        [memapp, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=TIMEOUT_S, check=False
    )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or proc.stdout.strip().splitlines() or ["no output"])[-1]
        raise CliError(f"memapp {args[0]} {args[1]} exited {proc.returncode}: {last}")
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        raise CliError(f"memapp {args[0]} {args[1]}: not JSON ({exc})") from None


def outcome_from_cli(
    old: dict[str, Any],
    new: dict[str, Any],
    listed: list[dict[str, Any]],
    open_conflicts: list[dict[str, Any]],
) -> str:
    """The in-process `outcome()` (eval_truth), read from what the CLI printed instead of from the Store."""
    if new["id"] == old["id"]:
        return "merge"
    valid_until = {m["id"]: m.get("valid_until") for m in listed}
    if valid_until.get(old["id"]) is not None or valid_until.get(new["id"]) is not None:
        return "supersede"
    if new.get("conflicts"):
        suggested = {c.get("suggested") for c in open_conflicts if c["id"] in new["conflicts"]}
        return "offer" if "merge" in suggested else "queue"
    return "both"


def run_pair_cli(p: Pair, memapp: str, categories: tuple[str, str], keyword_only: bool) -> dict[str, Any]:
    """One pair in its own HOME: add old, add new, read the memories and conflicts back."""
    with tempfile.TemporaryDirectory(prefix="memapp-truth-cli-") as tmp:
        home = Path(tmp)
        env = user_env(home, keyword_only)
        try:
            old = memapp_json(
                memapp, ["memory", "add", "-c", categories[0], "--json", "--", p.old], env, home
            )
            new = memapp_json(
                memapp, ["memory", "add", "-c", categories[1], "--json", "--", p.new], env, home
            )
            listed = memapp_json(memapp, ["memory", "list", "--json", "--limit", "100"], env, home)
            conflicts = memapp_json(memapp, ["conflicts", "list", "--json"], env, home)
        except (CliError, subprocess.TimeoutExpired) as exc:
            return {"outcome": f"error: {exc}", "similarity": None, "reasons": []}
    reasons = sorted({str(r) for c in conflicts for r in c.get("reasons", [])})
    return {
        "outcome": outcome_from_cli(old, new, listed, conflicts),
        "similarity": new.get("similarity"),
        "reasons": reasons,
        "action": new.get("action"),
    }


def run_pairs_cli(
    pairs: Sequence[Pair], categories: tuple[str, str], keyword_only: bool, workers: int = MAX_WORKERS
) -> list[dict[str, Any]]:
    """Every pair through the CLI, at most MAX_WORKERS at a time, in the pairs' order."""
    memapp = memapp_script()
    with ThreadPoolExecutor(max_workers=max(1, min(workers, MAX_WORKERS))) as pool:
        return list(pool.map(lambda p: run_pair_cli(p, memapp, categories, keyword_only), pairs))
