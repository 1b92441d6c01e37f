"""How much memory one JSON value may take to read, judged from its shape before it is parsed.

    from store.importing.formats.limits import too_big
    if (why := too_big(raw)) is not None: ...   # report and skip this line / conversation

Why shape and not size: Python holds parsed JSON at up to ~20x its text. A 200 MB line of long strings
needs ~200 MB; a 200 MB line of `{"role": "user", "content": "x"}` objects needs over 2 GB, and a
process under a 1.5 GB limit died with no message. So before a line or a conversation is parsed, its
text is counted (bytes, and the `{`, `[` and `,` that become Python objects, at C speed) into an
estimate, and a value whose estimate is over the budget is reported and skipped; the lines and
conversations around it are still read. The estimate errs high (measured against tracemalloc: 0.8-3x of
what `json.loads` holds), because the records an importer makes from a value, and the writes after, hold
about as much again.

Why the budget depends on the machine: the limit that kills is the one the process runs under. The
budget is a quarter of what is left: under an address-space limit (`ulimit -v`, RLIMIT_AS) what remains
of it, else the smaller of the memory available (MemAvailable) and a cgroup's (a container's) limit.
The same file can therefore be refused on a small machine and read on a big one; the message says how
much it needed and how much was available.
"""

from __future__ import annotations

import os
from pathlib import Path

try:
    import resource
except ImportError:  # Windows: no address-space limits to read
    resource = None  # type: ignore[assignment]

MIN_BUDGET = 32 * 1024**2  # never refuse a value smaller than this for lack of memory
_PER_CONTAINER = 150  # bytes a parsed dict or list costs, beyond its text
_PER_ITEM = 50  # bytes per element or member (the object it points to, the pointer)
_FALLBACK = 4 * 1024**3  # when nothing says how much memory there is


def estimate(raw: bytes | str) -> int:
    """Bytes Python will hold for `raw` parsed (and the records made from it), erring high."""
    if isinstance(raw, str):
        containers = raw.count("{") + raw.count("[")
        items = raw.count(",")
    else:
        containers = raw.count(b"{") + raw.count(b"[")
        items = raw.count(b",")
    return 2 * (len(raw) + _PER_CONTAINER * containers + _PER_ITEM * items)


def _address_space_left() -> int | None:
    if resource is None:
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return soft // 2
    return max(0, soft - pages * os.sysconf("SC_PAGE_SIZE"))


def _available() -> int:
    found: list[int] = []
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                found.append(int(line.split()[1]) * 1024)
                break
    except (OSError, ValueError, IndexError):
        pass
    try:  # cgroup v2: a container's limit, less what it already uses
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit != "max":
            used = int(Path("/sys/fs/cgroup/memory.current").read_text())
            found.append(max(0, int(limit) - used))
    except (OSError, ValueError):
        pass
    if not found:
        try:
            found.append(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (ValueError, OSError, AttributeError):
            found.append(_FALLBACK)
    return min(found)


def memory_budget() -> int:
    """Bytes one value may need: a quarter of the memory this process can still get (see the module)."""
    left = _address_space_left()
    free = _available()
    room = free if left is None else min(left, free)
    return max(MIN_BUDGET, room // 4)


def too_big(raw: bytes | str, budget: int | None = None) -> str | None:
    """Why `raw` must not be parsed (one line for the report), or None when it fits the budget."""
    need = estimate(raw)
    if need <= MIN_BUDGET:
        return None
    budget = memory_budget() if budget is None else budget
    if need <= budget:
        return None
    return (
        f"{_size(len(raw))} of JSON that would need about {_size(need)} of memory to read, more than the "
        f"{_size(budget)} this import can use here; skipped"
    )


def _size(n: int) -> str:
    if n >= 1024**3:
        return f"{n / 1024**3:.1f} GB"
    return f"{max(1, round(n / 1024**2))} MB"
