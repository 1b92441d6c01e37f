"""Numbers in a memory text, each as one term however it is written: "2nd" = "2", "three" = "3", 十二个 = 12.

Kept apart from store.truth.reading (which reads the rest of a text) so each stays a readable size.
"""

from __future__ import annotations

import re

from store.truth.lexicon import MONTHS, NUMBER_WORDS, ZH_DIGITS, ZH_NUMBER


def number_term(low: str) -> str:
    """A number as one term however it is written: "2nd" = "2", "three" = "3" ("" for any other word)."""
    if low[:1].isdigit():
        m = re.match(r"[0-9]+(?:[.:,][0-9]+)*", low)
        return m.group().replace(",", "") if m else ""
    return NUMBER_WORDS.get(low, "")


def zh_number(text: str) -> str:
    total, current = 0, 0
    for ch in text:
        if ch in ZH_DIGITS:
            current = ZH_DIGITS[ch]
        elif ch in "十百千万":
            unit = {"十": 10, "百": 100, "千": 1000, "万": 10000}[ch]
            if unit == 10000:
                total = (total + current) * unit
            else:
                total += (current or 1) * unit
            current = 0
    return str(total + current)


def numbers_in(text: str, raw: list[str]) -> frozenset[str]:
    out = set()
    written = set()  # numbers written in digits: a "1" there is a value ("room 1", "fact 1")
    for tok in raw:
        low = tok.casefold()
        if tok[0].isdigit():
            digits = re.match(r"[0-9.:,]+", tok)
            written.add((digits.group() if digits else tok).rstrip(".,").replace(",", ""))
        elif low in NUMBER_WORDS:
            out.add(NUMBER_WORDS[low])
        elif low in MONTHS:
            out.add(low[:3])
    out.update(zh_number(m.group()) for m in ZH_NUMBER.finditer(text))
    out.discard("1")  # "a", "one", 一只: an article, not a value
    return frozenset(out | written)
