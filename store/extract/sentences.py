"""Chat text cut into the units the offline summariser, topic extractor and suggester work on.

Why this exists: those three read the same messages and must agree on what a "sentence" is, what is
code (never summarised, never a memory), what is a reasoning trace (never shown), and what a word is in
English and in Chinese. Without an LLM, the quality of all three rests on this cleaning, so it lives in
one place with tests instead of three slightly different regexes.

Words: Latin-script words keep inner `-`, `.`, `+`, `#` (`sqlite-vec`, `node.js`, `c++`, `c#`); CJK
text has no spaces, so it is handled as characters and character n-grams (no segmenter dependency).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator, Sequence

import numpy as np

_CJK_RANGES = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
CJK_CHAR = re.compile(f"[{_CJK_RANGES}]")
CJK_RUN = re.compile(f"[{_CJK_RANGES}]+")

# Reasoning traces some exports leave inline: local models' <think>, Open WebUI's <details type="reasoning">.
_REASONING = re.compile(
    r"<(think|thinking|reasoning)>.*?(?:</\1>|\Z)"
    r"|<details\b[^>]*\btype=[\"']?reasoning[\"']?[^>]*>.*?(?:</details>|\Z)",
    re.S | re.I,
)
_FENCE = re.compile(r"(```|~~~).*?(?:\1|\Z)", re.S)
_URL = re.compile(r"https?://\S+|www\.\S+")
_MD_PREFIX = re.compile(r"^\s*(?:[-*+>•]|\d{1,3}[.)]|#{1,6})\s+")
_EMPHASIS = re.compile(r"(\*\*|__|\*(?=\S)|(?<=\S)\*)")
# A sentence ends at . ! ? followed by space and a capital/digit/CJK/quote, or right after a CJK stop.
_SPLIT = re.compile(
    rf"(?:(?<=[.!?])|(?<=[.!?][\"')\]]))\s+(?=[\"'(\[]?[A-Z0-9{_CJK_RANGES}])"
    rf"|(?<=[。！？；])\s*|(?<=[!?])(?=[{_CJK_RANGES}])"
)
_LATIN_WORD = re.compile(r"[A-Za-z\u00c0-\u024f0-9][\w.+#'-]*[\w+#]|[A-Za-z\u00c0-\u024f0-9]")
_WS = re.compile(r"\s+")


def _words(text: str) -> list[str]:
    return text.split()


STOPWORDS = frozenset(
    _words("""
a about above after again against all almost also although always am an and another any anyone anything
are aren't around as at be because been before being below between both but by can can't cannot could
couldn't did didn't do does doesn't doing don't done down during each either else enough etc even ever
every few for from further get gets getting give go goes going gonna got had hasn't have haven't having he
her here hers herself him himself his how however i i'd i'll i'm i've if in instead into is isn't it it's
its itself just keep kind know let let's like likely lot lots made make makes many may maybe me might mine
more most much must my myself need needs never new no nor not now of off often oh ok okay on once one only
or other others our ours ourselves out over own per please pretty probably quite rather re really right
same say says see seem seems shall she should shouldn't since so some something sometimes still such sure
take than thank thanks that that's the their theirs them themselves then there there's these they they're
thing things think this those though through thus to too try trying two under until up upon us use used
uses using usually very via want wants was wasn't way we we'd we'll we're we've well were weren't what
what's when where whether which while who whom whose why will with within without won't would wouldn't
yeah yes yet you you'd you'll you're you've your yours yourself yourselves also actually basically e.g i.e
vs first second next last back good great better best lot bit able sure here's let’s it’s don’t i’m
nothing everything anything something inside already run runs work works bad call calls year years word
words line lines return returns pass list raise raises time times day days part end start look looks put
makes case cases point idea fine big small little long short high low old true false wrong example answer
question problem issue option reason change step number value result results tb gb mb kb ms add adds added
handle handles handled people person include includes provide provides allow allows help helps helped give
gives given takes took taken tell told said show shows shown create created called
""")
)

# Two-character Chinese function words and fillers: an n-gram containing one is not a topic.
CJK_STOPWORDS = tuple(
    _words("""
可以 什么 怎么 这个 那个 就是 还是 已经 一下 一点 时候 出来 起来 下来 比较 非常 应该 需要 觉得 知道
如何 其实 然后 但是 所以 因为 如果 或者 而且 以后 现在 今天 明天 大家 自己 东西 问题 方面 部分 建议
可能 一些
""")
)

# Characters that glue Chinese words together rather than carry a topic (function words, pronouns).
CJK_STOP_CHARS = frozenset(
    "的了是在我你他她它们这那和与就不也都要会吗呢吧啊把被给很太还又再从到说让能没么什怎样些得地着过为而及或等但因所然个一有该哪呀嗯哦"
)


def strip_reasoning(text: str) -> str:
    """`text` without inline reasoning/thinking blocks."""
    return _REASONING.sub("", text)


def has_reasoning(text: str) -> bool:
    return _REASONING.search(text) is not None


def clean_prose(text: str) -> str:
    """Reasoning, fenced code and URLs removed: what a person would read as the message's prose."""
    return _URL.sub(" ", _FENCE.sub("\n", strip_reasoning(text)))


def split_sentences(text: str) -> Iterator[str]:
    """Sentences of a message's prose, Markdown list/heading markers and emphasis removed.

    Table rows are skipped: they are fragments whose meaning is the table, not sentences.
    """
    for raw in clean_prose(text).splitlines():
        line = raw.strip()
        if not line or line.startswith("|"):
            continue
        line = _EMPHASIS.sub("", _MD_PREFIX.sub("", line)).strip()
        for piece in _SPLIT.split(line):
            piece = _WS.sub(" ", piece).strip()
            if piece:
                yield piece


def cjk_share(text: str) -> float:
    letters = sum(1 for ch in text if not ch.isspace())
    return len(CJK_CHAR.findall(text)) / letters if letters else 0.0


def size(text: str) -> float:
    """Length in 'words': Latin words plus CJK characters / 1.5 (a Chinese word is ~1.5 characters)."""
    return len(_LATIN_WORD.findall(CJK_RUN.sub(" ", text))) + len(CJK_CHAR.findall(text)) / 1.5


def latin_words(text: str) -> list[str]:
    """Latin-script words in order, as written (case kept), CJK removed."""
    return [w.rstrip(".'-") for w in _LATIN_WORD.findall(CJK_RUN.sub(" ", text))]


def cjk_segments(text: str) -> list[str]:
    """Runs of CJK characters split at function characters (的, 了, 是 …): candidate word material."""
    out: list[str] = []
    for run in CJK_RUN.findall(text):
        seg = ""
        for ch in run:
            if ch in CJK_STOP_CHARS:
                if seg:
                    out.append(seg)
                seg = ""
            else:
                seg += ch
        if seg:
            out.append(seg)
    return out


def features(text: str) -> list[str]:
    """Terms for TF-IDF: content words (lowercased) and CJK character bigrams."""
    feats = [w.lower() for w in latin_words(text) if w.lower() not in STOPWORDS and len(w) > 1]
    for seg in CJK_RUN.findall(text):
        if len(seg) == 1:
            feats.append(seg)
        feats += [seg[i : i + 2] for i in range(len(seg) - 1)]
    return feats


def tfidf_vectors(texts: Sequence[str]) -> np.ndarray:
    """L2-normalised TF-IDF rows (sublinear tf, smoothed idf): the no-model stand-in for embeddings."""
    docs = [Counter(features(t)) for t in texts]
    df: Counter[str] = Counter()
    for d in docs:
        df.update(d.keys())
    vocab = {term: i for i, term in enumerate(df)}
    n = len(texts)
    mat = np.zeros((n, max(1, len(vocab))), dtype=np.float32)
    for row, d in enumerate(docs):
        for term, tf in d.items():
            mat[row, vocab[term]] = (1.0 + math.log(tf)) * (math.log((1 + n) / (1 + df[term])) + 1.0)
    norms = np.linalg.norm(mat, axis=1, keepdims=True)
    return np.asarray(mat / np.maximum(norms, 1e-12), dtype=np.float32)
