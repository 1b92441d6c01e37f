"""A user's search text, parsed once per search: its searchable phrases, the FTS5 expression, its CJK share.

Why one ParsedQuery: the keyword retriever, the BM25 re-scoring, the fusion (which leans on keywords for
Chinese text), the relevance floor and every result's snippet all need the same reading of the query;
parsing it per result cost more than the search itself on a 50-row TUI page.

Why the keyword expression is an OR of quoted phrases: users type questions, not boolean queries; BM25
ranks a message sharing more of the words first, and a word that is FTS5 syntax (`AND`, `c++`, `-x`,
`"`, `col:`) is only ever a quoted phrase. A run of CJK characters is searched as its overlapping pairs,
because the index holds CJK one character per token (store.text.index_text) and Chinese is written
without spaces: the query 熊猫基地几点去 then finds a message that contains 熊猫 or 基地.

Why stop words are always dropped (even when nothing else is left): a word like "should" or "what" is in
half of any archive, so a match on it is no evidence at all; a query made only of them has nothing to
search for and says so (docs/guide/search.md). The same holds for a CJK pair made of two function characters
(我们, 什么, 怎么).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from itertools import groupby, pairwise

from store.text import MAX_QUERY_CHARS, MAX_QUERY_TOKENS, query_terms

_WORD = re.compile(r"\w[\w']*")
_POSSESSIVE = re.compile(r"(?<=\w\w)['\u2019][sS](?=\W*$)")  # "Tom's" is searched as "Tom"
MIN_PREFIX = 3  # a shorter last word is matched whole: "a*" would expand to half the vocabulary
CJK1 = re.compile(
    r"^[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003134f]$"
)

# English function words: pronouns, auxiliaries, determiners, prepositions, conjunctions, question words.
STOPWORDS = frozenset(
    """
a about above after again against all am an and any are aren't as at be because been before being below
between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during
each else ever few for from further had hadn't has hasn't have haven't having he he'd he'll he's her
here here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its
itself just let's me might more most much must mustn't my myself no nor not of off on once only or other
ought our ours ourselves out over own same shall shan't she she'd she'll she's should shouldn't so some
such than that that's the their theirs them themselves then there there's these they they'd they'll
they're they've this those through to too under until up upon us very was wasn't we we'd we'll we're
we've were weren't what what's when when's where where's whether which while who who's whom whose why
why's will with won't would wouldn't you you'd you'll you're you've your yours yourself yourselves also
any anything something ever ok okay yes yeah oh
""".split()  # noqa: SIM905 - a word list reads best as text
)
# Characters that only glue Chinese words together: a pair of two of them (我们, 什么) is no evidence.
CJK_FUNCTION_CHARS = frozenset(
    "的了是在我你他她它们这那和与就不也都要会吗呢吧啊把被给很太还又再从到说让能没么什怎样些得地着过为而及或等但因所然个一有该哪呀嗯哦几谁多少"
)


# Two-character fillers that carry no topic (时候 "when", 可以 "can", 觉得 "think"...).
CJK_STOP_PAIRS = frozenset(
    [
        "时候",
        "可以",
        "一下",
        "一点",
        "觉得",
        "应该",
        "然后",
        "但是",
        "所以",
        "因为",
        "如果",
        "或者",
        "而且",
        "其实",
        "就是",
        "还是",
        "已经",
        "东西",
        "怎么",
        "什么",
    ]
)


def _quote(phrase: str) -> str:
    return '"' + phrase.replace('"', '""') + '"'


def _is_stop(phrase: str) -> bool:
    """A phrase whose words are all stop words ("what?", "don't"), or a pair of CJK function characters."""
    if CJK1.match(phrase[:1]):
        chars = phrase.replace(" ", "")
        return chars in CJK_STOP_PAIRS or all(c in CJK_FUNCTION_CHARS for c in chars)
    words = _WORD.findall(phrase.casefold().replace("\u2019", "'"))
    return bool(words) and all(w.strip("'") in STOPWORDS or w in STOPWORDS for w in words)


def _strip_wide_punctuation(phrase: str) -> str:
    """Drop non-ASCII punctuation (，。？！、「」…) from a phrase's ends. Chinese text puts it right against
    the words, so 狗？ and ，Jay left a phrase "？" (found in no row: the rarest word of every Chinese
    question, it cut the share of the query found by half) and "，Jay" (Jay counted twice). The index
    never holds punctuation; ASCII punctuation is left alone (c++, -x and O'Reilly stay as typed)."""
    start, end = 0, len(phrase)
    while start < end and not phrase[start].isascii() and unicodedata.category(phrase[start])[0] == "P":
        start += 1
    while end > start and not phrase[end - 1].isascii() and unicodedata.category(phrase[end - 1])[0] == "P":
        end -= 1
    return phrase[start:end].strip()


def all_phrases(text: str) -> list[str]:
    """The query's phrases as the index sees them: words, and CJK runs as overlapping character pairs."""
    phrases: list[str] = []
    for term in query_terms(text):
        for is_cjk, group in groupby(term.split(" "), key=lambda piece: bool(CJK1.match(piece))):
            pieces = list(group)
            if not is_cjk:
                phrase = _strip_wide_punctuation(_POSSESSIVE.sub("", " ".join(pieces)))
                if phrase:
                    phrases.append(phrase)
            elif len(pieces) == 1:
                phrases.append(pieces[0])
            else:
                phrases.extend(f"{a} {b}" for a, b in pairwise(pieces))
    return phrases


def cjk_share(text: str) -> float:
    """The share of CJK characters among the non-space characters of `text` (of its start: a pasted
    10 MB query must not take seconds here)."""
    chars = [c for c in text[:MAX_QUERY_CHARS] if not c.isspace()]
    return sum(1 for c in chars if CJK1.match(c)) / len(chars) if chars else 0.0


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    """What a search needs from the user's text, computed once."""

    text: str
    phrases: tuple[str, ...]  # searchable phrases (stop words dropped), in order, de-duplicated, capped
    prefix: str | None  # the phrase matched as a prefix (the word being typed), if any
    cjk: float  # share of CJK characters: the fusion leans on keywords for Chinese text
    stop_only: bool  # the text had words, but only stop words

    @property
    def expression(self) -> str | None:
        """An FTS5 OR-expression that can never be a syntax error; None when nothing is searchable.
        Phrase i of the expression is `phrases[i]` (the BM25 re-scoring relies on that order)."""
        if not self.phrases:
            return None
        return " OR ".join(_quote(p) + ("*" if p == self.prefix else "") for p in self.phrases)

    @property
    def needles(self) -> list[str]:
        """Casefolded strings to look for in a result's text (for its snippet)."""
        return [p.replace(" ", "").casefold() if CJK1.match(p[:1]) else p.casefold() for p in self.phrases]


def parse_query(text: str, *, prefix_last: bool = False) -> ParsedQuery:
    """Parse `text`. prefix_last: the last word, still being typed (no space after it), matches as a prefix."""
    found = all_phrases(text)
    unique = list(dict.fromkeys(found))
    kept = [p for p in unique if not _is_stop(p)][:MAX_QUERY_TOKENS]
    typing = (
        prefix_last
        and bool(found)
        and bool(text[-1:].strip())
        and found[-1] in kept
        and not CJK1.match(found[-1][-1:])
        and len(found[-1]) >= MIN_PREFIX
    )
    return ParsedQuery(
        text=text,
        phrases=tuple(kept),
        prefix=found[-1] if typing else None,
        cjk=cjk_share(text),
        stop_only=bool(unique) and not kept,
    )


def keyword_expression(text: str, *, prefix_last: bool = False) -> str | None:
    """The FTS5 expression for `text` (see ParsedQuery.expression)."""
    return parse_query(text, prefix_last=prefix_last).expression
