"""Date cues in German, Spanish, French, Chinese and Japanese, rewritten as the English phrase that
store.search.dates reads ("letzte Woche" -> "last week", "im Mai 2024" -> "in may 2024", "上周三" -> "last
wednesday", "3日前" -> "3 days ago").

Why a rewrite instead of a parser per language: the windows ("last week" counted from the newest message,
"in May" meaning the latest May before it, "early May" the first ten days) are the same in every language;
only the words differ. So each language is a table of its words for yesterday, last week/weekend/month/year,
the weekdays, the months, "N days/weeks/months ago" and the parts of a month, and the window logic stays
in one place. The common forms only: a cue this does not know gives no window (a hint missed, never a
wrong filter). Dates relative to an event are read in English only (store.search.dates `event_cue`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

MONTHS_EN = [
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
]
WEEKDAYS_EN = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

_DE_MONTHS = "januar|jänner|februar|märz|april|mai|juni|juli|august|september|oktober|november|dezember"
_ES_MONTHS = (
    "enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|setiembre|octubre|noviembre|diciembre"
)
_FR_MONTHS = "janvier|février|fevrier|mars|avril|mai|juin|juillet|août|aout|septembre|octobre|novembre|décembre|decembre"
MONTH_OF = {
    **{m: i for i, m in enumerate(_DE_MONTHS.replace("|jänner", "").split("|"), start=1)},
    "jänner": 1,
    **{m: i for i, m in enumerate(_ES_MONTHS.replace("|setiembre", "").split("|"), start=1)},
    "setiembre": 9,
    **{
        m: i
        for i, ms in enumerate(
            [
                "janvier",
                "février fevrier",
                "mars",
                "avril",
                "mai",
                "juin",
                "juillet",
                "août aout",
                "septembre",
                "octobre",
                "novembre",
                "décembre decembre",
            ],
            start=1,
        )
        for m in ms.split()
    },
}
WEEKDAY_OF = {
    **dict.fromkeys(("montag", "lunes", "lundi"), 0),
    **dict.fromkeys(("dienstag", "martes", "mardi"), 1),
    **dict.fromkeys(("mittwoch", "miércoles", "miercoles", "mercredi"), 2),
    **dict.fromkeys(("donnerstag", "jueves", "jeudi"), 3),
    **dict.fromkeys(("freitag", "viernes", "vendredi"), 4),
    **dict.fromkeys(("samstag", "sonnabend", "sábado", "sabado", "samedi"), 5),
    **dict.fromkeys(("sonntag", "domingo", "dimanche"), 6),
}
NUMBER_OF = {
    **dict.fromkeys(("ein", "einem", "einer", "un", "una", "une", "一"), 1),
    **dict.fromkeys(("zwei", "dos", "deux", "二", "两", "兩"), 2),
    **dict.fromkeys(("drei", "tres", "trois", "三"), 3),
    **dict.fromkeys(("vier", "cuatro", "quatre", "四"), 4),
    **dict.fromkeys(("fünf", "cinco", "cinq", "五"), 5),
    **dict.fromkeys(("sechs", "seis", "six", "六"), 6),
    "七": 7,
    "八": 8,
    "九": 9,
    "十": 10,
}
UNIT_OF = {
    **dict.fromkeys(("tag", "tagen", "día", "dia", "días", "dias", "jour", "jours", "天", "日"), "day"),
    **dict.fromkeys(
        (
            "woche",
            "wochen",
            "semana",
            "semanas",
            "semaine",
            "semaines",
            "周",
            "週",
            "星期",
            "个星期",
            "個星期",
            "週間",
        ),
        "week",
    ),
    **dict.fromkeys(
        ("monat", "monaten", "mes", "meses", "mois", "个月", "個月", "月", "ヶ月", "か月", "カ月", "ケ月"),
        "month",
    ),
}
_CJK_DAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_JA_DAY = {"月": 0, "火": 1, "水": 2, "木": 3, "金": 4, "土": 5, "日": 6}
_CJK_NUM = "[一二两兩三四五六七八九十]|十[一二]"
_PART = {
    "anfang": "early",
    "mitte": "mid",
    "ende": "end of",
    "principios": "early",
    "mediados": "mid",
    "finales": "late",
    "début": "early",
    "debut": "early",
    "mi": "mid",
    "fin": "end of",
    "上旬": "early",
    "中旬": "mid",
    "下旬": "late",
    "初": "early",
    "中": "mid",
    "底": "late",
    "末": "late",
}


def _num(s: str) -> int:
    if s.isdigit():
        return int(s)
    if len(s) == 2 and s[0] == "十":  # 十一, 十二
        return 10 + NUMBER_OF.get(s[1], 0)
    return NUMBER_OF.get(s, 0)


def _ago(m: re.Match[str]) -> str | None:
    n, unit = _num(m.group("n")), UNIT_OF.get(m.group("u"))
    return f"{n} {unit}s ago" if n and unit else None


def _month(m: re.Match[str]) -> str | None:
    groups = m.groupdict()
    raw = groups["m"]
    month = int(raw) if raw.isdigit() else MONTH_OF.get(raw) or (_num(raw) if raw else 0)
    if not 1 <= month <= 12:
        return None
    name = MONTHS_EN[month - 1]
    day, year, part = groups.get("d"), groups.get("y"), groups.get("p")
    if day:
        return f"{int(day)} {name}" + (f" {year}" if year else "")
    prefix = f"{_PART[part]} " if part in _PART else "in "
    return f"{prefix}{name}" + (f" {year}" if year else "")


def _weekday(m: re.Match[str]) -> str:
    return f"last {WEEKDAYS_EN[WEEKDAY_OF[m.group('w') or m.group('w3')]]}"


def _fixed(english: str) -> Callable[[re.Match[str]], str]:
    return lambda _m: english


def _weekday_cjk(m: re.Match[str]) -> str:
    """上周三 / 周三 (Chinese: 一..六, 日/天 is Sunday), 先週の水曜 / 水曜日 (Japanese: 月..日)."""
    if m.group("w"):
        return f"last {WEEKDAYS_EN[_CJK_DAY[m.group('w')]]}"
    return f"last {WEEKDAYS_EN[_JA_DAY[m.group('w2')]]}"


def _month_fr(m: re.Match[str]) -> str | None:
    """ "début mai", "fin mai 2024", "mi-mai"."""
    if m.group("m2"):
        return f"mid {MONTHS_EN[MONTH_OF[m.group('m2')] - 1]}"
    return _month(m)


_W = r"(?P<w>" + "|".join(sorted(WEEKDAY_OF, key=len, reverse=True)) + ")"
_Y = r"(?P<y>(?:19|20)\d\d)"
_DEN = r"(?P<n>\d+|ein|einem|einer|zwei|drei|vier|fünf|sechs)"
_ESN = r"(?P<n>\d+|un|una|dos|tres|cuatro|cinco|seis)"
_FRN = r"(?P<n>\d+|un|une|deux|trois|quatre|cinq|six)"
_CJKN = rf"(?P<n>\d+|{_CJK_NUM})"
_NOT_DAY = "(?![一二三四五六日天末])"
# Longer forms first: "letztes Wochenende" before "letzte Woche", "上周末" before "上周", "先週末" before "先週".
_TABLE: list[tuple[str, Callable[[re.Match[str]], str | None]]] = [
    # the day before yesterday, yesterday, today
    (
        r"\b(vorgestern|anteayer|antes de ayer|avant-hier)\b|前天|一昨日|おととい",
        _fixed("the day before yesterday"),
    ),
    (r"\b(gestern|ayer|hier)\b|昨天|昨日|きのう", _fixed("yesterday")),
    (r"\b(heute|hoy|aujourd'hui|aujourd’hui)\b|今天|今日|きょう", _fixed("today")),
    # weekends, weeks, months, years
    (
        r"\b(letzte[ns]?|vergangene[ns]?)\s+wochenende\b|\bfin de semana pasado\b|\bweek-?end (dernier|passé)\b"
        r"|上个?周末|上個?週末|先週末",
        _fixed("last weekend"),
    ),
    (
        r"\b(letzte[nr]?|vergangene[nr]?)\s+woche\b|\bsemana pasada\b|\bsemaine (dernière|derniere|passée|passee)\b"
        rf"|上个?星期{_NOT_DAY}|上個?星期{_NOT_DAY}|上礼拜{_NOT_DAY}|上周{_NOT_DAY}|上週{_NOT_DAY}"
        r"|先週(?!の?[月火水木金土日]曜)",
        _fixed("last week"),
    ),
    (
        r"\b(letzte[nr]?|vergangene[nr]?)\s+monat\b|\bmes pasado\b|\bmois (dernier|passé)\b|上个月|上個月|上月|先月",
        _fixed("last month"),
    ),
    (
        r"\b(letzte[ns]?|vergangene[ns]?)\s+jahr\b|\baño pasado\b|\bl['’]année dernière\b|\bl['’]an dernier\b"
        r"|去年|昨年",
        _fixed("last year"),
    ),
    (
        r"\bdiese[rn]? woche\b|\besta semana\b|\bcette semaine\b|这周|這週|本周|这个星期|今週",
        _fixed("this week"),
    ),
    (r"\bdiese[nm] monat\b|\beste mes\b|\bce mois(-ci)?\b|这个月|這個月|本月|今月", _fixed("this month")),
    # N days / weeks / months ago
    (rf"\bvor\s+{_DEN}\s+(?P<u>tagen|tag|wochen|woche|monaten|monat)\b", _ago),
    (rf"\bhace\s+{_ESN}\s+(?P<u>días|dias|día|dia|semanas|semana|meses|mes)\b", _ago),
    (rf"\bil y a\s+{_FRN}\s+(?P<u>jours|jour|semaines|semaine|mois)\b", _ago),
    (rf"{_CJKN}\s*(?P<u>个星期|個星期|星期|週間|周|週|个月|個月|ヶ月|か月|カ月|ケ月|天|日)前", _ago),
    # weekdays: "last Monday", and a bare weekday in a question about the past ("am Montag", "lundi")
    (
        rf"\b(?:letzten|vergangenen|am|el pasado|el)\s+{_W}(?:\s+pasado)?\b|\b{_W.replace('w>', 'w3>')}\s+dernier\b",
        _weekday,
    ),
    (
        r"上?个?(?:周|星期|礼拜|週)(?P<w>[一二三四五六日天])|(?:先週の?)?(?P<w2>[月火水木金土日])曜",
        _weekday_cjk,
    ),
    # absolute: day month (year), (year) month (part), month
    (rf"\b(?P<d>\d{{1,2}})\.?\s+(?P<m>{_DE_MONTHS})(?:\s+{_Y})?\b", _month),
    (rf"\b(?P<d>\d{{1,2}})\s+de\s+(?P<m>{_ES_MONTHS})(?:\s+del?\s+{_Y})?\b", _month),
    (rf"\b(?P<d>\d{{1,2}})(?:er)?\s+(?P<m>{_FR_MONTHS})(?:\s+{_Y})?\b", _month),
    (rf"{_Y}\s*年\s*(?P<m>\d{{1,2}})\s*月\s*(?P<d>\d{{1,2}})\s*[日号號]", _month),
    (rf"{_Y}\s*年\s*(?P<m>\d{{1,2}})\s*月(?P<p>上旬|中旬|下旬|初|中|底|末)?", _month),
    (r"(?<![\d年])(?P<m>\d{1,2})\s*月\s*(?P<d>\d{1,2})\s*[日号號]", _month),
    (rf"(?<![\d年])(?P<m>\d{{1,2}}|{_CJK_NUM})\s*月(?!曜)(?P<p>上旬|中旬|下旬|初|中|底|末)?", _month),
    (rf"\b(?P<p>anfang|mitte|ende)\s+(?P<m>{_DE_MONTHS})(?:\s+{_Y})?\b", _month),
    (rf"\b(?:im|in)\s+(?P<m>{_DE_MONTHS})(?:\s+{_Y})?\b", _month),
    (rf"\ba\s+(?P<p>principios|mediados|finales)\s+de\s+(?P<m>{_ES_MONTHS})(?:\s+del?\s+{_Y})?\b", _month),
    (rf"\ben\s+(?P<m>{_ES_MONTHS})(?:\s+del?\s+{_Y})?\b", _month),
    (
        rf"\b(?P<p>début|debut|fin)\s+(?P<m>{_FR_MONTHS})(?:\s+{_Y})?\b|\bmi-(?P<m2>{_FR_MONTHS})\b",
        _month_fr,
    ),
    (rf"\ben\s+(?P<m>{_FR_MONTHS})(?:\s+{_Y})?\b", _month),
]
RULES = [(re.compile(p, re.IGNORECASE), f) for p, f in _TABLE]


def english(query: str) -> tuple[str, str] | None:
    """(the English phrase, the query's own words for it) for the first foreign date cue, or None. `query`
    is already casefolded."""
    for pattern, rewrite in RULES:
        m = pattern.search(query)
        if m:
            phrase = rewrite(m)
            if phrase:
                return phrase, m.group(0)
    return None


__all__ = ["english"]
