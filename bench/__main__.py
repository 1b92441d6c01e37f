"""One entry point for the benchmarks: `python -m bench NAME [args]`, `python -m bench --list`.

    .venv/bin/python -m bench --list            # every NAME with the first line of its docstring
    .venv/bin/python -m bench search --quick    # the same as `python -m bench.perf.search --quick`

A NAME is a module of bench.perf, bench.quality or bench.tune that runs as a script (it has an
`if __name__ == "__main__":` block), or `report`. Modules are found by reading the files, not by importing
them, so `--list` stays quick and a benchmark's heavy imports (numpy, the model, Textual) load only for the
one that runs. Run from the repository's root: the benchmarks find their data under bench/ and the app is
the editable install in .venv.
"""

from __future__ import annotations

import ast
import runpy
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
GROUPS = ("perf", "quality", "tune")


def scripts() -> dict[str, str]:
    """NAME -> module, for every runnable benchmark; a NAME found in two groups is an error, not a guess."""
    found: dict[str, str] = {"report": "bench.report"}
    for group in GROUPS:
        for path in sorted((HERE / group).glob("*.py")):
            if path.stem.startswith("_") or '__name__ == "__main__"' not in path.read_text(encoding="utf-8"):
                continue
            if path.stem in found:
                raise SystemExit(f"bench: {path.stem} is in two places ({found[path.stem]}, bench.{group})")
            found[path.stem] = f"bench.{group}.{path.stem}"
    return found


def summary(module: str) -> str:
    """The first sentence-paragraph of a module's docstring on one line, read from its file."""
    path = HERE.joinpath(*module.split(".")[1:]).with_suffix(".py")
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    return " ".join(doc.split("\n\n")[0].split())


def main(argv: list[str]) -> int:
    table = scripts()
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    if argv[0] == "--list":
        width = max(len(name) for name in table)
        for name, module in sorted(table.items(), key=lambda kv: (kv[1].split(".")[1], kv[0])):
            print(f"{name:<{width}}  {module.split('.')[1]:<7}  {summary(module)}")
        return 0
    name = argv[0]
    if name not in table:
        print(f"bench: no benchmark named {name!r} (`python -m bench --list` names them)", file=sys.stderr)
        return 2
    # The benchmark sees the argv it would see as `python -m bench.perf.NAME args`.
    sys.argv = [table[name], *argv[1:]]
    runpy.run_module(table[name], run_name="__main__", alter_sys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
