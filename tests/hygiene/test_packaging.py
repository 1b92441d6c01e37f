"""A clean, non-editable `pip install .` into a fresh venv imports *our* packages and finds data/."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_clean_install_imports_ours(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    # Dependencies come from the dev venv (no network here); our own code must come from the new install.
    (site / "zz_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(py),
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            str(ROOT),
        ],
        check=True,
        cwd=tmp_path,
    )
    code = (
        "import app, store, embeddings, app.cli, app.mcp.server, store.importing.formats, sys\n"
        "from embeddings import TokenCounter\n"
        "from embeddings.data_files import data_file\n"
        "print(app.__file__); print(store.__file__); print(embeddings.__file__)\n"
        "print(data_file('cl100k_base.tiktoken')); print(TokenCounter().exact)\n"
    )
    out = subprocess.run(
        [str(py), "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    ).stdout.split("\n")
    for path in out[:3]:
        assert path.startswith(str(site)), path
    assert out[3].startswith(str(venv / "share" / "memapp"))
    assert out[4] == "True"
    assert (venv / "bin" / "memapp").exists()
