"""Dates in a search query, as windows over message times: "in May 2023", "on 3 December", "last weekend".

Why: a question with a date cue ("what did Marta do in April 2023", "what did Ruth do yesterday") names
*when* the answer was said, and the words "April" or "yesterday" are rarely in the turn that answers it.
The conversation ranking (store.search.conversation) gives the turns inside the window a boost, and the
engine fetches the best candidates inside it too, so an answer the two retrievers ranked deep still
comes up. A window is a hint, never a filter: people misremember dates, and a turn often tells of
something that happened before it was written.

Relative dates ("yesterday", "last weekend", "two weeks ago", "earlier this month") count back from
`now`, which the engine sets to the newest message of the archive: for an archive in use that is about
today, and for an imported old chat it is the end of that chat, which is what "last weekend" means
when you ask about it. Dates relative to an event ("the week before her birthday") need the event's date
from the archive first and are not resolved here. English only; anything unparsed gives no window.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass

from store.text import MAX_QUERY_CHARS

MONTHS = {
    name: i for i in range(1, 13) for name in (calendar.month_name[i].lower(), calendar.month_abbr[i].lower())
}
MONTHS["sept"] = 9
_MONTH = r"(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
_YEAR = r"((?:19|20)\d\d)"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_PART = r"(early|mid|middle of|late|end of|the end of|start of|the start of|beginning of|the beginning of|first week of|the first week of|last week of|the last week of)?[\s-]*"
NUMBERS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "couple of": 2, "few": 3}
WEEKDAYS = {calendar.day_name[i].lower(): i for i in range(7)}
DAY = 86_400.0


@dataclass(frozen=True, slots=True)
class Window:
    """[since, until) in epoch seconds (UTC), and the words of the query that said it."""

    since: float
    until: float
    text: str


def _epoch(d: dt.date) -> float:
    return dt.datetime(d.year, d.month, d.day, tzinfo=dt.UTC).timestamp()


def _span(a: dt.date, b: dt.date, text: str) -> Window:
    """Days a..b inclusive."""
    return Window(_epoch(a), _epoch(b) + DAY, text)


def _month_part(year: int, month: int, part: str | None, text: str) -> Window:
    last = calendar.monthrange(year, month)[1]
    lo, hi = 1, last
    part = (part or "").replace("the ", "").strip()
    if part in ("early", "start of", "beginning of"):
        hi = 10
    elif part in ("mid", "middle of"):
        lo, hi = 10, 20
    elif part in ("late", "end of"):
        lo = 20
    elif part == "first week of":
        hi = 7
    elif part == "last week of":
        lo = last - 6
    return _span(dt.date(year, month, lo), dt.date(year, month, hi), text)


def _latest(month: int, day: int | None, ref: dt.date) -> int:
    """The year of the latest `month` (`day`) at or before `ref`: "in May" asked in March 2024 is May 2023."""
    year = ref.year
    if (month, day or 1) > (ref.month, ref.day):
        year -= 1
    return year


def _absolute(q: str, ref: dt.date) -> Window | None:
    m = re.search(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", q) or re.search(
        rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", q
    )
    if m:
        groups = m.groups()
        day, month, year = (
            (groups[0], groups[1], groups[2]) if groups[0].isdigit() else groups[1::-1] + groups[2:]
        )
        with_day = _safe_date(int(year), MONTHS[month], int(day))
        return None if with_day is None else _span(with_day, with_day, m.group(0))
    m = re.search(r"\b(\d{4})-(\d{2})-(\d{2})\b", q)
    if m and (d := _safe_date(int(m.group(1)), int(m.group(2)), int(m.group(3)))):
        return _span(d, d, m.group(0))
    m = re.search(rf"\b{_PART}{_MONTH},?\s+(?:of\s+)?{_YEAR}\b", q)
    if m:
        return _month_part(int(m.group(3)), MONTHS[m.group(2)], m.group(1), m.group(0).strip())
    m = re.search(rf"\b(?:christmas|xmas)\s+{_YEAR}\b", q)
    if m:
        year = int(m.group(1))
        return _span(dt.date(year, 12, 20), dt.date(year, 12, 31), m.group(0))
    m = re.search(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}\b", q) or re.search(rf"\bon\s+{_MONTH}\s+{_DAY}\b", q)
    if m:
        groups = m.groups()
        day, month = (groups[0], groups[1]) if groups[0].isdigit() else (groups[1], groups[0])
        d = _safe_date(_latest(MONTHS[month], int(day), ref), MONTHS[month], int(day))
        return None if d is None else _span(d, d, m.group(0))
    # A month alone: after a preposition ("in March") or a part ("early March"); "may" only so ("in May"),
    # never the verb ("may I").
    m = re.search(rf"\b(?:in|during|since|by|over)\s+{_PART}{_MONTH}(?!\s*\d)", q) or re.search(
        rf"\b(early|mid|late|end of|start of|beginning of)[\s-]+{_MONTH}(?!\s*\d)", q
    )
    if m:
        month = MONTHS[m.group(2)]
        return _month_part(_latest(month, None, ref), month, m.group(1), m.group(0).strip())
    m = re.search(rf"\b(?:in|during)\s+{_YEAR}\b", q)
    if m:
        year = int(m.group(1))
        return _span(dt.date(year, 1, 1), dt.date(year, 12, 31), m.group(0))
    return None


def _safe_date(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def _relative(q: str, ref: dt.date) -> Window | None:
    if m := re.search(r"\bthe day before yesterday\b", q):
        d = ref - dt.timedelta(days=2)
        return _span(d, d, m.group(0))
    if m := re.search(r"\byesterday\b", q):
        d = ref - dt.timedelta(days=1)
        return _span(d, d, m.group(0))
    if m := re.search(r"\b(today|tonight|this morning|this evening)\b", q):
        return _span(ref, ref, m.group(0))
    monday = ref - dt.timedelta(days=ref.weekday())
    if m := re.search(r"\b(last|this|the past)\s+weekend\b", q):
        # "last weekend" asked on a weekend day is the one before; "this weekend" is the current/last one.
        saturday = monday + dt.timedelta(days=5)
        if saturday > ref or (m.group(1) == "last" and ref.weekday() >= 5):
            saturday -= dt.timedelta(days=7)
        return _span(saturday, saturday + dt.timedelta(days=1), m.group(0))
    if m := re.search(r"\b(last|this|the past)\s+week\b", q):
        start = monday - dt.timedelta(days=7) if m.group(1) == "last" else monday
        end = start + dt.timedelta(days=6) if m.group(1) == "last" else ref
        if m.group(1) == "the past":
            start, end = ref - dt.timedelta(days=7), ref
        return _span(start, end, m.group(0))
    if m := re.search(r"\b(last|this|earlier this)\s+month\b", q):
        first = ref.replace(day=1)
        if m.group(1) == "last":
            end = first - dt.timedelta(days=1)
            return _span(end.replace(day=1), end, m.group(0))
        return _span(first, ref, m.group(0))
    if m := re.search(r"\b(last|this)\s+year\b", q):
        year = ref.year - 1 if m.group(1) == "last" else ref.year
        return _span(dt.date(year, 1, 1), min(dt.date(year, 12, 31), ref), m.group(0))
    if m := re.search(r"\b(a|one|two|three|four|five|six|couple of|few|\d+)\s+(day|week|month)s?\s+ago\b", q):
        n = int(m.group(1)) if m.group(1).isdigit() else NUMBERS[m.group(1)]
        unit = {"day": 1, "week": 7, "month": 30}[m.group(2)]
        center = ref - dt.timedelta(days=n * unit)
        slack = {"day": 1, "week": 4, "month": 12}[m.group(2)]
        return _span(center - dt.timedelta(days=slack), center + dt.timedelta(days=slack), m.group(0))
    if m := re.search(r"\blast\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b", q):
        back = (ref.weekday() - WEEKDAYS[m.group(1)]) % 7 or 7
        d = ref - dt.timedelta(days=back)
        return _span(d, d, m.group(0))
    return None


def date_window(query: str, now: float | None) -> Window | None:
    """The time window a query's date cue names, or None. `now`: what relative dates count back from
    (epoch seconds); without it only absolute dates are read."""
    q = query[:MAX_QUERY_CHARS].casefold()  # a pasted 10 MB query: its start is what it asks
    ref = dt.datetime.fromtimestamp(now, dt.UTC).date() if now is not None else None
    found = _absolute(q, ref or dt.date.today())
    if found is None and ref is not None:
        found = _relative(q, ref)
    return found


__all__ = ["Window", "date_window"]
