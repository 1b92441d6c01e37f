"""Every parser against mutated copies of every fixture: truncated, bytes flipped, NUL bytes, invalid
UTF-8, a slice repeated (duplicate ids), a huge string, deep nesting. The parser must never raise: each
problem comes back as an ImportProblem naming the file (issue 20, part 4).

Parsing only (no database), so the soak run can afford 10,000 cases per format; CI runs 150. The
import-level fuzzing (through the CLI, into chat.db) is test_fuzz_importers.py. Mutations come from
`random.Random(SEED + n)`: MEMAPP_FUZZ_SEED replays a failure.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from store.importing.formats import FORMATS, ImportProblem, read_export
from store.records import MemoryIn, SuggestionIn, ThreadIn
from tests.reliability.processes import SOAK

SEED = int(os.environ.get("MEMAPP_FUZZ_SEED", "4242"))
CASES = 10_000 if SOAK else 150
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "import"
TEXT_SUFFIXES = {".json", ".jsonl", ".ndjson", ".txt", ".md"}


def _fixture_files() -> list[tuple[str, Path]]:
    found = []
    for fmt_dir in sorted(p for p in FIXTURES.iterdir() if p.is_dir() and p.name in FORMATS):
        files = sorted(p for p in fmt_dir.rglob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES)
        if files:
            found.append((fmt_dir.name, max(files, key=lambda p: p.stat().st_size)))
    return found


def _truncate(rng: random.Random, data: bytes) -> bytes:
    return data[: rng.randrange(len(data))]


def _flip(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        b[rng.randrange(len(b))] = rng.randrange(256)
    return bytes(b)


def _insert(piece: bytes) -> Callable[[random.Random, bytes], bytes]:
    def mutate(rng: random.Random, data: bytes) -> bytes:
        at = rng.randrange(len(data))
        return data[:at] + piece + data[at:]

    return mutate


def _repeat_slice(rng: random.Random, data: bytes) -> bytes:
    a = rng.randrange(len(data))
    b = min(len(data), a + rng.randint(1, 400))
    return data[:b] + data[a:b] + data[b:]


def _huge_string(rng: random.Random, data: bytes) -> bytes:
    at = data.find(b'"', rng.randrange(len(data)))
    if at == -1:
        return data
    return data[: at + 1] + b"x" * rng.choice([10_000, 200_000]) + data[at + 1 :]


def _swap_types(rng: random.Random, data: bytes) -> bytes:
    for old, new in ((b'"', b"null, "), (b"[", b"{"), (b"{", b"["), (b":", b": []"), (b",", b", null,")):
        at = data.find(old, rng.randrange(len(data)))
        if at != -1 and rng.random() < 0.5:
            data = data[:at] + new + data[at + len(old) :]
    return data


MUTATIONS: list[Callable[[random.Random, bytes], bytes]] = [
    _truncate,
    _flip,
    _insert(b"\x00"),
    _insert(b"\xff\xfe\xc3"),
    _insert(b'"\\ud800"'),
    _insert(b"[" * 5000),
    _insert(b"\n"),
    _repeat_slice,
    _huge_string,
    _swap_types,
]


@pytest.mark.timeout(1800 if SOAK else 300)  # 10,000 cases take ~1 min per format on an idle machine
@pytest.mark.parametrize(("fmt", "fixture"), _fixture_files(), ids=lambda v: getattr(v, "name", v))
def test_mutated_fixtures_never_raise(
    tmp_path: Path, fmt: str, fixture: Path, figures: dict[str, int]
) -> None:
    data = fixture.read_bytes()
    case = tmp_path / fixture.name
    reported = 0
    for n in range(CASES):
        rng = random.Random(SEED * 100_003 + n)
        mutated = data
        for _ in range(rng.randint(1, 3)):
            mutated = rng.choice(MUTATIONS)(rng, mutated) or mutated
        case.write_bytes(mutated)
        try:
            items = list(read_export(case, fmt))
        except Exception as exc:  # noqa: BLE001 - the point: nothing may escape the parser
            raise AssertionError(f"{fmt} case {n} (MEMAPP_FUZZ_SEED={SEED}) raised {exc!r}") from exc
        for item in items:
            assert isinstance(item, ThreadIn | MemoryIn | SuggestionIn | ImportProblem), (fmt, n, item)
            if isinstance(item, ImportProblem):
                assert item.file and item.error, (fmt, n, item)
                reported += 1
    figures[f"fuzz cases ({fmt}, parser)"] = figures.get(f"fuzz cases ({fmt}, parser)", 0) + CASES
    assert reported > 0  # the mutations really produced bad input
