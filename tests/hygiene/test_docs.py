"""What README and the guides show works: every `memapp …` line in a shell block is accepted by the real
parser, the Python examples run against a temp chat.db, and every relative link (and its #anchor) lands.

Why: README's Python example failed with an ImportError and pointed at a moved file, and nothing noticed.
Lines that are not memapp commands (`claude mcp add …`, `python -m bench …`, which bench's own tests
cover) are skipped. The docs write options the usual way: `[--opt]` is optional (checked with it given),
`a|b` inside one word is a choice (each one checked), `PATH...` repeats, and an upper-case word (QUERY,
ID, PATH) is a placeholder (checked as `1`, a value every argument type accepts)."""

from __future__ import annotations

import contextlib
import io
import itertools
import os
import re
import shlex
from pathlib import Path

import pytest

from app.cli import build_parser
from embeddings import FakeEmbedder
from store import core

ROOT = Path(__file__).resolve().parents[2]
COMMAND_DOCS = [ROOT / "README.md", *sorted((ROOT / "docs" / "guide").glob("*.md"))]
PYTHON_DOCS = [ROOT / "README.md", ROOT / "docs" / "guide" / "python.md"]
LINKED_DOCS = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]

FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
SHELL = {"sh", "bash", "shell", "console"}
SEPARATORS = {"|", "||", "&&", ";", "/"}
REDIRECTS = {"<", ">", ">>", "2>", "2>&1"}
PLACEHOLDER = re.compile(r"^[A-Z][A-Z_]*(\.\.\.)?$")


def blocks(path: Path, kinds: set[str]) -> list[str]:
    return [m.group(2) for m in FENCE.finditer(path.read_text(encoding="utf-8")) if m.group(1) in kinds]


def command_lines(path: Path) -> list[str]:
    """Each shell line of `path` (continuations joined), comments dropped."""
    out = []
    for block in blocks(path, SHELL):
        for line in block.replace("\\\n", " ").splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                out.append(line)
    return out


def memapp_argvs(line: str) -> list[list[str]]:
    """The argument lists of each memapp command on `line` (none when it runs no memapp)."""
    words = shlex.split(line, comments=True)
    found = []
    for key, group in itertools.groupby(words, lambda w: w in SEPARATORS):
        segment = list(group)
        while segment and "=" in segment[0] and not segment[0].startswith("-"):
            segment.pop(0)  # VAR=value before the command
        if key or not segment or Path(segment[0]).name != "memapp":
            continue
        argv: list[str] = []
        skip = False
        for word in segment[1:]:
            if skip:
                skip = False
                continue
            if word in REDIRECTS:
                skip = True
                continue
            word = word.strip("[]")
            if word in ("", "...", "…"):
                continue
            argv.append(word)
        found.append(argv)
    return found


def variants(argv: list[str]) -> list[list[str]]:
    """`argv` with each placeholder as `1`, once per alternative of each `a|b` word."""
    base = ["1" if PLACEHOLDER.match(w) else w.split("|")[0] for w in argv]
    out = [base]
    for i, word in enumerate(argv):
        if "|" in word and not PLACEHOLDER.match(word):
            out += [base[:i] + [alt] + base[i + 1 :] for alt in word.split("|")[1:]]
    return out


def rejection(argv: list[str]) -> str | None:
    """The parser's one-line complaint about `argv`, or None when it accepts it (--help counts)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            build_parser().parse_args(argv)
        except SystemExit as exc:
            if exc.code not in (0, None):
                return err.getvalue().strip() or f"exit {exc.code}"
    return None


def all_commands() -> list[tuple[str, str, list[str]]]:
    return [
        (str(path.relative_to(ROOT)), line, argv)
        for path in COMMAND_DOCS
        for line in command_lines(path)
        for argv in memapp_argvs(line)
    ]


def test_every_memapp_command_shown_is_accepted() -> None:
    commands = all_commands()
    assert len(commands) > 100, "the docs' shell blocks were not found"
    failures = [
        f"{where}: `{line.strip()}` -> {' '.join(v)}: {problem}"
        for where, line, argv in commands
        for v in variants(argv)
        if (problem := rejection(v)) is not None
    ]
    assert not failures, "\n".join(failures)


def test_the_checker_rejects_what_the_parser_rejects() -> None:
    """The check itself can fail: a mistyped option and a missing argument are caught."""
    assert rejection(["memory", "add", "x", "--category", "preference", "--pin"]) is None
    assert rejection(["memory", "add", "x", "--categroy", "preference"]) is not None
    assert rejection(["threads", "show"]) is not None
    assert memapp_argvs("pbpaste | memapp import - --format text  # a list") == [
        ["import", "-", "--format", "text"]
    ]
    assert memapp_argvs("claude mcp add memapp -- /abs/memapp mcp") == []
    assert memapp_argvs("MEMAPP_DB=x.db .venv/bin/memapp memory list [--pinned] < in") == [
        ["memory", "list", "--pinned"]
    ]
    assert variants(["memory", "list", "--state", "current|superseded", "ID"]) == [
        ["memory", "list", "--state", "current", "1"],
        ["memory", "list", "--state", "superseded", "1"],
    ]


GENERIC_EXPORT = (
    '{"id": "conv-1", "title": "Backups", "messages": [{"id": "m-1", "role": "user", "content": '
    '"How do I back up my NAS with restic?"}, {"id": "m-2", "role": "assistant", "content": '
    '"Start with the 3-2-1 rule."}]}\n'
)


@pytest.mark.parametrize("doc", PYTHON_DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_python_examples_run(doc: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each Python block runs, in order, in a folder holding a fresh chat.db and the small export the
    examples name (`chats.jsonl`); the model is the fake one (the examples are about the API)."""
    monkeypatch.setattr(core.StoreCore, "_default_embedder", lambda self: FakeEmbedder())
    monkeypatch.chdir(tmp_path)
    (tmp_path / "chats.jsonl").write_text(GENERIC_EXPORT, encoding="utf-8")
    examples = blocks(doc, {"python"})
    assert examples, f"{doc.name} has no Python example"
    for number, code in enumerate(examples, start=1):
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(code, f"{doc.name} example {number}", "exec"), {"__name__": "__doc_example__"})


def anchors(path: Path) -> set[str]:
    """GitHub's anchors for the headings of `path`: lower case, punctuation dropped, spaces to hyphens;
    a repeated heading gets -1, -2, …"""
    seen: dict[str, int] = {}
    out = set()
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    for heading in re.findall(r"^#{1,6} (.+)$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def test_relative_links_and_anchors_resolve() -> None:
    broken = []
    for doc in LINKED_DOCS:
        text = FENCE.sub("", doc.read_text(encoding="utf-8"))
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            file_part, _, anchor = target.partition("#")
            dest = (doc.parent / file_part).resolve() if file_part else doc
            if not dest.exists():
                broken.append(f"{doc.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and dest.is_file() and anchor not in anchors(dest):
                broken.append(f"{doc.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_readme_stays_a_guide() -> None:
    """README is the first hour's guide: at most 300 lines, no issue numbers, no dated measurements."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300
    assert not re.search(r"\bissues? \d+", text, re.I)
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b", text)
    assert os.path.exists(ROOT / "docs" / "README.md")
