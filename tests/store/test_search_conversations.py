"""Issue 30: search in long conversations between people, and a keyword half that never empties.

Against the real apsw + sqlite-vec database in a temp file, with the fake embedder (the model is not the
point of these rules: what is, is how the ranking reads a conversation's structure).
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace
from pathlib import Path

from store import MessageIn, Store, ThreadIn
from store.search.engine import Filters
from store.search.rank import Fusion


def _thread(store: Store, ext: str, texts: list[str], start: float = 1_700_000_000.0) -> int:
    msgs = [
        MessageIn("user" if i % 2 == 0 else "assistant", t, f"{ext}-{i}", start + 60.0 * i)
        for i, t in enumerate(texts)
    ]
    return store.write_thread(ThreadIn("generic", ext, "chat", msgs)).thread_id


def test_keyword_only_returns_every_row_sharing_a_word(store: Store) -> None:
    """One word of four in the archive used to fall under the keyword floor (coverage < 0.6), and the
    search came back empty although the turn that answers it is there."""
    _thread(store, "k", ["I painted a sunrise over the harbour yesterday", "lovely", "what about dinner"])
    resp = store.search("when did Melanie paint that lake sunrise", scope="messages", keyword_only=True)
    assert [r.external_id for r in resp.results] == ["k-0"] and resp.notice is None


def test_keyword_only_still_returns_nothing_when_no_word_occurs(store: Store) -> None:
    _thread(store, "k", ["I painted a sunrise over the harbour yesterday", "lovely"])
    resp = store.search("quantum chromodynamics lattice", scope="messages", keyword_only=True)
    assert resp.results == [] and resp.notice is not None and "no good match" in resp.notice


# -- the conversation rules (each with its weight set here, so the rule is what is tested) -----------------

DAY = 86_400.0
T0 = 1_700_000_000.0  # 2023-11-14


def _chat(store: Store, turns: list[tuple[str, str, float]], ext: str = "c") -> int:
    """One thread of (speaker, text, time) turns; the first speaker is the user, named in metadata."""
    owner = turns[0][0]
    msgs = [
        MessageIn("user" if who == owner else "assistant", text, f"{ext}-{i}", at, metadata={"name": who})
        for i, (who, text, at) in enumerate(turns)
    ]
    return store.write_thread(ThreadIn("generic", ext, "chat", msgs)).thread_id


def _ids(store: Store, query: str, fusion: Fusion, k: int = 10) -> list[str]:
    resp = store.search(query, scope="messages", k=k, fusion=fusion)
    return [r.external_id or "" for r in resp.results]


# Every conversation rule off (each test turns on the one it is about); no floor.
PLAIN = Fusion(
    semantic_weight=1.0,
    neighbours=0.0,
    thread=0.0,
    window=1,
    reply=0.0,
    join_replies=False,
    role=0.0,
    author=0.0,
    date=0.0,
    event=0.0,
    told=0.0,
    diverse=0.0,
    floor=1e-9,
    keyword_floor=1e-9,
)


def test_the_reply_to_a_matching_question_inherits_its_match(store: Store) -> None:
    """ "Are you still vegetarian?" / "Yes, since 2019": the answer shares no word with the query."""
    _chat(
        store,
        [
            ("Marta", "The vegetarian lasagne at the new place was great", T0 - 9 * DAY),
            ("Jonas", "Vegetarian lasagne sounds like a good Saturday", T0 - 9 * DAY + 60),
            ("Marta", "Are you still vegetarian these days?", T0),
            ("Jonas", "Yes, since 2019. Four years now.", T0 + 60),
            ("Marta", "The weather is awful here today", T0 + 120),
            ("Jonas", "Four seasons in one day, as usual", T0 + 180),
            ("Marta", "A vegetarian menu for the wedding, then", T0 + 9 * DAY),
            ("Jonas", "The caterer does a vegetarian menu, yes", T0 + 9 * DAY + 60),
        ],
    )
    query = "Is Jonas vegetarian?"
    without = _ids(store, query, PLAIN)
    with_reply = _ids(store, query, replace(PLAIN, reply=1.0, join_replies=True))
    assert without.index("c-3") > 4
    assert with_reply.index("c-3") <= 2 and "c-2" in with_reply[:3]


def test_a_gap_of_hours_starts_a_new_session_inside_one_thread(store: Store) -> None:
    """The session boost lifts the turns of the sitting that is about the query, not the whole thread."""
    turns = [("Ana", "We should book the ferry to the island for the festival", T0)]
    turns += [("Ben", "Ferry times and the festival camping are sorted", T0 + 60)]
    turns += [("Ana", "Which festival camping did you pick?", T0 + 120)]
    turns += [("Ben", "The one by the lighthouse, pitch 14", T0 + 180)]
    turns += [("Ana", "Lighthouse pictures please", T0 + 5 * DAY)]  # days later: another session
    turns += [("Ben", "Pitch black at night here, no pictures", T0 + 5 * DAY + 60)]
    _chat(store, turns)
    hood = store.message_context([4, 5], Filters(), 1, 3.0).hood
    assert hood is not None and hood.session_of[4] == hood.session_of[3] != hood.session_of[5]
    assert hood.session_of[5] == hood.session_of[6]
    query = "festival ferry camping pitch"
    plain, boosted = _ids(store, query, PLAIN), _ids(store, query, replace(PLAIN, thread=0.8))
    assert plain.index("c-3") > plain.index("c-5") and boosted.index("c-3") < boosted.index("c-5")


def test_a_named_speakers_own_turns_come_first(store: Store) -> None:
    _chat(
        store,
        [
            ("Imogen", "I translate video game scripts from German", T0),
            ("Tariq", "I drive the early train to Leeds", T0 + 60),
            ("Imogen", "My rabbits hate the new hutch", T0 + 120),
            ("Tariq", "Our new hutch for the rabbits arrived too", T0 + 180),
        ],
    )
    fusion = replace(PLAIN, author=2.0)
    assert _ids(store, "What did Tariq say about the hutch for his rabbits?", fusion)[0] == "c-3"
    assert _ids(store, "What did Imogen say about the hutch for her rabbits?", fusion)[0] == "c-2"


def test_i_and_you_prefer_the_users_and_the_assistants_turns(store: Store) -> None:
    _chat(
        store,
        [
            ("me", "Remind me which espresso machine to buy", T0),
            ("bot", "The espresso machine I suggested is the Gaggia Classic", T0 + 60),
            ("me", "I bought an espresso machine, the Rancilio Silvia", T0 + 120),
            ("bot", "Enjoy it", T0 + 180),
        ],
    )
    fusion = replace(PLAIN, role=2.0)
    assert _ids(store, "which espresso machine did I buy", fusion)[0] in ("c-0", "c-2")
    assert _ids(store, "which espresso machine did you suggest", fusion)[0] == "c-1"


def test_a_date_in_the_query_lifts_the_turns_of_that_window(store: Store) -> None:
    may = 1_684_000_000.0  # 2023-05-13
    _chat(
        store,
        [
            ("Ruth", "We went to the lake for a swim", may - 60 * DAY),
            ("Eli", "The lake was freezing", may - 60 * DAY + 60),
            ("Ruth", "Lovely at the lake today", may),
            ("Eli", "Sounds like a good Saturday", may + 60),
            ("Ruth", "The lake is closed for the winter", may + 150 * DAY),
        ],
    )
    fusion = replace(PLAIN, date=3.0)
    assert _ids(store, "the lake swim in May 2023", fusion)[0] in ("c-2", "c-3")
    assert _ids(store, "the lake swim in March 2023", fusion)[0] in ("c-0", "c-1")
    assert _ids(store, "the lake swim in May 2023", PLAIN)[0] == "c-0"  # without the date rule


def test_a_date_relative_to_an_event_lifts_the_turns_around_the_event(store: Store) -> None:
    """ "The weekend before Marta's birthday": the archive says when the birthday was (the day its turns
    talk about it), and the Saturday before it is the answer, although two other climbing turns hold more
    of the query's words."""
    at = {d: dt.datetime(2023, *d, 12, tzinfo=dt.UTC).timestamp() for d in ((3, 4), (6, 10), (6, 14), (9, 2))}
    _chat(
        store,
        [
            ("Jonas", "Climbing weekend: the Jonas climbing weekend at the wall", at[3, 4]),
            ("Jonas", "Went climbing at the quarry on Saturday", at[6, 10]),
            ("Jonas", "Happy birthday Marta!", at[6, 14]),
            ("Marta", "Thank you! Best birthday, Marta is spoilt", at[6, 14] + 60),
            ("Jonas", "Another climbing weekend for Jonas at the wall", at[9, 2]),
        ],
    )
    query = "What climbing did Jonas do the weekend before Marta's birthday?"
    assert _ids(store, query, replace(PLAIN, event=6.0))[0] == "c-1"
    assert _ids(store, query, PLAIN)[0] != "c-1"  # without the event rule


def test_a_turn_telling_of_the_date_later_shares_its_lift(store: Store) -> None:
    """Long chats are told in sittings: "last week I adopted a rescue dog", written on 3 June, is about May;
    `told` gives it a share of the date's lift (a turn written inside the window gets all of it)."""
    at = {d: dt.datetime(2023, *d, 12, tzinfo=dt.UTC).timestamp() for d in ((2, 1), (6, 3), (9, 2))}
    _chat(
        store,
        [
            ("Ruth", "Ruth will adopt a dog: Ruth wants to adopt a dog so much", at[2, 1]),
            ("Ruth", "Last week I adopted a rescue dog called Pip", at[6, 3]),
            ("Ruth", "Ruth may adopt another dog, a second dog to adopt", at[9, 2]),
        ],
    )
    query = "Which dog did Ruth adopt in May 2023?"
    assert _ids(store, query, replace(PLAIN, date=6.0, told=1.0))[0] == "c-1"
    assert _ids(store, query, replace(PLAIN, date=6.0))[0] != "c-1"  # without it


def test_a_list_question_spreads_over_sessions(store: Store) -> None:
    turns = [
        ("Jonas", "Books I recommend: read The Shipping News, the best of the books", T0),
        ("Marta", "You recommend books about boats, always books about boats", T0 + 60),
        ("Jonas", "Boats make the best books, I recommend them all", T0 + 120),
        ("Jonas", "Another book I recommend: Kon-Tiki", T0 + 20 * DAY),
        ("Marta", "It is raining again", T0 + 20 * DAY + 60),
        ("Jonas", "And I recommend the book The Old Man and the Sea", T0 + 40 * DAY),
        ("Marta", "Pimento knocked over a plant", T0 + 40 * DAY + 60),
    ]
    _chat(store, turns)
    query = "which books did Jonas recommend"
    session = {"c-0": 0, "c-1": 0, "c-2": 0, "c-3": 1, "c-4": 1, "c-5": 2, "c-6": 2}
    first = _ids(store, query, replace(PLAIN, thread=0.8), k=3)
    spread = _ids(store, query, replace(PLAIN, thread=0.8, diverse=1.0), k=3)
    assert len({session[i] for i in first}) < 3 and {session[i] for i in spread} == {0, 1, 2}


def test_the_generic_format_keeps_who_said_each_message(store: Store, tmp_path: Path) -> None:
    """A chat export's speaker ("speaker", "author", "sender" or "name") becomes the message's author,
    which a query naming that person prefers."""
    from store.importing.pipeline import import_paths

    src = tmp_path / "chat.jsonl"
    msgs = [
        {
            "id": "a",
            "role": "user",
            "speaker": "Ruth",
            "content": "My allotment pumpkin weighs 41 kilos",
            "created_at": T0,
        },
        {
            "id": "b",
            "role": "assistant",
            "author": "Noor",
            "content": "My pumpkin soup recipe uses 2 kilos",
            "created_at": T0 + 60,
        },
        {
            "id": "c",
            "role": "assistant",
            "sender": "Eli",
            "content": "Pumpkins everywhere this week",
            "created_at": T0 + 120,
        },
    ]
    src.write_text(json.dumps({"id": "t", "title": "group", "messages": msgs}) + "\n", encoding="utf-8")
    import_paths(store, [src])
    names = [
        json.loads(m).get("name") for (m,) in store.con.execute("SELECT metadata FROM messages ORDER BY seq")
    ]
    assert names == ["Ruth", "Noor", "Eli"]
    fusion = replace(PLAIN, author=2.0)
    assert _ids(store, "what did Noor say about pumpkin kilos", fusion)[0] == "b"


def test_common_words_and_date_words_are_never_a_speakers_name() -> None:
    from store.search.conversation import read_cues
    from store.search.dates import date_window

    query = "When will Tariq see the flat in May 2024?"
    cues = read_cues(query, date_window(query, None))
    assert "tariq" in cues.names and "will" not in cues.names and "may" not in cues.names
    assert cues.window is not None
