"""Ranking that reads a conversation: sessions, replies, neighbouring turns, who said it, when, and variety.

The two retrievers score each turn alone. A conversation is more than its turns, and the held-out
long-conversation sets showed what the turn-by-turn ranking misses (issue 30, docs/benchmarks/search.md):

- Sessions. A long thread (one chat with a friend over months) is many sittings; a turn in a sitting
  that is about the query is likelier to be the one meant than a stray turn sharing a word. A gap of
  `session_gap` hours between two turns starts a new session; the session boost replaces the old
  whole-thread boost, which in a one-thread archive gave every turn the same lift (no signal at all).
  For a thread with no times, the thread is the session.
- Windows of neighbouring turns: a turn gains a share of the turns up to `window` places either side, in
  its own session, nearer ones weighing more.
- Reply pairs. The answer to "are you still vegetarian?" is "yes, since 2019", which shares no word
  with the question; the turn right after a matching turn by someone else inherits `reply` of its
  match (all of it when that turn asks something, `reply_plain` of it when not), and with
  `join_replies` the reply to a matching question joins the list even when neither retriever found it.
- Who said it. A query about what "I" said prefers the user's turns, one about what "you" said the
  assistant's (`role`); a query naming a speaker (imports that keep each message's author: the
  `name` in a message's metadata) prefers that speaker's turns (`author`).
- When. A date in the query (store.search.dates) lifts the turns written inside its window (`date`).
- Variety. A list or count question ("what are all…", "how many times…") wants one hit per occasion,
  not five turns of one session: `diverse` pushes a result down for each better one from its session.

Every rule is a weight in store.search.rank.Fusion, chosen on the evaluation's tuning half
(bench/tune/tune_search.py); every rule only re-orders messages (memories and summaries keep their scores), so
rules about other kinds (a superseded memory below its successor) compose with these.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from store.search.dates import Window
from store.search.query import STOPWORDS
from store.text import MAX_QUERY_CHARS

FIRST_PERSON = re.compile(r"\b(i|i'm|i've|i'd|i'll|me|my|mine|myself)\b", re.IGNORECASE)
SECOND_PERSON = re.compile(r"\b(you|you're|you've|you'd|your|yours|yourself|the assistant)\b", re.IGNORECASE)
LIST_CUE = re.compile(
    r"\b(how many|how often|what are all|which are all|list|all the|all of|every time|each time|times|"
    r"what (?:kinds?|sorts?|types?) of|so far|ever)\b"
    # a plural asked for: "which books did Jonas recommend", "what activities does Mel do"
    r"|\b(?:what|which)\s+(?:\w+\s+)?\w{3,}s\s+(?:has|have|had|did|does|do|were|are)\b",
    re.IGNORECASE,
)
_NAME_WORD = re.compile(r"[^\W\d_][\w'\u2019-]*")


@dataclass(frozen=True, slots=True)
class Turn:
    """What the ranking needs to know about one message."""

    thread: int
    seq: int
    role: str
    author: str | None  # the speaker's name, where the import kept one
    at: float | None  # epoch seconds
    asks: bool  # the turn asks something (has a question mark)

    @property
    def speaker(self) -> str:
        return self.author.casefold() if self.author else self.role


@dataclass(frozen=True, slots=True)
class Cues:
    """What the query says about where its answer is, read once per search."""

    first_person: bool = False
    second_person: bool = False
    names: frozenset[str] = frozenset()  # casefolded words of the query that could be a speaker's name
    listing: bool = False
    window: Window | None = None


def read_cues(query: str, window: Window | None = None) -> Cues:
    query = query[:MAX_QUERY_CHARS]  # a pasted 10 MB query: its start is what it asks
    # A speaker called Will or May must not be "named" by "when will…" or "in May": stop words and the
    # query's date words are no names.
    dated = set(window.text.split()) if window is not None else set()
    words = frozenset(
        w
        for w in (w.casefold().removesuffix("'s").removesuffix("\u2019s") for w in _NAME_WORD.findall(query))
        if w not in STOPWORDS and w not in dated
    )
    return Cues(
        first_person=bool(FIRST_PERSON.search(query)),
        second_person=bool(SECOND_PERSON.search(query)),
        names=words,
        listing=bool(LIST_CUE.search(query)),
        window=window,
    )


@dataclass(frozen=True, slots=True)
class Neighbourhood:
    """The turns around the candidates: each one's Turn, and each candidate's session key and the turns of
    its window (same session, nearest first, with their distance)."""

    turns: Mapping[int, Turn] = field(default_factory=dict)
    session_of: Mapping[int, tuple[int, int]] = field(default_factory=dict)
    window_of: Mapping[int, Sequence[tuple[int, int]]] = field(default_factory=dict)  # id -> [(id, ±d)]
    after: Mapping[int, int] = field(default_factory=dict)  # a turn -> the candidate right before it

    @classmethod
    def of(
        cls,
        turns: Mapping[int, Turn],
        session_of: Mapping[int, tuple[int, int]],
        window_of: Mapping[int, Sequence[tuple[int, int]]],
    ) -> Neighbourhood:
        after = {n: mid for mid, near in window_of.items() for n, d in near if d == 1}
        return cls(turns, session_of, window_of, after)


def build(turns: Mapping[int, Turn], centres: Sequence[int], window: int, gap_hours: float) -> Neighbourhood:
    """Sessions and windows from the turns read around `centres` (the candidates).

    Sessions are found from what was read: in each thread, turns in order of seq; two turns next to each
    other (seq differs by 1) are in one session unless `gap_hours` or more passed between them; two turns
    further apart are in one session when less than the gap passed between them (no gap of that size can
    lie between them then). The session key is (thread, the first seq of the stretch): exact around every
    candidate, and two candidates far apart in one long sitting may get two keys (harmless: they just do
    not share a session boost)."""
    gap = gap_hours * 3600.0
    by_thread: dict[int, list[tuple[int, int]]] = {}
    for mid, t in turns.items():
        by_thread.setdefault(t.thread, []).append((t.seq, mid))
    session_of: dict[int, tuple[int, int]] = {}
    for tid, rows in by_thread.items():
        rows.sort()
        start = rows[0][0]
        prev: Turn | None = None
        for seq, mid in rows:
            t = turns[mid]
            if prev is not None and _split(prev, t, gap):
                start = seq
            session_of[mid] = (tid, start)
            prev = t
    by_pos = {(t.thread, t.seq): mid for mid, t in turns.items()}
    window_of: dict[int, list[tuple[int, int]]] = {}
    for mid in centres:
        centre = turns.get(mid)
        if centre is None:
            continue
        near = []
        for d in range(1, window + 1):
            for sign in (-1, 1):
                other = by_pos.get((centre.thread, centre.seq + sign * d))
                if other is not None and session_of.get(other) == session_of.get(mid):
                    near.append((other, sign * d))
        window_of[mid] = near
    return Neighbourhood.of(turns, session_of, window_of)


def _split(prev: Turn, t: Turn, gap: float) -> bool:
    if prev.at is None or t.at is None:
        return False
    if t.seq == prev.seq + 1:
        return t.at - prev.at >= gap
    return abs(t.at - prev.at) >= gap


def speaker_names(turns: Mapping[int, Turn]) -> frozenset[str]:
    return frozenset(t.author.casefold() for t in turns.values() if t.author)


def rescore(
    base: Mapping[int, float],
    hood: Neighbourhood,
    cues: Cues,
    weights: Weights,
) -> dict[int, float]:
    """Each candidate's (and joined reply's) new score from the fused scores `base` (0 = no evidence)."""
    best: dict[tuple[int, int], float] = {}
    for mid, s in base.items():
        key = hood.session_of.get(mid)
        if key is not None:
            best[key] = max(best.get(key, 0.0), s)
    named = cues.names & speaker_names(hood.turns)
    speakers = {t.author.casefold() for t in hood.turns.values() if t.author}
    prefer_author = named if named and named != speakers else frozenset()
    prefer_role = None
    if cues.first_person != cues.second_person and not prefer_author:
        prefer_role = "user" if cues.first_person else "assistant"
    ids = set(base)
    if weights.join_replies:
        ids |= {n for mid in base for n, d in hood.window_of.get(mid, ()) if d == 1 and hood.turns[mid].asks}
    norm = sum(1.0 / d for d in range(1, weights.window + 1)) * 2.0 or 1.0
    out: dict[int, float] = {}
    for mid in ids:
        score = base.get(mid, 0.0)
        turn = hood.turns.get(mid)
        near = hood.window_of.get(mid, ())
        if weights.neighbours > 0 and near:
            score += weights.neighbours * sum(base.get(n, 0.0) / abs(d) for n, d in near) / norm
        if turn is not None:
            score += _reply(mid, turn, base, hood, weights)
            key = hood.session_of.get(mid)
            if key is not None and weights.session > 0:
                score += weights.session * best.get(key, 0.0)
            if prefer_author and turn.author and turn.author.casefold() in prefer_author:
                score += weights.author
            elif prefer_role is not None and turn.role == prefer_role:
                score += weights.role
            if (
                cues.window is not None
                and turn.at is not None
                and cues.window.since <= turn.at < cues.window.until
            ):
                score += weights.date
        out[mid] = score
    return out


def _reply(mid: int, turn: Turn, base: Mapping[int, float], hood: Neighbourhood, w: Weights) -> float:
    """What a turn inherits from the turn it answers: the one right before it, in its session, by someone
    else."""
    if w.reply <= 0:
        return 0.0
    for other, d in hood.window_of.get(mid, ()):
        if d == -1:
            prev = hood.turns[other]
            if prev.speaker == turn.speaker:
                return 0.0
            return w.reply * (1.0 if prev.asks else w.reply_plain) * base.get(other, 0.0)
    cand = hood.after.get(mid) if mid not in hood.window_of else None  # a joined reply: its question
    if cand is not None and hood.turns[cand].speaker != turn.speaker:
        return w.reply * base.get(cand, 0.0)
    return 0.0


def diversify(
    order: Sequence[int], scores: Mapping[int, float], hood: Neighbourhood, diverse: float
) -> list[int]:
    """Greedy re-order for list and count questions: each pick costs the rest of its session `diverse`
    of the best score, so the top holds one strong turn per session before a second from any."""
    if diverse <= 0 or not order:
        return list(order)
    top = max(scores.get(order[0], 0.0), 1e-9)
    left = list(order)
    picked: list[int] = []
    used: dict[tuple[int, int] | None, int] = {}
    while left:
        best_i = max(
            range(len(left)),
            key=lambda i: (
                scores.get(left[i], 0.0) - diverse * top * used.get(hood.session_of.get(left[i]), 0)
            ),
        )
        mid = left.pop(best_i)
        picked.append(mid)
        key = hood.session_of.get(mid)
        if key is not None:
            used[key] = used.get(key, 0) + 1
    return picked


@dataclass(frozen=True, slots=True)
class Weights:
    """The conversation rules' weights (store.search.rank.Fusion carries them; see there)."""

    neighbours: float = 0.3
    window: int = 1
    session: float = 0.4
    reply: float = 0.0
    reply_plain: float = 0.0
    join_replies: bool = False
    role: float = 0.0
    author: float = 0.0
    date: float = 0.0
    diverse: float = 0.0


__all__ = ["Cues", "Neighbourhood", "Turn", "Weights", "build", "diversify", "read_cues", "rescore"]
