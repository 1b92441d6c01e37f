"""store/ and embeddings/ never import the UI; importing them (and the CLI) stays free of torch."""

from __future__ import annotations

import subprocess
import sys


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys; print('\\n'.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return set(out.split())


# Imports every module of store/ and embeddings/ (found by walking the packages, so a new module is
# covered without being listed) and names the first one after which textual or app is loaded.
_EVERY_MODULE = """
import importlib, pkgutil, sys
import embeddings, store

def ui():
    return sorted(m for m in sys.modules if m.split(".")[0] in ("textual", "app"))

names = []
for package in (store, embeddings):
    names += [m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")]
for name in names:
    importlib.import_module(name)
    if ui():
        print("UI", name, *ui()[:3])
        break
print("imported", len(names))
"""


def test_every_store_and_embeddings_module_imports_without_textual_or_app() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _EVERY_MODULE], capture_output=True, text=True, check=True
    ).stdout
    assert "UI" not in out, f"a module under store/ or embeddings/ imports the UI: {out}"
    assert int(out.split()[-1]) >= 40, out  # the walk really found the modules


def test_cli_and_store_do_not_import_torch() -> None:
    mods = _modules_after(
        "import app.cli; app.cli.build_parser(); import store; store.Store(':memory:', embedder='auto')"
    )
    assert "torch" not in mods and "sentence_transformers" not in mods
