"""Assemble the person-to-person evaluation set from hand-written conversations (deterministic).

    python3 bench/eval/people/make.py          # writes conversations.jsonl and questions.jsonl, validates
    python3 bench/eval/people/make.py --check  # validates the committed files only (no rewrite)
    python3 bench/eval/people/make.py --dir bench/eval/langs   # the same for the per-language set

Every turn, question and answer label is written by hand in material/*.txt; this script only gives each
turn its id and time, and each question the ids of the turns its labels mark. A conversation is ONE
thread (as a chat app's export or a long-conversation benchmark gives it): its sessions are days apart
inside the thread, so a ranking that wants sessions has to find them from the times.

Material format (material/pNN.txt, one conversation each):

    conv: p01                        header lines (key: value) up to the first session
    split: tune | test
    people: Marta, Jonas             the speakers; the first is the archive's owner (role user), the others
                                     have role assistant; every message carries its speaker's name
    lang: en                         (optional, default en) the language of the conversation

    @ 2023-01-07 10:12               a session: its date and start time (turns follow a few minutes apart)
    Marta: a turn                    Name: text
    Jonas*j1: a turn stating j1      Name*labels: the turn states the answer for those labels (comma-separated)

    ? kind | query | j1 m2           a question: kind | query | labels (empty: no answer in the archive)
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MATERIAL = HERE / "material"
KINDS = (
    "single",
    "reply",
    "list",
    "date",
    "relative-date",
    "event-date",
    "when",
    "who",
    "vocab",
    "no-answer",
)
SEED = 30
TURN = re.compile(r"^([^\s:*][^:*]*?)(\*([\w,\-]+))?:\s?(.*)$")
SESSION = re.compile(r"^@\s+(\d{4}-\d{2}-\d{2})\s+(\d{2}):(\d{2})\s*$")


def parse(path: Path) -> dict[str, Any]:
    header: dict[str, str] = {}
    sessions: list[dict[str, Any]] = []
    questions: list[tuple[str, str, list[str]]] = []
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("@"):
            m = SESSION.match(line)
            if not m:
                raise SystemExit(f"{path.name}:{n}: bad session line {line!r}")
            day = dt.date.fromisoformat(m.group(1))
            start = dt.datetime(day.year, day.month, day.day, int(m.group(2)), int(m.group(3)), tzinfo=dt.UTC)
            sessions.append({"start": start, "turns": []})
        elif line.startswith("?"):
            parts = [p.strip() for p in line[1:].split("|")]
            if len(parts) != 3 or parts[0] not in KINDS:
                raise SystemExit(f"{path.name}:{n}: bad question line {line!r}")
            questions.append((parts[0], parts[1], parts[2].split()))
        elif not sessions:
            key, _, value = line.partition(":")
            header[key.strip()] = value.strip()
        else:
            m = TURN.match(line)
            if not m:
                raise SystemExit(f"{path.name}:{n}: bad turn line {line!r}")
            labels = [x for x in (m.group(3) or "").split(",") if x]
            sessions[-1]["turns"].append((m.group(1).strip(), labels, m.group(4).strip(), n))
    people = [p.strip() for p in header["people"].split(",")]
    return {
        "conv": header["conv"],
        "split": header["split"],
        "lang": header.get("lang", "en"),
        "people": people,
        "sessions": sorted(sessions, key=lambda s: s["start"]),
        "questions": questions,
        "file": path.name,
    }


def iso(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def assemble(conv: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    rng = random.Random(f"{SEED}-{conv['conv']}")
    cid, owner = conv["conv"], conv["people"][0]
    messages: list[dict[str, Any]] = []
    by_label: dict[str, list[str]] = defaultdict(list)
    last: dt.datetime | None = None
    for session in conv["sessions"]:
        t = session["start"]
        if last is not None and t <= last:
            raise SystemExit(f"{conv['file']}: session {iso(t)} starts before the previous one ends")
        for speaker, labels, text, line in session["turns"]:
            if speaker not in conv["people"]:
                raise SystemExit(f"{conv['file']}:{line}: unknown speaker {speaker!r}")
            mid = f"{cid}-m{len(messages) + 1:04d}"
            messages.append(
                {
                    "id": mid,
                    "role": "user" if speaker == owner else "assistant",
                    "name": speaker,
                    "content": text,
                    "created_at": iso(t),
                }
            )
            for label in labels:
                by_label[label].append(mid)
            last = t
            t += dt.timedelta(seconds=rng.randint(25, 240))
    thread = {
        "id": f"{cid}-all",
        "title": " and ".join(conv["people"]),
        "created_at": messages[0]["created_at"],
        "messages": messages,
    }
    questions = []
    for i, (kind, query, labels) in enumerate(conv["questions"], start=1):
        answers: list[str] = []
        for label in labels:
            if label not in by_label:
                raise SystemExit(f"{conv['file']}: question {query!r} names unknown label {label!r}")
            answers += [m for m in by_label[label] if m not in answers]
        if (kind == "no-answer") != (not answers):
            raise SystemExit(f"{conv['file']}: {query!r}: no-answer questions (only) have no labels")
        questions.append(
            {
                "id": f"{cid}-q{i:03d}",
                "conversation": cid,
                "query": query,
                "answers": answers,
                "kind": kind,
                "split": conv["split"],
                "lang": conv["lang"],
            }
        )
    return thread, questions


def build(material: Path = MATERIAL) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    threads, questions = [], []
    for path in sorted(material.glob("*.txt")):
        thread, qs = assemble(parse(path))
        threads.append(thread)
        questions += qs
    return threads, questions


def validate(threads: list[dict[str, Any]], questions: list[dict[str, Any]]) -> str:
    ids = [m["id"] for t in threads for m in t["messages"]]
    assert len(ids) == len(set(ids)), "duplicate message ids"
    assert len({q["id"] for q in questions}) == len(questions), "duplicate question ids"
    owner = {m["id"]: t["id"].rsplit("-", 1)[0] for t in threads for m in t["messages"]}
    for q in questions:
        assert all(owner[a] == q["conversation"] for a in q["answers"]), q["id"]
        assert (q["kind"] == "no-answer") == (not q["answers"]), q["id"]
    for split in ("tune", "test"):
        kinds = {q["kind"] for q in questions if q["split"] == split and q["lang"] == "en"}
        missing = set(KINDS) - kinds if any(q["lang"] == "en" for q in questions) else set()
        assert not missing, f"{split} half lacks {sorted(missing)}"
    per = ", ".join(f"{t['id']} {len(t['messages'])}" for t in threads)
    return f"{len(threads)} conversations ({per}), {len(ids)} turns, {len(questions)} questions"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="validate the committed files, write nothing")
    parser.add_argument("--dir", default=str(HERE), help="the set's folder (material/ inside it)")
    args = parser.parse_args(argv)
    folder = Path(args.dir)
    threads, questions = build(folder / "material")
    conv_file, q_file = folder / "conversations.jsonl", folder / "questions.jsonl"
    lines_c = "".join(json.dumps(t, ensure_ascii=False) + "\n" for t in threads)
    lines_q = "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions)
    if args.check:
        if conv_file.read_text(encoding="utf-8") != lines_c or q_file.read_text(encoding="utf-8") != lines_q:
            print(
                "make.py --check: the committed files differ from the material: run make.py", file=sys.stderr
            )
            return 1
    else:
        conv_file.write_text(lines_c, encoding="utf-8")
        q_file.write_text(lines_q, encoding="utf-8")
    print(validate(threads, questions))
    return 0


if __name__ == "__main__":
    sys.exit(main())
