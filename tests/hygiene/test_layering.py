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


def test_store_and_embeddings_do_not_import_textual_or_app() -> None:
    mods = _modules_after("import store, embeddings, store.maintenance, store.importing.formats")
    assert not {m for m in mods if m == "textual" or m.startswith(("textual.", "app.")) or m == "app"}


def test_cli_and_store_do_not_import_torch() -> None:
    mods = _modules_after(
        "import app.cli; app.cli.build_parser(); import store; store.Store(':memory:', embedder='auto')"
    )
    assert "torch" not in mods and "sentence_transformers" not in mods
