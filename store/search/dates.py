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
when you ask about it. German, Spanish, French, Chinese and Japanese cues are rewritten into these
English forms first (store.search.dates_i18n). Anything unparsed gives no window.

Dates relative to an event ("the week before her birthday", "the day after the migration", "since the
move", "while Hannah was at the trade show"): `event_cue` reads the relation and the event's words, the
engine finds the day the archive talks about that event most (store.search.events), and `around_event`
turns the two into a window. Holidays ("the weekend before Christmas", "the week before Halloween") need
no lookup.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass, replace

from store.search import dates_i18n
from store.text import MAX_QUERY_CHARS

MONTHS = {
    name: i for i in range(1, 13) for name in (calendar.month_name[i].lower(), calendar.month_abbr[i].lower())
}
MONTHS["sept"] = 9
_MONTH = r"(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\b\.?"
_YEAR = r"((?:19|20)\d\d)"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_PART = r"(early|mid|middle of|late|end of|the end of|start of|the start of|beginning of|the beginning of|first week of|the first week of|last week of|the last week of)?[\s-]*"
NUMBERS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "couple of": 2, "few": 3}
WEEKDAYS = {calendar.day_name[i].lower(): i for i in range(7)}
DAY = 86_400.0


@dataclass(frozen=True, slots=True)
class Window:
    """[since, until) in epoch seconds (UTC), the words of the query that said it, and whether it is a date
    the query names ("date") or one found from an event the archive talks about ("event": less sure, so
    it has its own weight)."""

    since: float
    until: float
    text: str
    kind: str = "date"
    share: float = 1.0  # an event's less likely days: the share of the lift their window gives


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
    # A holiday alone ("at Christmas", "over Easter"), last: a month the query also names is surer. Not
    # a holiday naming a thing ("the Christmas market", "the Valentine's pop-up"): that is any day near it.
    m = re.search(HOLIDAY + r"(?!\s+[^\W\d])", q)
    if m:
        d = holiday(m.group(1), ref)
        return _span(d - dt.timedelta(days=1), d + dt.timedelta(days=1), m.group(0))
    return None


HOLIDAY = (
    r"\b(christmas eve|christmas day|christmas|xmas|boxing day|new year's eve|new years eve|new year's day|"
    r"new year|halloween|valentine's day|valentines day|valentine's|bonfire night|st\.? patrick's day|"
    r"easter)\b"
)
_HOLIDAYS = {
    "christmas eve": (12, 24),
    "christmas day": (12, 25),
    "christmas": (12, 25),
    "xmas": (12, 25),
    "boxing day": (12, 26),
    "new year's eve": (12, 31),
    "new years eve": (12, 31),
    "new year's day": (1, 1),
    "new year": (1, 1),
    "halloween": (10, 31),
    "valentine's day": (2, 14),
    "valentines day": (2, 14),
    "valentine's": (2, 14),
    "bonfire night": (11, 5),
}


def holiday(name: str, ref: dt.date) -> dt.date:
    """The latest such day at or before `ref` (the archive's end): "at Christmas" asked in March is last
    December's."""
    name = name.replace("st. ", "st ")
    for year in (ref.year, ref.year - 1):
        if name == "easter":
            d = _easter(year)
        elif name.startswith("st"):
            d = dt.date(year, 3, 17)
        else:
            d = dt.date(year, *_HOLIDAYS[name])
        if d <= ref:
            return d
    return d


def _easter(year: int) -> dt.date:
    """Gregorian Easter Sunday (the anonymous algorithm)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = b // 4, b % 4
    f = (b + 8) // 25
    g = (b - f + 1) // 3
    h = (19 * a + b - d - g + 15) % 30
    i, k = c // 4, c % 4
    l_ = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * l_) // 451
    month = (h + l_ - 7 * m + 114) // 31
    return dt.date(year, month, (h + l_ - 7 * m + 114) % 31 + 1)


def _safe_date(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def _relative(q: str, ref: dt.date) -> Window | None:
    if m := re.search(r"\bthe day before yesterday\b", q):
        d = ref - dt.timedelta(days=2)
        return _span(d, d, m.group(0))
    if m := re.search(r"\b(yesterday|last night)\b", q):
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
    # "what did Tomás say on Tuesday": the latest Tuesday (a question to an archive is about the past)
    if m := re.search(r"\bon\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b", q):
        d = ref - dt.timedelta(days=(ref.weekday() - WEEKDAYS[m.group(1)]) % 7)
        return _span(d, d, m.group(0))
    return None


# -- dates relative to an event ------------------------------------------------------------------------

_AMOUNTS = {
    **NUMBERS,
    "an": 1,
    "the": 1,
    "a couple of": 2,
    "a few": 3,
    "several": 4,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "fourteen": 14,
}
_UNIT_DAYS = {"day": 1, "night": 1, "morning": 1, "evening": 1, "week": 7, "weekend": 7, "month": 30}
_COUNT = r"(the|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fourteen|a couple of|couple of|a few|few|several|\d+)"
_UNIT = r"(day|night|morning|evening|weekend|week|month)s?"
_EVENT = r"(?P<event>[^?.!;,]+)"  # up to the clause's end: "after the MOT failure, and with what"
EVENT_PATTERNS = (
    # "the week before her birthday", "two days after the migration", "a few weeks after starting university"
    re.compile(rf"\b{_COUNT}\s+{_UNIT}\s+(before|after|following|prior to|ahead of)\s+{_EVENT}"),
    # "the same weekend Ruth asked for karaoke", "the day the release went out", "the same day as the gig"
    re.compile(
        rf"\bthe\s+(?:same\s+)?(day|night|morning|evening|weekend|week)\s+(?:as\s+|that\s+|when\s+)?()(){_EVENT}"
    ),
    # "right after the retirement party", "after the launch", "since the move", "while she was away"
    # ("look after", "take after", "named after" are no dates)
    re.compile(
        rf"(?<!look )(?<!looks )(?<!looked )(?<!looking )(?<!take )(?<!took )(?<!named )"
        rf"\b(right |just |straight |soon |shortly )?(after|before|since|while|during)\s+(){_EVENT}"
    ),
)
_ANAPHORA = {"it", "that", "this", "then", "them", "those", "these"}


@dataclass(frozen=True, slots=True)
class EventCue:
    """A date relative to an event: `before`/`after` `days` (0 for "the same day"), `unit` (its width),
    or `since`, `while`; `event` the event's words ("her birthday", "the migration")."""

    relation: str
    days: int
    unit: str
    event: str
    text: str
    close: bool = False  # "right after": only the next few days


def event_cue(query: str) -> EventCue | None:
    """The event a query dates itself by, or None (English). A cue whose event is a pronoun ("the week
    before it") names no event to look up."""
    q = query[:MAX_QUERY_CHARS].casefold()
    for i, pattern in enumerate(EVENT_PATTERNS):
        m = pattern.search(q)
        if not m:
            continue
        event = m.group("event").strip(" ,").removeprefix("of ")
        if event.split()[:1] and event.split()[0] in _ANAPHORA:
            return None  # "the week before it": the event is named elsewhere in the question
        if not re.search(r"\w{3}", event) or event.startswith(("before ", "after ")):
            continue
        if i == 0:
            count, unit, rel = m.group(1), m.group(2), m.group(3)
            n = int(count) if count.isdigit() else _AMOUNTS.get(count, 1)
            relation = "before" if rel in ("before", "prior to", "ahead of") else "after"
            return EventCue(relation, n * _UNIT_DAYS[unit], unit, event, m.group(0))
        if i == 1:
            return EventCue("same", 0, m.group(1), event, m.group(0))
        close, rel = bool(m.group(1)), m.group(2)
        relation = "same" if rel in ("while", "during") else rel
        return EventCue(relation, 0, "day" if relation == "same" else "", event, m.group(0), close)
    return None


def around_event(cue: EventCue, day: dt.date, ref: dt.date) -> Window:
    """The window `cue` names around the event's `day`. Its edges are loose (a day either side, more for
    weeks and months): the day a chat talks about an event is not always the day it happened."""
    one = dt.timedelta(days=1)
    sign = -1 if cue.relation == "before" else 1
    if cue.relation == "since":
        return _event_span(day, ref, cue)
    if cue.relation == "same":
        if cue.unit == "weekend":
            saturday = day - dt.timedelta(days=(day.weekday() - 5) % 7)
            return _event_span(saturday - one, saturday + 2 * one, cue)
        days = 3 if cue.unit == "week" else 1
        return _event_span(day - days * one, day + days * one, cue)
    if (
        not cue.days
    ):  # "after the launch", "before the move": the three weeks that side (three days: "right after")
        width = dt.timedelta(days=3 if cue.close else 21)
        return _event_span(day, day + width, cue) if sign > 0 else _event_span(day - width, day, cue)
    if cue.unit == "weekend":  # the Saturday and Sunday before / after the event's day
        if sign < 0:
            saturday = day - dt.timedelta(days=(day.weekday() - 5) % 7 or 7)
        else:
            saturday = day + dt.timedelta(days=(5 - day.weekday()) % 7 or 7)
        return _event_span(saturday - one, saturday + 2 * one, cue)
    if cue.days == 7 and cue.text.startswith(
        ("the ", "a ", "one ")
    ):  # "the week after": the 7 days next to it
        return (
            _event_span(day + one, day + 7 * one, cue)
            if sign > 0
            else _event_span(day - 7 * one, day - one, cue)
        )
    centre = day + sign * dt.timedelta(days=cue.days)
    half = dt.timedelta(days=1 if cue.days < 7 else 4 if cue.days < 28 else 12)
    return _event_span(centre - half, centre + half, cue)


def _event_span(a: dt.date, b: dt.date, cue: EventCue) -> Window:
    return Window(_epoch(a), _epoch(b) + DAY, cue.text, "event")


def calendar_window(cue: EventCue, ref: dt.date) -> Window | None:
    """The window when the event's words are a holiday or a date ("the week before Christmas", "after 3 May
    2024", "during May 2023"): no archive lookup needed. None when they are neither."""
    m = re.fullmatch(rf"(?:the\s+)?{HOLIDAY}(?:\s+{_YEAR})?", cue.event)
    if m:
        year = m.group(2)
        day = holiday(m.group(1), dt.date(int(year), 12, 31) if year else ref)
        return replace(around_event(cue, day, ref), kind="date")
    window = _absolute(cue.event, ref) or _absolute(f"in {cue.event}", ref)
    if window is None:
        return None
    if cue.relation == "same":  # "during May 2023" is May 2023
        return window
    # "before June 2025": the weeks before June starts, "after September 2025": the weeks after it ends,
    # each with the date itself (a change is often told in its month: "in June we sold the car"; the
    # longmem tune half lost 0.027 on temporal questions without it); "since late August": from then on.
    edge = {"before": window.since - DAY, "since": window.since}.get(cue.relation, window.until)
    side = around_event(cue, dt.datetime.fromtimestamp(edge, dt.UTC).date(), ref)
    if cue.relation == "since":
        return replace(side, kind="date")
    return Window(min(side.since, window.since), max(side.until, window.until), side.text)


_ABBR_DOT = re.compile(r"\b(jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.")


def date_window(query: str, now: float | None) -> Window | None:
    """The time window a query's date cue names, or None. `now`: what relative dates count back from
    (epoch seconds); without it only absolute dates are read."""
    q = query[:MAX_QUERY_CHARS].casefold()  # a pasted 10 MB query: its start is what it asks
    q = _ABBR_DOT.sub(r"\1", q)  # "since Jan. 2023": the dot ends no clause
    ref = dt.datetime.fromtimestamp(now, dt.UTC).date() if now is not None else None
    cue = event_cue(q)
    if cue is not None:  # "the weekend before Christmas" is not Christmas
        found = calendar_window(cue, ref or dt.date.today())
        if found is not None:
            return found
        # an event the archive knows is looked up later (store.search.events), unless the rest of the
        # query names a date itself: "what did we decide in January 2026 about where to live after the PhD"
        q = q.replace(cue.text, " ")
    found = _read(q, ref)
    if found is None and (foreign := dates_i18n.english(q)) is not None:
        phrase, words = foreign
        found = _read(phrase, ref)
        if found is not None:
            found = Window(found.since, found.until, words)
    return found


def _read(q: str, ref: dt.date | None) -> Window | None:
    found = _absolute(q, ref or dt.date.today())
    if found is None and ref is not None:
        found = _relative(q, ref)
    return found


__all__ = ["EventCue", "Window", "around_event", "date_window", "calendar_window", "event_cue"]
