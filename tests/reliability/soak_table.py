"""Print (or write into README.md) the table of what the last soak run survived.

    .venv/bin/python tests/reliability/soak_table.py [--readme]

Reads bench/out/soak.json, which the reliability suite writes at the end of a passing run with
MEMAPP_SOAK=1 (tests/reliability/conftest.py); `make soak` runs both. `--readme` replaces the text between
`<!-- soak:start -->` and `<!-- soak:end -->` in README.md.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOAK_JSON = ROOT / "bench" / "out" / "soak.json"
START, END = "<!-- soak:start -->", "<!-- soak:end -->"


def table(data: dict) -> str:
    lines = [
        f"Last soak run: {data['date']}, {data['machine']}, {data.get('minutes', '?')} min (`make soak`).",
        "",
        "| What | Count |",
        "|---|---|",
    ]
    lines += [f"| {name} | {value:,} |" for name, value in data["figures"].items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readme", action="store_true", help="write the table into README.md")
    parser.add_argument("--minutes", type=float, help="how long the soak run took (make soak passes it)")
    args = parser.parse_args(argv)
    if not SOAK_JSON.exists():
        print(f"{SOAK_JSON} is missing: run `make soak` first", file=sys.stderr)
        return 1
    data = json.loads(SOAK_JSON.read_text())
    if args.minutes is not None:
        data["minutes"] = round(args.minutes, 1)
        SOAK_JSON.write_text(json.dumps(data, indent=1))
    text = table(data)
    print(text)
    if args.readme:
        readme = ROOT / "README.md"
        body = readme.read_text(encoding="utf-8")
        if START not in body:
            print("README.md has no soak markers", file=sys.stderr)
            return 1
        body = re.sub(
            re.escape(START) + ".*?" + re.escape(END), lambda _: f"{START}\n{text}\n{END}", body, flags=re.S
        )
        readme.write_text(body, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
