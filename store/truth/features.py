"""What two memory texts disagree about, read from the words alone (no model, no database).

Why rules at all: an embedding says two texts are about the same thing, not whether they agree. "I prefer
uv over pip" and "I prefer pip over uv" are 0.94 apart in all-MiniLM-L6-v2 cosine, closer than most true
paraphrases. So a cosine alone cannot tell an edit from a reversal; these signals can, cheaply:

- polarity: a negation or a negative verb on one side only ("no longer", "stopped", "never", "dislike",
  不/没/不再/讨厌); "而不是" and "rather than" are comparisons, not negations;
- antonyms: like/dislike, early/late, short/detailed, 深色/浅色…;
- swapped preference: "X over Y" on one side, "Y over X" on the other (or the new text prefers something
  else over what the old one named);
- values: numbers (digits, English and Chinese number words), names (capitalised words that do not start
  the sentence, Latin words inside Chinese text) and a changed slot ("my dog is called Rex" → "… Bruno");
- change markers: "moved to", "now", "upgraded", 搬到, 换成, 现在… say the new text is an update.

Each function is pure and cheap (a few regexes over two short strings), so classifying a new memory
against its neighbours costs nothing next to the one embedding it needs anyway.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]|[0-9]+(?:[.:,][0-9]+)*|[A-Za-z][A-Za-z0-9.+#'’_-]*[A-Za-z0-9+#]|[A-Za-z]")
_HAS_CJK = re.compile(f"[{_CJK}]")

STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "i",
        "i'm",
        "im",
        "my",
        "me",
        "we",
        "our",
        "us",
        "you",
        "your",
        "he",
        "she",
        "it",
        "its",
        "they",
        "them",
        "their",
        "is",
        "am",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "to",
        "of",
        "in",
        "on",
        "at",
        "for",
        "with",
        "by",
        "from",
        "as",
        "and",
        "or",
        "but",
        "so",
        "that",
        "this",
        "these",
        "those",
        "there",
        "here",
        "it's",
        "do",
        "does",
        "did",
        "have",
        "has",
        "had",
        "having",
        "will",
        "would",
        "should",
        "can",
        "could",
        "may",
        "might",
        "must",
        "about",
        "into",
        "over",
        "than",
        "then",
        "just",
        "also",
        "really",
        "very",
        "please",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "all",
        "any",
        "each",
        "few",
        "more",
        "most",
        "other",
        "some",
        "such",
        "only",
        "own",
        "same",
        "too",
        "s",
        "t",
        "let's",
        "let",
        "one's",
    ]
)

# Negations and negative verbs: one side only flips the statement.
_NEG_EN = re.compile(
    r"\b(?:not|no|never|none|nobody|nothing|neither|nor|cannot|without|"
    r"(?:do|does|did|is|are|was|were|wo|ca|could|would|should|have|has|had)n['’]?t|"
    r"no\s+longer|any\s?more|stopped|stop|quit|quitted|gave\s+up|give\s+up|dropped|"
    r"dislikes?|disliked|hates?|hated|avoids?|avoided|distrusts?|can['’]?t\s+stand|against)\b",
    re.IGNORECASE,
)
_NOT_NEG_EN = re.compile(r"\b(?:rather\s+than|instead\s+of|not\s+only|no\s+matter)\b", re.IGNORECASE)
_NEG_ZH = re.compile(r"不再|不|没有|没|别|从不|从没|讨厌|戒|放弃|停止|停用|拒绝")
_NOT_NEG_ZH = re.compile(r"而不是|不是.{0,6}而是|不错|不同|不仅|不少|差不多|不管")

_ANTONYMS_EN: tuple[tuple[str, str], ...] = (
    ("like", "dislike"),
    ("likes", "dislikes"),
    ("love", "hate"),
    ("loves", "hates"),
    ("enjoy", "dislike"),
    ("enjoys", "dislikes"),
    ("prefer", "avoid"),
    ("prefers", "avoids"),
    ("trust", "distrust"),
    ("trusts", "distrusts"),
    ("always", "never"),
    ("short", "long"),
    ("concise", "detailed"),
    ("brief", "detailed"),
    ("short", "detailed"),
    ("light", "dark"),
    ("early", "late"),
    ("morning", "night"),
    ("morning", "evening"),
    ("remote", "office"),
    ("enable", "disable"),
    ("enabled", "disabled"),
    ("agree", "disagree"),
    ("allow", "forbid"),
    ("include", "exclude"),
    ("more", "less"),
    ("before", "after"),
    ("with", "without"),
    ("junior", "senior"),
    ("married", "divorced"),
    ("single", "married"),
    ("employed", "unemployed"),
    ("smoker", "non-smoker"),
)
_ANTONYMS_ZH: tuple[tuple[str, str], ...] = (
    ("喜欢", "讨厌"),
    ("早上", "晚上"),
    ("早上", "夜里"),
    ("深色", "浅色"),
    ("简短", "详细"),
    ("简洁", "详细"),
    ("总是", "从不"),
    ("打开", "关闭"),
    ("远程", "办公室"),
    ("支持", "反对"),
)

# "W over L": the word before the comparison is preferred to the word after it.
_COMPARE_EN = re.compile(r"\b(?:over|than|rather\s+than|instead\s+of|versus|vs\.?)\b", re.IGNORECASE)
_PREFER_TO = re.compile(r"\bprefer(?:s|red)?\b.*?\b(to)\b", re.IGNORECASE)
_COMPARE_ZH = re.compile(r"而不是|胜过|多于|超过|比")

_CHANGE_EN = re.compile(
    r"\b(?:now|nowadays|these\s+days|moved|move|switched|switch|upgraded|upgrade|downgraded|migrated|"
    r"changed|change|new|newly|anymore|any\s+more|no\s+longer|since|went\s+back|instead|promoted|raised|"
    r"went\s+up|went\s+down|dropped|sold|replaced|became|become|started|starting|quit|left|joined|"
    r"got|stopped|gave\s+up|from\s+\S+\s+to)\b",
    re.IGNORECASE,
)
_CHANGE_ZH = re.compile(
    r"现在|搬到|搬去|换成|换了|换到|改用|改学|改成|改为|升级|迁移|转到|新的|新|不再|已经|提高|降到|开始|了$|了。?$"
)

_NUMBER_WORDS = {
    "zero": "0",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "eleven": "11",
    "twelve": "12",
    "twenty": "20",
    "thirty": "30",
    "hundred": "100",
    "thousand": "1000",
    "twice": "2",
    "half": "0.5",
    "double": "2",
}
_MONTHS = frozenset(
    [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "mondays",
        "tuesdays",
        "wednesdays",
        "thursdays",
        "fridays",
        "saturdays",
        "sundays",
    ]
)
_ZH_DIGITS = {
    "零": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_ZH_NUMBER = re.compile(
    r"[零一二两三四五六七八九十百千万]+(?=[个次岁年月日天号点小时分钟公里元块本只位台倍])"
)
# Chinese words that state the same slot: moving is the update of where one lives.
# And the verbs of a preference are one word here, as "prefer"/"like" are stopwords in English.
_ZH_SAME = (
    ("搬到", "住"),
    ("搬去", "住"),
    ("住在", "住"),
    ("上班", "工作"),
    ("更喜欢", "喜欢"),
    ("喜欢用", "喜欢"),
    ("偏好", "喜欢"),
    ("爱用", "喜欢"),
    ("爱吃", "喜欢吃"),
)


@dataclass(frozen=True, slots=True)
class Features:
    """What one text says, as far as these rules read it."""

    text: str
    tokens: tuple[str, ...]  # casefolded words and single CJK characters, in order
    content: frozenset[str]  # tokens that are not stopwords (stemmed lightly)
    sequence: tuple[str, ...]  # the same, in order
    negative: bool  # carries a negation or a negative verb
    numbers: frozenset[str]  # normalised numbers, dates and weekday/month names
    names: frozenset[str]  # casefolded capitalised words not starting the sentence; Latin words in CJK text
    preferences: frozenset[tuple[str, str]]  # (preferred, less preferred) from "W over L"
    change: bool  # says something changed ("moved to", "now", 搬到…)
    cjk: bool


def _stem(word: str) -> str:
    w = word.casefold().strip("'’.-")
    for suffix in ("'s", "’s"):
        w = w.removesuffix(suffix)
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    if len(w) > 5 and w.endswith("ed"):
        return w[:-2]
    return w


def _zh_number(text: str) -> str:
    total, current = 0, 0
    for ch in text:
        if ch in _ZH_DIGITS:
            current = _ZH_DIGITS[ch]
        elif ch == "十":
            total += (current or 1) * 10
            current = 0
        elif ch == "百":
            total += (current or 1) * 100
            current = 0
        elif ch == "千":
            total += (current or 1) * 1000
            current = 0
        elif ch == "万":
            total = (total + current) * 10000
            current = 0
    return str(total + current)


def _numbers(text: str, raw: list[str]) -> frozenset[str]:
    out = set()
    for tok in raw:
        low = tok.casefold()
        if tok[0].isdigit():
            out.add(tok.rstrip(".,"))
        elif low in _NUMBER_WORDS:
            out.add(_NUMBER_WORDS[low])
        elif low in _MONTHS:
            out.add(low[:3])
    out.update(_zh_number(m.group()) for m in _ZH_NUMBER.finditer(text))
    return frozenset(out)


def _names(raw: list[str], cjk: bool) -> frozenset[str]:
    out = set()
    for i, tok in enumerate(raw):
        if _HAS_CJK.match(tok) or tok[0].isdigit():
            continue
        low = tok.casefold()
        # Latin words inside Chinese text are product, place or person names.
        if cjk or (
            i > 0
            and (tok[0].isupper() or any(c.isdigit() for c in tok[1:]) or "." in tok[1:-1])
            and low not in ("i", "i'm", "i’m", "i've", "i'd")
            and low not in _MONTHS
        ):
            out.add(low)
    return frozenset(out)


def _preferences(text: str, cjk: bool) -> frozenset[tuple[str, str]]:
    out = set()
    pattern = _COMPARE_ZH if cjk else _COMPARE_EN
    spans = [(m.start(), m.end()) for m in pattern.finditer(text)]
    if not cjk and (m := _PREFER_TO.search(text)) is not None:
        spans.append((m.start(1), m.end(1)))
    for start, end in spans:
        before = [t for t in _content_seq(text[:start], cjk) if t not in ("prefer", "like", "use")]
        after = _content_seq(text[end:], cjk)
        if before and after:
            out.add((before[-1], after[0]))
    return frozenset(out)


def _zh_same(text: str) -> str:
    for word, same in _ZH_SAME:
        text = text.replace(word, same)
    return text


def _content_seq(text: str, cjk: bool) -> list[str]:
    if cjk:
        text = _zh_same(text)
    out = []
    for tok in _TOKEN.findall(text):
        if _HAS_CJK.match(tok):
            if tok not in "我你他她的了是在用更很都也就吗呢吧啊和与会要想":
                out.append(tok)
        else:
            stem = _stem(tok)
            if stem and stem not in STOPWORDS and stem not in ("rather", "instead", "much", "prefer", "like"):
                out.append(stem)
    return out


def features(text: str) -> Features:
    cjk = bool(_HAS_CJK.search(text))
    raw = _TOKEN.findall(_zh_same(text) if cjk else text)
    tokens = tuple(t.casefold() for t in raw)
    sequence = tuple(_content_seq(text, cjk))
    content = frozenset(sequence)
    en_text = _NOT_NEG_EN.sub(" ", text)
    zh_text = _NOT_NEG_ZH.sub(" ", text)
    negative = bool(_NEG_EN.search(en_text)) or (cjk and bool(_NEG_ZH.search(zh_text)))
    change = bool(_CHANGE_EN.search(text)) or (cjk and bool(_CHANGE_ZH.search(text.strip())))
    return Features(
        text=text,
        tokens=tokens,
        content=content,
        sequence=sequence,
        negative=negative,
        numbers=_numbers(text, raw),
        names=_names(raw, cjk),
        preferences=_preferences(text, cjk),
        change=change,
        cjk=cjk,
    )


@dataclass(frozen=True, slots=True)
class Differences:
    """How a new text (b) differs from an old one (a). Each field names a reason a merge would lose a fact."""

    polarity: bool  # one side negated
    agrees: bool  # one side turns down what the other ranked below something: the same opinion
    antonym: str | None  # "like/dislike"
    swapped: bool  # opposite preference
    numbers_changed: bool  # each side has a number the other lacks
    numbers_differ: bool  # either side has a number the other lacks
    names_changed: bool  # each side has a name the other lacks (or a slot's value changed)
    names_differ: bool  # either side has a name the other lacks
    slot: bool  # one short stretch replaced, the rest word for word
    change_marker: bool  # the new text says something changed
    replaced: bool  # each side has content words the other lacks
    overlap: float  # shared content words / the shorter text's content words
    lexical: float  # Dice coefficient of content words (CJK: characters): the similarity used for Chinese

    @property
    def contradiction(self) -> bool:
        return self.polarity or self.antonym is not None or self.swapped

    @property
    def value_change(self) -> bool:
        return self.numbers_changed or self.names_changed

    @property
    def blocks_merge(self) -> bool:
        """A merge would keep one wording and lose what only the other said."""
        return self.contradiction or self.numbers_differ or self.names_differ

    def reasons(self) -> tuple[str, ...]:
        out = []
        if self.polarity:
            out.append("negation")
        if self.antonym:
            out.append(f"antonym {self.antonym}")
        if self.swapped:
            out.append("swapped preference")
        if self.numbers_changed:
            out.append("number changed")
        elif self.numbers_differ:
            out.append("numbers differ")
        if self.names_changed:
            out.append("name changed")
        elif self.names_differ:
            out.append("names differ")
        if self.change_marker:
            out.append("says it changed")
        return tuple(out)


def _antonym(a: Features, b: Features) -> str | None:
    pairs = _ANTONYMS_ZH if (a.cjk or b.cjk) else _ANTONYMS_EN
    if a.cjk or b.cjk:
        for x, y in pairs:
            for p, q in ((x, y), (y, x)):
                if p in a.text and q in b.text and q not in a.text and p not in b.text:
                    return f"{p}/{q}"
        return None
    ta, tb = set(a.tokens), set(b.tokens)
    for x, y in pairs:
        for p, q in ((x, y), (y, x)):
            if p in ta and q in tb and q not in ta and p not in tb:
                return f"{p}/{q}"
    return None


def _swapped(a: Features, b: Features) -> bool:
    for winner, loser in a.preferences:
        if any(l2 == winner or w2 == loser for w2, l2 in b.preferences):
            return True
    # Both compare, with the same words in another order ("black over ruff format" / "ruff format over black").
    if (
        a.preferences
        and b.preferences
        and sorted(a.sequence) == sorted(b.sequence)
        and a.sequence != b.sequence
    ):
        return True
    # The new text prefers something the old one never named over what the old one named.
    for winner, loser in b.preferences:
        if loser in a.content and winner not in a.content and not a.preferences:
            return True
    return False


def _negated_words(f: Features) -> list[str]:
    """The first content words after the first negation: what "stopped using uv" or "no longer X" is about."""
    if f.cjk:
        return []
    m = _NEG_EN.search(_NOT_NEG_EN.sub(" ", f.text))
    if m is None:
        return []
    return _content_seq(f.text[m.end() :], False)[:2]


def _agrees(a: Features, b: Features) -> bool:
    """b turns down what a already ranked below something else ("pip over uv", then "stopped using uv"):
    the same opinion in other words, not a reversal."""
    negated = _negated_words(b)
    return any(loser in negated and winner not in negated for winner, loser in a.preferences)


def _slot_changed(a: Features, b: Features) -> bool:
    """The same sentence with short stretches replaced: "my dog is called Rex" → "… Bruno", "on Mondays and
    Fridays" → "on Tuesdays and Thursdays". Nothing inserted or deleted, most words kept."""
    x, y = a.tokens, b.tokens
    ops = [op for op in SequenceMatcher(None, x, y, autojunk=False).get_opcodes() if op[0] != "equal"]
    if not ops or any(tag != "replace" for tag, *_ in ops):
        return False
    if any(i2 - i1 > 3 or j2 - j1 > 3 for _, i1, i2, j1, j2 in ops):
        return False
    changed = sum(i2 - i1 for _, i1, i2, _, _ in ops)
    if len(x) - changed < max(2, 0.5 * len(x)):
        return False
    words = [t for _, i1, i2, j1, j2 in ops for t in (*x[i1:i2], *y[j1:j2]) if not _HAS_CJK.match(t)]
    return not any(w in STOPWORDS for w in words)


def compare(a: Features, b: Features) -> Differences:
    """How b (the new text) differs from a (the old one)."""
    num_a, num_b = a.numbers - b.numbers, b.numbers - a.numbers
    tokens_a, tokens_b = set(a.tokens), set(b.tokens)
    names_a = {n for n in a.names if n not in tokens_b and _stem(n) not in b.content}
    names_b = {n for n in b.names if n not in tokens_a and _stem(n) not in a.content}
    slot = _slot_changed(a, b)
    agrees = _agrees(a, b) or _agrees(b, a)
    shared = len(a.content & b.content)
    sizes = len(a.content) + len(b.content)
    return Differences(
        polarity=a.negative != b.negative and not agrees,
        agrees=agrees,
        antonym=_antonym(a, b),
        swapped=_swapped(a, b),
        numbers_changed=bool(num_a and num_b),
        numbers_differ=bool((num_a - {"1"}) or (num_b - {"1"})),
        names_changed=bool(names_a and names_b) or slot,
        names_differ=bool(names_a or names_b) or slot,
        slot=slot,
        replaced=bool(a.content - b.content) and bool(b.content - a.content),
        change_marker=b.change and not a.change,
        overlap=shared / min(len(a.content), len(b.content)) if a.content and b.content else 0.0,
        lexical=2 * shared / sizes if sizes else 1.0,
    )
