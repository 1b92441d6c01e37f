"""Key terms and phrases per thread, with mention counts, for `memory_topics` (shown in the TUI and
given to the model in the context builder's tier 1).

English: candidate terms are content words and two-word phrases inside a clause (no stopword or
punctuation between them), ranked by mention count times inverse document frequency over all stored
messages. The document frequencies come from the keyword index itself (an `fts5vocab` view of
`fts_messages`), so a word every thread uses ("python" in a Python-only archive) does not crowd out
what this thread is about, at no extra storage.

Chinese: there are no spaces and we add no segmenter (jieba is a 20 MB dictionary for a side feature).
Runs of CJK characters are cut at function characters (的, 了, 是 …) and the 2–4 character n-grams of the
pieces are counted; an n-gram that almost always occurs inside a longer frequent one is dropped, so
"五花肉" survives and its fragments "五花" and "花肉" do not.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import apsw

from store.extract import sentences

if TYPE_CHECKING:
    from store.store import Store

MAX_TOPICS = 20
MAX_WORDS = 3  # longest English phrase counted
MAX_CJK_CHARS = 6  # longest CJK n-gram counted
SAMPLE_CHARS = 300_000  # a longer thread's topics come from an even sample of about this much text
_CLAUSE = re.compile(r"[,;:!?()\[\]{}\"“”'‘’/|<>=，。；：！？、（）《》【】]|\.(?:\s|$)|\s[-–—]\s")
_INDEX_TOKEN = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class Topic:
    topic: str
    mention_count: int
    last_seen_at: float
    score: float


def _keep_word(word: str) -> bool:
    low = word.lower()
    if low in sentences.STOPWORDS or not any(ch.isalpha() for ch in word):
        return False
    return len(word) >= 3 or (len(word) == 2 and word.isupper()) or any(c in word for c in "+#")


def _ascii_fold(text: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))


class _DocFreq:
    """Document frequencies of index tokens across all messages, read from the FTS index."""

    def __init__(self, con: apsw.Connection) -> None:
        self.con = con
        con.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab_messages "
            "USING fts5vocab(main, 'fts_messages', 'row')"
        )
        row = con.execute("SELECT count(*) FROM messages").fetchone()
        self.n = cast(int, row[0]) if row else 0
        self.max_idf = math.log(self.n + 1) + 1.0
        self._cache: dict[str, float] = {}
        # The index holds porter stems (store.text.FTS_TOKENIZE): look terms up the way the index reads them.
        self._tokenize = con.fts5_tokenizer("porter", ["unicode61", "remove_diacritics", "2"])

    def idf(self, term: str) -> float:
        """Mean idf of the term's index tokens, scaled to 0..1."""
        if term not in self._cache:
            words = _INDEX_TOKEN.findall(_ascii_fold(term.lower())) or [term.lower()]
            tokens = [t for w in words for t in self._tokenize(w.encode(), apsw.FTS5_TOKENIZE_QUERY, None)]
            parts = [str(t[-1]) for t in tokens] or words
            vals = []
            for p in parts:
                row = self.con.execute("SELECT doc FROM temp.vocab_messages WHERE term = ?", (p,)).fetchone()
                doc = int(row[0]) if row else 1
                vals.append(math.log((self.n + 1) / (doc + 1)) + 1.0)
            self._cache[term] = (sum(vals) / len(vals)) / self.max_idf
        return self._cache[term]


def _latin_counts(texts: list[str]) -> tuple[Counter[str], dict[str, Counter[str]]]:
    """Counts of 1- to 3-word phrases inside clauses (lowercased keys), and each word's written forms."""
    counts: Counter[str] = Counter()
    forms: dict[str, Counter[str]] = defaultdict(Counter)
    keep: dict[str, bool] = {}
    for text in texts:
        for clause in _CLAUSE.split(text):
            run: list[str] = []
            for word in sentences.latin_words(clause) + [""]:
                ok = keep.get(word)
                if ok is None:
                    ok = keep[word] = bool(word) and _keep_word(word)
                if ok:
                    run.append(word)
                    continue
                low = [w.lower() for w in run]
                for w, low_w in zip(run, low, strict=True):
                    forms[low_w][w] += 1
                for n in range(1, min(MAX_WORDS, len(run)) + 1):
                    counts.update(" ".join(low[i : i + n]) for i in range(len(run) - n + 1))
                run = []
    # "task" and "tasks" are one topic, counted under the form used more often.
    for key in [k for k in counts if k.endswith("s") and not k.endswith("ss") and k[:-1] in counts]:
        one = key[:-1]
        main, other = (one, key) if counts[one] >= counts[key] else (key, one)
        counts[main] += counts.pop(other)
        if " " not in key:
            forms[main].update(forms.pop(other, Counter()))
    return counts, forms


def _cjk_counts(texts: list[str]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for text in texts:
        for seg in sentences.cjk_segments(text):
            for n in range(2, min(MAX_CJK_CHARS, len(seg)) + 1):
                counts.update(
                    g
                    for g in (seg[i : i + n] for i in range(len(seg) - n + 1))
                    if not any(w in g for w in sentences.CJK_STOPWORDS)
                )
    return counts


def _display(key: str, forms: dict[str, Counter[str]]) -> str:
    """A phrase as it is most often written ("sqlite" -> "SQLite")."""
    return " ".join(forms[w].most_common(1)[0][0] if forms.get(w) else w for w in key.split(" "))


def _last_seen(topic: str, texts: list[tuple[str, float]]) -> float:
    needle = topic.lower().rstrip("s")
    for text, at in reversed(texts):
        if needle in text.lower():
            return at
    return texts[-1][1] if texts else 0.0


def _without_fragments(counts: Counter[str], min_count: int, sep: str) -> dict[str, int]:
    """Terms that are not mostly used inside a longer frequent term (which represents them).

    Each kept term credits its two one-shorter parts (drop the first or last word/character), so the
    check is linear in the number of terms.
    """
    kept = {g: c for g, c in counts.items() if c >= min_count}
    inside: Counter[str] = Counter()
    for g, c in kept.items():
        parts = g.split(sep) if sep else list(g)
        if len(parts) > 1:
            for sub in {sep.join(parts[1:]), sep.join(parts[:-1])}:
                inside[sub] += c
    return {g: c for g, c in kept.items() if c - inside[g] >= min_count or inside[g] == 0}


def extract_topics(store: Store, texts: list[tuple[str, float]], limit: int = MAX_TOPICS) -> list[Topic]:
    """The top `limit` key terms of these (text, time) pairs, best first."""
    prose = [sentences.clean_prose(t) for t, _ in texts]
    min_count = 2 if len(texts) >= 6 else 1
    latin, forms = _latin_counts(prose)
    cjk = _cjk_counts(prose)
    # Rank by count first and look up document frequencies only for the front runners: a thread has
    # thousands of distinct phrases, and each lookup is an index read.
    weighted = sorted(
        (
            (c * (1.0 + 0.3 * k.count(" ")), k, c)
            for k, c in _without_fragments(latin, min_count, " ").items()
        ),
        reverse=True,
    )
    df = _DocFreq(store.con)
    scored = [(w * df.idf(k), _display(k, forms), c) for w, k, c in weighted[: limit * 8]]
    scored += [
        (c * 0.8 * (1 + 0.1 * (len(g) - 2)), g, c) for g, c in _without_fragments(cjk, min_count, "").items()
    ]
    scored.sort(key=lambda t: (-t[0], -t[2], t[1]))
    dated = list(zip(prose, (at for _, at in texts), strict=True))
    return [Topic(name, c, _last_seen(name, dated), score) for score, name, c in scored[:limit]]


def thread_topics(store: Store, thread_id: int, limit: int = MAX_TOPICS) -> list[Topic]:
    """Key terms of a thread's user and assistant messages (tool output and system text excluded).

    A very long thread is read as an even sample of its messages (every k-th, about SAMPLE_CHARS of text)
    and the counts are scaled back up: topics are refreshed on every summary update, and re-reading a
    million tokens each time would cost seconds for a ranking that the sample already gives.
    """
    where = "thread_id = ? AND role IN ('user', 'assistant')"
    row = store.con.execute(
        f"SELECT count(*), coalesce(sum(length(content)), 0) FROM messages WHERE {where}", (thread_id,)
    ).fetchone()
    n, chars = (cast(int, row[0]), cast(int, row[1])) if row else (0, 0)
    step = max(1, math.ceil(chars / SAMPLE_CHARS))
    rows = list(
        store.con.execute(
            f"SELECT content, coalesce(created_at, 0) FROM messages WHERE {where} ORDER BY seq", (thread_id,)
        )
        if step == 1
        else store.con.execute(
            f"SELECT content, coalesce(created_at, 0) FROM (SELECT content, created_at, seq, "
            f"row_number() OVER (ORDER BY seq) AS i FROM messages WHERE {where}) WHERE i % ? = 0 ORDER BY seq",
            (thread_id, step),
        )
    )
    found = extract_topics(store, [(str(c), float(at)) for c, at in rows], limit)
    if step == 1 or not rows:
        return found
    scale = n / len(rows)
    return [Topic(t.topic, round(t.mention_count * scale), t.last_seen_at, t.score) for t in found]


def write_topics(con: apsw.Connection, thread_id: int, topics: list[Topic]) -> None:
    """Replace the thread's topics (inside the caller's transaction)."""
    con.execute("DELETE FROM memory_topics WHERE thread_id = ?", (thread_id,))
    for t in topics:
        con.execute(
            "INSERT INTO memory_topics(thread_id, topic, mention_count, last_seen_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(thread_id, topic) DO UPDATE SET mention_count = max(mention_count, excluded.mention_count)",
            (thread_id, t.topic, t.mention_count, t.last_seen_at),
        )


def update_topics(store: Store, thread_id: int) -> list[tuple[str, int]]:
    """Recompute and store a thread's topics; returns them as (topic, mention_count), most mentioned first."""
    store.get_thread(thread_id)
    found = thread_topics(store, thread_id)
    with store.con:
        write_topics(store.con, thread_id, found)
    return store.get_topics(thread_id)
