"""What one memory text says, read from the words alone (no model, no database).

Why rules at all: an embedding says two texts are about the same thing, not whether they agree. "I prefer
uv over pip" and "I prefer pip over uv" are 0.94 apart in all-MiniLM-L6-v2 cosine, closer than most true
paraphrases. So a cosine alone cannot tell an edit from a reversal; these signals, read per text here
and compared in store.truth.differences, can, cheaply:

- polarity: a negation or a negative verb ("no longer", "stopped", "never", "dislike", 不/没/不再/讨厌);
  "而不是" and "rather than" are comparisons, not negations;
- preference: "X over Y" (or "prefers X to Y");
- values: numbers (digits, English and Chinese number words), names (capitalised words that do not start
  the sentence, Latin words inside Chinese text);
- change markers: "moved to", "now", "upgraded", 搬到, 换成, 现在… say the text is an update.

The word lists live in store.truth.lexicon. Each function is pure and cheap (a few regexes over one short
string), so reading a new memory costs nothing next to the one embedding it needs anyway.
"""

from __future__ import annotations

from dataclasses import dataclass

from store.truth.lexicon import (
    CHANGE_EN,
    CHANGE_ZH,
    COMPARE_EN,
    COMPARE_ZH,
    HAS_CJK,
    MONTHS,
    NEG_EN,
    NEG_ZH,
    NOT_NEG_EN,
    NOT_NEG_ZH,
    NUMBER_WORDS,
    PREFER_TO,
    STOPWORDS,
    TOKEN,
    ZH_DIGITS,
    ZH_NUMBER,
    ZH_SAME,
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


def stem(word: str) -> str:
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
        if ch in ZH_DIGITS:
            current = ZH_DIGITS[ch]
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
        elif low in NUMBER_WORDS:
            out.add(NUMBER_WORDS[low])
        elif low in MONTHS:
            out.add(low[:3])
    out.update(_zh_number(m.group()) for m in ZH_NUMBER.finditer(text))
    return frozenset(out)


def _names(raw: list[str], cjk: bool) -> frozenset[str]:
    out = set()
    for i, tok in enumerate(raw):
        if HAS_CJK.match(tok) or tok[0].isdigit():
            continue
        low = tok.casefold()
        # Latin words inside Chinese text are product, place or person names.
        if cjk or (
            i > 0
            and (tok[0].isupper() or any(c.isdigit() for c in tok[1:]) or "." in tok[1:-1])
            and low not in ("i", "i'm", "i’m", "i've", "i'd")
            and low not in MONTHS
        ):
            out.add(low)
    return frozenset(out)


def _preferences(text: str, cjk: bool) -> frozenset[tuple[str, str]]:
    out = set()
    pattern = COMPARE_ZH if cjk else COMPARE_EN
    spans = [(m.start(), m.end()) for m in pattern.finditer(text)]
    if not cjk and (m := PREFER_TO.search(text)) is not None:
        spans.append((m.start(1), m.end(1)))
    for start, end in spans:
        before = [t for t in content_seq(text[:start], cjk) if t not in ("prefer", "like", "use")]
        after = content_seq(text[end:], cjk)
        if before and after:
            out.add((before[-1], after[0]))
    return frozenset(out)


def _zh_same(text: str) -> str:
    for word, same in ZH_SAME:
        text = text.replace(word, same)
    return text


def content_seq(text: str, cjk: bool) -> list[str]:
    if cjk:
        text = _zh_same(text)
    out = []
    for tok in TOKEN.findall(text):
        if HAS_CJK.match(tok):
            if tok not in "我你他她的了是在用更很都也就吗呢吧啊和与会要想":
                out.append(tok)
        else:
            word = stem(tok)
            if word and word not in STOPWORDS and word not in ("rather", "instead", "much", "prefer", "like"):
                out.append(word)
    return out


def features(text: str) -> Features:
    cjk = bool(HAS_CJK.search(text))
    raw = TOKEN.findall(_zh_same(text) if cjk else text)
    tokens = tuple(t.casefold() for t in raw)
    sequence = tuple(content_seq(text, cjk))
    content = frozenset(sequence)
    en_text = NOT_NEG_EN.sub(" ", text)
    zh_text = NOT_NEG_ZH.sub(" ", text)
    negative = bool(NEG_EN.search(en_text)) or (cjk and bool(NEG_ZH.search(zh_text)))
    change = bool(CHANGE_EN.search(text)) or (cjk and bool(CHANGE_ZH.search(text.strip())))
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
