"""Assemble the long-conversation evaluation set from hand-written material (deterministic).

    python3 bench/eval/longmem/make.py          # writes conversations.jsonl and questions.jsonl, validates
    python3 bench/eval/longmem/make.py --check  # validates the committed files only (no rewrite)

Why a generator at all: the facts, the turns that state them, the distractors, the questions and the
small talk are all written by hand (material/*.txt); what is mechanical is spreading ~4,000 turns over
sessions and months, numbering ids, and pointing each question at every turn that states its answer.
Doing that by hand would be where the mistakes creep in. The seed is fixed, so the committed .jsonl files
are exactly what this script writes.

Material format (material/cNN.txt, one archive each):

    conv: c01                      header lines (key: value) up to the first block
    split: tune | test
    style: assistant | friends     friends = two people, mapped to user/assistant
    lang: en | zh | mix            which small-talk pools the filler comes from
    start: 2025-01-06              the archive spans start..end (filler-only sessions land in between)
    end: 2025-12-19
    turns: 360                     filler is added until the archive has about this many turns
    sessions: 32

    @ f03 2025-02-11 | Session title      a block: turns stated on that day (same date = same session)
    U: plain turn                         U = user role, A = assistant role
    A*: a turn that states fact f03       * = answer turn for the block's label
    U*f04,f05: states f04 and f05         *labels = answer turn for those labels instead
    @ - 2025-03-01 | Title                a block with no label (distractors, context)

    ? single | query text | f03           a question: kind | query | labels (empty: no answer)

Filler pools (material/filler_*.txt): exchanges separated by blank lines, each line `U: …` / `A: …`.
Each archive draws exchanges without replacement from its pools (chat pools for friends, chat + task
pools for assistant archives), so no small-talk exchange repeats inside one archive.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import random
import re
import sqlite3
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MATERIAL = HERE / "material"
KINDS = ("single", "multi-hop", "temporal", "paraphrase", "inference", "keyword", "zh", "mixed", "no-answer")
SEED = 14
FILLER_TITLES_EN = [
    "Catching up",
    "Quick question",
    "Random thoughts",
    "Weekend",
    "Evening chat",
    "Hello again",
    "Small things",
    "Odds and ends",
    "Checking in",
    "Morning",
    "A few things",
    "Nothing much",
]
FILLER_TITLES_ZH = ["随便聊聊", "问个问题", "周末", "晚上好", "最近", "早上", "杂事", "又来了"]
TURN = re.compile(r"^([UA])(\*([\w,\-]*))?:\s?(.*)$")
CJK = re.compile(r"[\u3400-\u9fff]")

# Words that carry no content for the paraphrase check (compared after porter stemming).
STOPWORDS = """
a about above after again against all am an and any are aren't as at be because been before being
below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down
during each few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here
here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself
let's me more most mustn't my myself no nor not of off on once only or other ought our ours ourselves
out over own same shan't she she'd she'll she's should shouldn't so some such than that that's the their
theirs them themselves then there there's these they they'd they'll they're they've this those through
to too under until up very was wasn't we we'd we'll we're we've were weren't what what's when when's
where where's which while who who's whom why why's will with won't would wouldn't you you'd you'll you're
you've your yours yourself yourselves s t d ll m re ve also just get got go going went gone thing things
one ones anything something does did done ever still now yet any much many kind sort way really
""".split()  # noqa: SIM905 (a word list reads better as text)


@dataclass
class Block:
    label: str | None
    date: dt.date
    title: str
    turns: list[tuple[str, str, list[str]]] = field(default_factory=list)  # role, text, answer labels


@dataclass
class Material:
    header: dict[str, str]
    blocks: list[Block]
    questions: list[tuple[str, str, list[str]]]  # kind, query, labels


def parse(path: Path) -> Material:
    header: dict[str, str] = {}
    blocks: list[Block] = []
    questions: list[tuple[str, str, list[str]]] = []
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        where = f"{path.name}:{n}"
        if not line or line.startswith("#"):
            continue
        if line.startswith("@"):
            head, _, title = line[1:].partition("|")
            label, date = head.split()
            blocks.append(Block(None if label == "-" else label, dt.date.fromisoformat(date), title.strip()))
        elif line.startswith("?"):
            parts = [p.strip() for p in line[1:].split("|")]
            if len(parts) != 3 or parts[0] not in KINDS:
                raise SystemExit(f"{where}: bad question line: {line}")
            questions.append((parts[0], parts[1], parts[2].split() if parts[2] else []))
        elif m := TURN.match(line):
            if not blocks:
                raise SystemExit(f"{where}: turn before any block")
            block = blocks[-1]
            labels: list[str] = []
            if m.group(2):
                labels = [x for x in m.group(3).split(",") if x] or ([block.label] if block.label else [])
                if not labels:
                    raise SystemExit(f"{where}: answer mark in an unlabelled block")
            block.turns.append(("user" if m.group(1) == "U" else "assistant", m.group(4).strip(), labels))
        elif not blocks and ":" in line:
            key, _, value = line.partition(":")
            header[key.strip()] = value.strip()
        else:
            raise SystemExit(f"{where}: cannot parse: {line}")
    return Material(header, blocks, questions)


def parse_filler(path: Path) -> list[list[tuple[str, str]]]:
    out: list[list[tuple[str, str]]] = []
    current: list[tuple[str, str]] = []
    for raw in [*path.read_text(encoding="utf-8").splitlines(), ""]:
        line = raw.strip()
        if line.startswith("#"):
            continue
        if not line:
            if current:
                out.append(current)
            current = []
            continue
        m = TURN.match(line)
        if not m or m.group(2):
            raise SystemExit(f"{path.name}: bad filler line: {line}")
        current.append(("user" if m.group(1) == "U" else "assistant", m.group(4).strip()))
    return out


def pools_for(header: dict[str, str]) -> list[list[list[tuple[str, str]]]]:
    lang, style = header["lang"], header["style"]
    langs = {"en": ["en"], "zh": ["zh"], "mix": ["en", "zh", "mix"]}[lang]
    kinds = ["chat"] if style == "friends" else ["chat", "task"]
    pools = []
    for lg in langs:
        for kd in kinds:
            p = MATERIAL / f"filler_{kd}_{lg}.txt"
            if p.exists():
                pools.append(parse_filler(p))
    return pools


def assemble(mat: Material, seed: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """Threads (generic import format) and questions for one archive; warnings as the third value.

    The steps draw from one seeded generator in a fixed order (session dates, small-talk pools and their
    plan, then each session's title, interleaving and clock), so the committed files are reproducible."""
    h = mat.header
    cid, rng = h["conv"], random.Random(f"{seed}-{h['conv']}")
    warnings: list[str] = []
    by_date, session_dates = _session_dates(mat, rng, warnings)
    filler_plan = _filler_plan(mat, rng, len(session_dates))
    titles = FILLER_TITLES_ZH if h["lang"] == "zh" else FILLER_TITLES_EN
    threads = []
    msg_ids: dict[str, list[str]] = defaultdict(list)
    for si, day in enumerate(session_dates, start=1):
        tid = f"{cid}-s{si:02d}"
        threads.append(_thread(tid, day, by_date.get(day, []), filler_plan[si - 1], rng, titles, msg_ids))
    return threads, _questions(mat, msg_ids), warnings


def _session_dates(
    mat: Material, rng: random.Random, warnings: list[str]
) -> tuple[dict[dt.date, list[Block]], list[dt.date]]:
    """The blocks by date, and the session dates: every block's, plus random days up to the header's count."""
    h = mat.header
    cid = h["conv"]
    start, end = dt.date.fromisoformat(h["start"]), dt.date.fromisoformat(h["end"])
    by_date: dict[dt.date, list[Block]] = defaultdict(list)
    for b in mat.blocks:
        if not start <= b.date <= end:
            warnings.append(f"{cid}: block {b.label} on {b.date} outside {start}..{end}")
        by_date[b.date].append(b)
    dates = sorted(by_date)
    n_sessions = max(int(h["sessions"]), len(dates))
    span = (end - start).days
    taken = set(dates)
    while len(taken) < n_sessions:
        taken.add(start + dt.timedelta(days=rng.randrange(span + 1)))
    return by_date, sorted(taken)


def _filler_plan(mat: Material, rng: random.Random, n_sessions: int) -> list[list[list[tuple[str, str]]]]:
    """Small-talk exchanges per session up to the header's turn count: every session gets at least one
    exchange; the rest go to random sessions."""
    h = mat.header
    fact_turns = sum(len(b.turns) for b in mat.blocks)
    pools = [list(p) for p in pools_for(h)]
    for p in pools:
        rng.shuffle(p)
    filler_turns_wanted = max(0, int(h["turns"]) - fact_turns)

    def next_filler(i: int) -> list[tuple[str, str]]:
        pool = pools[i % len(pools)]
        if not pool:
            pool = next((p for p in pools if p), [])
        if not pool:
            raise SystemExit(f"{h['conv']}: ran out of small talk")
        return pool.pop()

    filler_plan: list[list[list[tuple[str, str]]]] = [[] for _ in range(n_sessions)]
    added, i = 0, 0
    while added < filler_turns_wanted:
        s = i if i < n_sessions else rng.randrange(n_sessions)
        ex = next_filler(i)
        filler_plan[s].append(ex)
        added += len(ex)
        i += 1
    return filler_plan


def _thread(
    tid: str,
    day: dt.date,
    blocks: list[Block],
    fillers: list[list[tuple[str, str]]],
    rng: random.Random,
    titles: Sequence[str],
    msg_ids: dict[str, list[str]],
) -> dict[str, Any]:
    """One session: filler exchanges interleaved with the day's blocks (blocks keep their order), the
    messages a few minutes apart; records which message states each label in `msg_ids`."""
    title = blocks[0].title if blocks else rng.choice(titles)
    units: list[tuple[str, Any]] = [("block", b) for b in blocks]
    for ex in fillers:
        units.insert(rng.randrange(len(units) + 1), ("filler", ex))
    clock = dt.datetime.combine(day, dt.time(rng.randrange(7, 23), rng.randrange(60)), tzinfo=dt.UTC)
    created = clock
    messages: list[dict[str, Any]] = []
    for kind, unit in units:
        turns = unit.turns if kind == "block" else [(r, t, []) for r, t in unit]
        for role, text, labels in turns:
            mid = f"{tid}-m{len(messages) + 1:03d}"
            messages.append({"id": mid, "role": role, "content": text, "created_at": iso(clock)})
            for lb in labels:
                msg_ids[lb].append(mid)
            clock += dt.timedelta(seconds=rng.randrange(20, 240))
    return {"id": tid, "title": title, "created_at": iso(created), "messages": messages}


def _questions(mat: Material, msg_ids: dict[str, list[str]]) -> list[dict[str, Any]]:
    """The archive's questions with the ids of the messages that answer them (checked against the labels)."""
    h = mat.header
    cid = h["conv"]
    questions = []
    for qi, (kind, query, labels) in enumerate(mat.questions, start=1):
        answers: list[str] = []
        for lb in labels:
            if lb not in msg_ids:
                raise SystemExit(f"{cid}: question {qi} points at {lb}, which no turn states")
            answers += [m for m in msg_ids[lb] if m not in answers]
        if (kind == "no-answer") != (not labels):
            raise SystemExit(f"{cid}: question {qi} ({kind}) and its answers disagree: {query}")
        lang = (
            "zh"
            if CJK.search(query) and not re.search(r"[A-Za-z]{3,}", query)
            else ("mixed" if CJK.search(query) else "en")
        )
        questions.append(
            {
                "id": f"{cid}-q{qi:03d}",
                "conversation": cid,
                "query": query,
                "answers": answers,
                "kind": kind,
                "split": h["split"],
                "lang": lang,
            }
        )
    return questions


def iso(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


# -- validation ---------------------------------------------------------------------------------------


class Stemmer:
    """Porter stems via SQLite's own FTS5 porter tokenizer (the one the baseline uses): no dependency."""

    def __init__(self) -> None:
        self.con = sqlite3.connect(":memory:")
        self.con.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61')")
        self.con.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        self.stop = self.terms(" ".join(STOPWORDS))

    def terms(self, text: str) -> set[str]:
        self.con.execute("DELETE FROM t")
        self.con.execute("INSERT INTO t(rowid, x) VALUES (1, ?)", (text,))
        return {str(r[0]) for r in self.con.execute("SELECT term FROM v")}

    def content(self, text: str) -> set[str]:
        return self.terms(text) - self.stop


def validate(conversations: list[dict[str, Any]], questions: list[dict[str, Any]]) -> dict[str, Any]:
    """Raise on a broken set; return the counts the README shows."""
    problems: list[str] = []
    tids = [t["id"] for t in conversations]
    mids = [m["id"] for t in conversations for m in t["messages"]]
    if len(set(tids)) != len(tids):
        problems.append("duplicate thread ids")
    if len(set(mids)) != len(mids):
        problems.append("duplicate message ids")
    text = {m["id"]: m["content"] for t in conversations for m in t["messages"]}
    qids = [q["id"] for q in questions]
    if len(set(qids)) != len(qids):
        problems.append("duplicate question ids")
    stem = Stemmer()
    for q in questions:
        for a in q["answers"]:
            if a not in text:
                problems.append(f"{q['id']}: answer {a} does not exist")
            elif not a.startswith(q["conversation"] + "-"):
                problems.append(f"{q['id']}: answer {a} is in another conversation")
        if q["kind"] == "paraphrase":
            qs = stem.content(q["query"])
            for a in q["answers"]:
                shared = qs & stem.content(text[a])
                if shared:
                    problems.append(f"{q['id']}: paraphrase shares {sorted(shared)} with {a}")
    counts: dict[str, dict[str, int]] = {}
    for split in ("tune", "test"):
        per = {k: sum(1 for q in questions if q["split"] == split and q["kind"] == k) for k in KINDS}
        counts[split] = per
        missing = [k for k, n in per.items() if n == 0]
        if missing:
            problems.append(f"{split} half has no {missing}")
    if problems:
        raise SystemExit("invalid evaluation set:\n  " + "\n  ".join(problems))
    convs = sorted({t["id"].rsplit("-", 1)[0] for t in conversations})
    return {
        "conversations": len(convs),
        "sessions": len(tids),
        "turns": len(mids),
        "questions": len(questions),
        "per_kind": counts,
    }


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def build() -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    conversations, questions, warnings = [], [], []
    for path in sorted(MATERIAL.glob("c*.txt")):
        threads, qs, warn = assemble(parse(path), SEED)
        conversations += threads
        questions += qs
        warnings += warn
    return conversations, questions, warnings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="validate the committed files, write nothing")
    args = parser.parse_args(argv)
    if args.check:
        conversations = load_jsonl(HERE / "conversations.jsonl")
        questions = load_jsonl(HERE / "questions.jsonl")
    else:
        conversations, questions, warnings = build()
        for w in warnings:
            print("warning:", w, file=sys.stderr)
        stats = validate(conversations, questions)
        for name, rows in (("conversations.jsonl", conversations), ("questions.jsonl", questions)):
            with (HERE / name).open("w", encoding="utf-8") as fh:
                for row in rows:
                    fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    stats = validate(conversations, questions)
    digest = hashlib.sha256()
    for name in ("conversations.jsonl", "questions.jsonl"):
        digest.update((HERE / name).read_bytes())
    stats["sha256"] = digest.hexdigest()[:16]
    print(json.dumps(stats, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
