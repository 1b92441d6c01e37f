"""The exact copy of each vector, as stored in `vec_memories` / `vec_chunks`: float16, little-endian.

Why float16: the exact copy only re-scores the few hundred candidates the 1-bit codes pick (and feeds
export, context building and the small tables held as floats), and a unit vector loses nothing there at
half precision: float16 keeps 11 significant bits, a cosine error of about 1e-4, far below the gaps
between neighbours that decide an order (measured: recall@10 identical to float32 re-scoring, README
"Benchmarks"). At float32 these rows were 58 % of chat.db. Vectors are unit length (every embedder
normalises), so nothing overflows float16's range.

sqlite-vec has no float16 type, so nothing here goes through it: cosines are computed in numpy on the
decoded rows (`cosines`: the same formula as `vec_distance_cosine`), and the codes of the bit tables
are made from the float32 values (`as_f32` gives sqlite-vec the bytes it wants). `convert` turns float32
rows into float16 ones when the first vector write meets the old layout (migration 7 has its own frozen
copy, store/m007.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import islice
from typing import Any

import apsw
import numpy as np

F16 = np.dtype("<f2")
BATCH = 4096  # rows converted per step: bounded memory whatever the table's size


def encode(vec: Any) -> bytes:
    """The stored form of one vector (float16)."""
    return np.asarray(vec, dtype=np.float32).astype(F16).tobytes()


def decode(blob: bytes) -> np.ndarray:
    """One stored vector as float32."""
    return np.frombuffer(blob, dtype=F16).astype(np.float32)


def widen(half: np.ndarray) -> np.ndarray:
    """float16 values as float32, bit for bit what `astype(np.float32)` gives, in 0.4x its time: numpy
    converts float16 one value at a time (0.25 ms for 333 rows of 384), while moving the bits into place
    and scaling the exponent (x 2^112: subnormals come out right too) is four whole-array operations.
    Infinities and NaNs (exponent 31) are converted by numpy; vectors have none."""
    bits = np.ascontiguousarray(half, dtype=F16).view(np.int16).astype(np.int32)
    out = ((bits & 0x7FFF) << 13).view(np.float32)
    out *= np.float32(2.0**112)
    out.view(np.int32)[...] |= (bits & -0x8000) << 16
    special = (bits & 0x7C00) == 0x7C00
    if special.any():
        out[special] = np.asarray(half)[special].astype(np.float32)
    return out


def stored_rows(blobs: Sequence[bytes], dim: int) -> np.ndarray:
    """Stored vectors as an (n, dim) float16 matrix (read-only, over one joined buffer)."""
    if not blobs:
        return np.zeros((0, dim), F16)
    return np.frombuffer(b"".join(blobs), dtype=F16).reshape(len(blobs), dim)


def decode_rows(blobs: Sequence[bytes], dim: int) -> np.ndarray:
    """Stored vectors as an (n, dim) float32 matrix."""
    return widen(stored_rows(blobs, dim))


def unit_rows(mat: np.ndarray) -> np.ndarray:
    """Rows as float32 scaled to unit length (a float16 row is off by up to ~1e-3), so that a matrix
    product gives the same cosines as `cosines`."""
    x = np.asarray(mat, dtype=np.float32)
    return np.asarray(x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-30), dtype=np.float32)


def as_f32(blob: bytes) -> bytes:
    """A stored vector as the float32 bytes sqlite-vec's functions read."""
    return decode(blob).tobytes()


def cosines(mat: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Cosine similarity of each row of `mat` to `q` (1 - sqlite-vec's vec_distance_cosine). einsum, not
    `mat @ q`: for the few hundred rows re-scored, BLAS's gemv wakes its thread pool, which then spins on
    both cores (measured 8 ms of CPU for 1,250 rows, against 0.07 ms for einsum)."""
    q = np.asarray(q, dtype=np.float32)
    dots = np.einsum("ij,j->i", mat, q)
    norms = np.sqrt(np.einsum("ij,ij->i", mat, mat)) * float(np.sqrt(q @ q))
    return np.asarray(dots / np.maximum(norms, 1e-30), dtype=np.float32)


def sign_codes(mat: np.ndarray) -> np.ndarray:
    """The 1-bit code of each row, packed as sqlite-vec's vec_quantize_binary packs them (bit t of byte
    j is dimension 8j + t, set when > 0): (n, ceil(dim / 8)) uint8."""
    return np.packbits(mat > 0, axis=1, bitorder="little")


def convert(con: apsw.Connection, src: str, dst: str, columns: Sequence[str]) -> int:
    """Copy every row of `src` into the existing table `dst`, the float32 `embedding` (the second of
    `columns`) re-encoded as float16, BATCH rows at a time; in the caller's transaction. Returns the
    number of rows copied. `src` may be a plain table or a vec0 float table (the first layout)."""
    cols = ", ".join(columns)
    marks = ", ".join("?" * len(columns))
    insert = f"INSERT INTO {dst}({cols}) VALUES ({marks})"
    rows: Iterator[Any] = iter(con.execute(f"SELECT {cols} FROM {src}"))
    total = 0
    while batch := list(islice(rows, BATCH)):
        blobs = [r[1] for r in batch]
        if len({len(b) for b in blobs}) != 1 or len(blobs[0]) % 4:
            raise ValueError(f"{src}: the vectors are not float32 rows of one dimension")
        dim = len(blobs[0]) // 4
        mat = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), dim).astype(F16)
        con.executemany(insert, ((r[0], mat[i].tobytes(), *r[2:]) for i, r in enumerate(batch)))
        total += len(batch)
    return total
