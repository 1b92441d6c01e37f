"""How a question's date is read (store.search.dates, dates_i18n, events): month names as whole words,
dates in the languages of the multilingual evaluation, and dates relative to an event."""

from __future__ import annotations

import datetime as dt

import pytest

from store.search.dates import Window, date_window, event_cue
from store.search.events import event_days

NOW = dt.datetime(2024, 6, 12, 15, tzinfo=dt.UTC).timestamp()  # a Wednesday


def _days(w: Window | None) -> tuple[str, str] | None:
    """The window as its first and last day (inclusive)."""
    if w is None:
        return None
    first = dt.datetime.fromtimestamp(w.since, dt.UTC).date()
    last = dt.datetime.fromtimestamp(w.until - 1, dt.UTC).date()
    return first.isoformat(), last.isoformat()


@pytest.mark.parametrize(
    "query",
    [
        "What did Jonas say in Marta's kitchen?",  # "in mar…" was March
        "What did Tariq cook in decades of trying?",  # "in dec…" was December
        "What did Ruth eat in junk food week?",  # "in jun…" was June
        "How did Sam feel over marathon training?",  # "over mar…" was March
        "May I ask what Marta's cat is called?",  # the verb, not the month
    ],
)
def test_a_word_starting_with_a_month_is_no_month(query: str) -> None:
    assert date_window(query, NOW) is None


@pytest.mark.parametrize(
    ("query", "days"),
    [
        ("What did Nadia do in marketing in June?", ("2024-06-01", "2024-06-30")),
        ("What did I buy in May?", ("2024-05-01", "2024-05-31")),
        ("In May I went to Lisbon: what did I see?", ("2024-05-01", "2024-05-31")),
        ("What did we plan on the 3rd of May?", ("2024-05-03", "2024-05-03")),
        ("what happened on may 3, 2024", ("2024-05-03", "2024-05-03")),
        ("What did I do in Mar 2023?", ("2023-03-01", "2023-03-31")),
        ("What happened in Sept. 2023?", ("2023-09-01", "2023-09-30")),
        ("What did we decide in mid-March?", ("2024-03-10", "2024-03-20")),
    ],
)
def test_real_months_are_still_read(query: str, days: tuple[str, str]) -> None:
    assert _days(date_window(query, NOW)) == days


@pytest.mark.parametrize(
    ("query", "days"),
    [
        # the multilingual evaluation's own date questions (bench/eval/langs)
        ("Was ist im November 2024 passiert?", ("2024-11-01", "2024-11-30")),
        ("¿Qué hizo Andrés en abril de 2024?", ("2024-04-01", "2024-04-30")),
        ("Qu'a fait Youssef en juillet 2024 ?", ("2024-07-01", "2024-07-31")),
        # relative forms, counted back from the archive's newest message (Wednesday 12 June 2024)
        ("Was hat Lena letzte Woche gemacht?", ("2024-06-03", "2024-06-09")),
        ("Was hat Lena gestern gekocht?", ("2024-06-11", "2024-06-11")),
        ("Was war vor zwei Wochen?", ("2024-05-25", "2024-06-02")),
        ("¿Qué hizo Andrés el fin de semana pasado?", ("2024-06-08", "2024-06-09")),
        ("¿Qué pasó hace dos semanas?", ("2024-05-25", "2024-06-02")),
        ("Qu'a fait Youssef la semaine dernière ?", ("2024-06-03", "2024-06-09")),
        ("Qu'est-ce qui s'est passé il y a 3 jours ?", ("2024-06-08", "2024-06-10")),
        ("Qu'a dit Youssef début mai ?", ("2024-05-01", "2024-05-10")),
        ("他上周三做了什么？", ("2024-06-05", "2024-06-05")),
        ("小林昨天说了什么？", ("2024-06-11", "2024-06-11")),
        ("2024年3月发生了什么？", ("2024-03-01", "2024-03-31")),
        ("先週の土曜日に何をしましたか？", ("2024-06-08", "2024-06-08")),
        ("3日前に何があった？", ("2024-06-08", "2024-06-10")),
    ],
)
def test_dates_in_other_languages(query: str, days: tuple[str, str]) -> None:
    assert _days(date_window(query, NOW)) == days


@pytest.mark.parametrize(
    ("query", "relation", "days", "event"),
    [
        ("What did Jonas do the weekend before Marta's birthday?", "before", 7, "marta's birthday"),
        ("What did I read the week after my trip to Lisbon?", "after", 7, "my trip to lisbon"),
        ("What did I buy before I started the new job?", "before", 0, "i started the new job"),
        ("What arrived three weeks after the old oven broke?", "after", 21, "the old oven broke"),
        ("Which car did I replace after the MOT failure, and with what?", "after", 0, "the mot failure"),
        ("What did Eli do the same weekend Ruth asked for karaoke?", "same", 0, "ruth asked for karaoke"),
    ],
)
def test_a_date_relative_to_an_event_names_the_event(
    query: str, relation: str, days: int, event: str
) -> None:
    cue = event_cue(query)
    assert cue is not None and (cue.relation, cue.days, cue.event) == (relation, days, event)


@pytest.mark.parametrize(
    "query",
    [
        "Who looked after my mother last year?",  # "look after" is no date
        "What did Noor buy for her anniversary the week before it?",  # the event is named elsewhere
        "What did Jonas say about the boat?",
    ],
)
def test_no_event_where_there_is_none(query: str) -> None:
    assert event_cue(query) is None


def test_a_holiday_needs_no_lookup() -> None:
    """ "The week before Halloween" is read from the calendar: the seven days before the last 31 October."""
    assert _days(date_window("What did Kofi bake the week before Halloween?", NOW)) == (
        "2023-10-24",
        "2023-10-30",
    )
    assert _days(date_window("What happened at Christmas?", NOW)) == ("2023-12-24", "2023-12-26")


@pytest.mark.parametrize(
    ("query", "days"),
    [
        # a date the rest of the query names wins over an event the archive would be asked about
        (
            "What did we decide in January 2024 about where to live after the PhD?",
            ("2024-01-01", "2024-01-31"),
        ),
        # a month named is surer than a holiday mentioned
        (
            "What did Pickle ruin in February, and what did he destroy at Christmas?",
            ("2024-02-01", "2024-02-29"),
        ),
        # relative to a date: the date and the three weeks on that side of it
        ("Where did Aisha live before 2019?", ("2018-12-10", "2019-12-31")),
        ("What did Priya do after July 2023?", ("2023-07-01", "2023-08-22")),
        ("What has Tom done since late August 2023?", ("2023-08-20", "2024-06-12")),
        # a holiday naming a thing is no date
        ("What did Marta buy at the Christmas market?", None),
    ],
)
def test_dates_beside_events_and_holidays(query: str, days: tuple[str, str] | None) -> None:
    assert _days(date_window(query, NOW)) == days


def test_the_event_day_is_where_the_strong_matches_cluster() -> None:
    """Three turns of one day that hold all the event's words outweigh a better-scored turn holding one."""
    day = dt.datetime(2024, 3, 9, 12, tzinfo=dt.UTC).timestamp()
    other = dt.datetime(2024, 1, 2, 12, tzinfo=dt.UTC).timestamp()
    matches = [(other, 9.0, 0.5), (day, 5.0, 1.0), (day + 60, 4.0, 1.0), (day + 120, 4.0, 1.0)]
    assert [d.isoformat() for d, _ in event_days(matches)] == ["2024-03-09"]
    # "the first parkrun" is the earliest day the strong matches are on, "the last" the latest
    later = dt.datetime(2024, 5, 4, 12, tzinfo=dt.UTC).timestamp()
    both = [(day, 5.0, 1.0), (later, 4.0, 1.0)]
    assert event_days(both, "the first parkrun")[0][0] == dt.date(2024, 3, 9)
    assert event_days(both, "the last parkrun")[0][0] == dt.date(2024, 5, 4)
