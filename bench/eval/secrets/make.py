"""Build the secrets evaluation set from the hand-written templates (deterministic).

    .venv/bin/python -m bench.eval.secrets.make          # writes tune.jsonl and test.jsonl
    .venv/bin/python -m bench.eval.secrets.make --check  # the committed files are what this script writes

Each line of the output is one transcript text (a message as it would be stored):

    {"id": "s0042", "split": "tune", "template": 17, "text": "...", "secrets": [{"kind": "...", "value": "..."}]}

`secrets` is empty for the secret-free texts. Templates (with_secrets.py, without_secrets.py) are split by
template, not by text: every text made from one template lands in the same half, so tuning on one half
never sees the sentence shapes of the other. Texts with secrets are made three times per template (the
rotating `{tok}` slot and the random values differ each time); secret-free ones three times too, or once when the
template has no slot. ROUND2 (in both template files) names each template's half itself: added after
the first measurement of the test half (docs/benchmarks/secrets.md).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from itertools import cycle
from pathlib import Path

from bench.eval.secrets.fakes import SECRETS, UNPREFIXED, lookalike, secret
from bench.eval.secrets.with_secrets import ROUND2 as WITH2
from bench.eval.secrets.with_secrets import TEMPLATES as WITH
from bench.eval.secrets.without_secrets import ROUND2 as WITHOUT2
from bench.eval.secrets.without_secrets import TEMPLATES as WITHOUT

HERE = Path(__file__).resolve().parent

SEED = 20261127
SLOT = re.compile(r"\{(~?)([a-z0-9-]+|tok)(?:#\d)?\}")
PREFIXED = [
    k for k in SECRETS if k not in UNPREFIXED and k not in ("card-number", "private-key", "slack-webhook")
]


def fill(template: str, rng: random.Random, tokens: cycle[str]) -> tuple[str, list[dict[str, str]]]:
    """The template with every slot filled; the secrets it now holds, in order."""
    found: list[dict[str, str]] = []
    values: dict[str, str] = {}

    def one(m: re.Match[str]) -> str:
        key = m.group(0)
        if key in values:  # the same slot twice in one template: the same value
            return values[key]
        look, kind = m.group(1), m.group(2)
        if look:
            value = lookalike(rng, kind)
        else:
            kind = next(tokens) if kind == "tok" else kind
            value = secret(rng, kind)
            found.append({"kind": kind, "value": value})
        values[key] = value
        return value

    # Literal braces are doubled in the templates ({{ }}): protect them from the slot pattern first.
    text = template.replace("{{", "\x01").replace("}}", "\x02")
    text = SLOT.sub(one, text)
    return text.replace("\x01", "{").replace("\x02", "}"), found


def build() -> dict[str, list[dict[str, object]]]:
    rng = random.Random(SEED)
    tokens = cycle(PREFIXED)
    out: dict[str, list[dict[str, object]]] = {"tune": [], "test": []}
    n = 0
    rounds = (
        ("with", [("tune" if t % 2 == 0 else "test", x) for t, x in enumerate(WITH)]),
        ("without", [("tune" if t % 2 == 0 else "test", x) for t, x in enumerate(WITHOUT)]),
        ("with2", WITH2),
        ("without2", WITHOUT2),
    )
    times = 3
    for group, templates in rounds:
        for t, (split, template) in enumerate(templates):
            has_slot = bool(SLOT.search(template.replace("{{", "").replace("}}", "")))
            for _ in range(times if has_slot else 1):
                text, found = fill(template, rng, tokens)
                if group.startswith("with") and not group.startswith("without") and not found:
                    raise SystemExit(f"template {t} of with_secrets.py holds no secret slot")
                if group.startswith("without") and found:
                    raise SystemExit(f"template {t} of without_secrets.py holds a secret slot")
                n += 1
                out[split].append(
                    {
                        "id": f"s{n:04d}",
                        "split": split,
                        "template": f"{group}-{t}",
                        "text": text,
                        "secrets": found,
                    }
                )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="only check that the committed files are current")
    args = ap.parse_args()
    data = build()
    stale = []
    for split, rows in data.items():
        path = HERE / f"{split}.jsonl"
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path.name)
        else:
            path.write_text(text, encoding="utf-8")
        with_s = sum(1 for r in rows if r["secrets"])
        kinds = {s["kind"] for r in rows for s in r["secrets"]}  # type: ignore[attr-defined]
        print(
            f"{split}: {with_s} texts with secrets ({len(kinds)} kinds), {len(rows) - with_s} without",
            file=sys.stderr,
        )
    if stale:
        raise SystemExit(f"stale: {', '.join(stale)} (run `python -m bench.eval.secrets.make`)")


if __name__ == "__main__":
    main()
