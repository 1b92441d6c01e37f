"""Memory suggestions: the phrasings they are found by (English and Chinese), novelty against existing
memories (exact copies skipped, near-duplicates offered as merges), and the user's decisions — nothing
becomes a memory without acceptance, and a rejection is remembered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from store import DuplicateMemoryError, InvalidInputError, NotFoundError, Store, ThreadIn
from store.extract.patterns import candidate_from_sentence, find_candidates
from store.extract.suggestions import (
    accept_all,
    accept_suggestion,
    count_pending,
    extract_suggestions,
    get_suggestion,
    list_suggestions,
    reject_suggestion,
    reject_suggestions,
)
from store.records import MessageIn


@pytest.mark.parametrize(
    ("sentence", "category"),
    [
        ("I prefer pytest over unittest for every project.", "preference"),
        ("I always use type hints in new Python code.", "preference"),
        ("Don't use emojis in commit messages.", "preference"),
        ("Please never suggest jQuery to me.", "preference"),
        ("I don't want to pay more than ten euros a month.", "preference"),
        ("Thanks. I prefer plain asyncio over trio.", "preference"),
        ("I'm building a local-first notes app with semantic search.", "project"),
        ("Our repo uses pnpm workspaces and Turborepo.", "project"),
        ("We decided to use sqlite-vec plus FTS5 in one file.", "project"),
        ("I know Python and Go well.", "skill"),
        ("I know how to write Kubernetes operators.", "skill"),
        ("I'm learning Rust lifetimes this month.", "skill"),
        ("I've been using Vim for ten years.", "skill"),
        ("I work at a logistics company in Hamburg.", "fact"),
        ("I have a Synology DS920+ with 3 TB of photos.", "fact"),
        ("I'm a data engineer on the platform team.", "fact"),
        ("我喜欢偏甜一点的口味，但不要太油腻。", "preference"),
        ("以后不要给我推荐需要烤箱的菜谱。", "preference"),
        ("我家里人都不吃辣，以后推荐菜谱的时候尽量别放辣椒。", "preference"),
        ("我在做一个离线的个人知识库应用。", "project"),
        ("我们的项目用 Django 和 PostgreSQL。", "project"),
        ("我会 Python 和一点 Go。", "skill"),
        ("我正在学日语，准备明年去东京。", "skill"),
        ("我是一名后端工程师，主要写 Java。", "fact"),
        ("我打算四月底去京都玩五天。", "fact"),
    ],
)
def test_phrasings_give_the_expected_category(sentence: str, category: str) -> None:
    c = candidate_from_sentence(sentence)
    assert c is not None, sentence
    assert c.category == category
    assert 1 <= c.importance <= 10


@pytest.mark.parametrize(
    "sentence",
    [
        "Do I need to prefer one over the other?",
        "I don't know why it fails.",
        "I like that idea.",
        "If I always used tabs, would it matter?",
        "I know what you mean.",
        "I'm leading it.",
        "I have a question about lifetimes.",
        "Don't worry about the tests yet.",
        "The weather was nice today.",
        "我会在明天再试一次。",
        "家里没有冰糖，可以用白砂糖吗？",
        "你说我喜欢什么？",
    ],
)
def test_questions_hypotheticals_and_chatter_are_not_candidates(sentence: str) -> None:
    assert candidate_from_sentence(sentence) is None


def test_importance_follows_emphasis_hedges_and_repetition() -> None:
    base = candidate_from_sentence("I prefer dark themes in editors.")
    strong = candidate_from_sentence("I always want dark themes in editors.")
    hedged = candidate_from_sentence("I prefer dark themes for now.")
    assert base is not None and strong is not None and hedged is not None
    assert hedged.importance < base.importance < strong.importance
    found = find_candidates(
        [(1, 0, "I prefer dark themes in editors."), (2, 2, "I prefer dark themes in editors.")]
    )
    assert len(found) == 1 and found[0].importance == base.importance + 1 and found[0].message_id == 1


def test_filler_is_dropped_and_subordinate_openings_kept() -> None:
    a = candidate_from_sentence("Thanks, I prefer short answers without preamble.")
    b = candidate_from_sentence("When writing Python, I always use type hints.")
    c = candidate_from_sentence("顺便记一下：我喜欢安静的寺庙和小巷。")
    assert a is not None and a.content == "I prefer short answers without preamble."
    assert b is not None and b.content == "When writing Python, I always use type hints."
    assert c is not None and c.content == "我喜欢安静的寺庙和小巷。"


CONVERSATION = [
    ("user", "I'm building a webhook relay in Python 3.12 with aiohttp. Sometimes background tasks stop."),
    (
        "assistant",
        "I prefer to explain this carefully: keep a reference to each task, or it may be collected.",
    ),
    ("user", "That was it! I know asyncio basics but never used TaskGroup. How do I shut down cleanly?"),
    ("assistant", "Use a TaskGroup and cancel it on shutdown."),
    (
        "user",
        "Thanks. I prefer to keep dependencies minimal, so no anyio for now.\n"
        "```python\n# I prefer this comment not to become a memory\n```",
    ),
    ("user", "我们的项目用 PostgreSQL 做主库。以后不要推荐 MongoDB 给我。"),
    ("tool", "I prefer tool output never to be read as the user's words."),
]


def write(store: Store, external_id: str, convo: list[tuple[str, str]]) -> int:
    msgs = [MessageIn(role, text, f"{external_id}-{i}") for i, (role, text) in enumerate(convo)]
    return store.write_thread(ThreadIn("test", external_id, external_id, msgs)).thread_id


def test_a_written_conversation_yields_the_expected_suggestions(store: Store) -> None:
    tid = write(store, "relay", CONVERSATION)
    r = extract_suggestions(store, tid)
    got = {(s.category, s.content) for s in r.new}
    assert got == {
        ("project", "I'm building a webhook relay in Python 3.12 with aiohttp."),
        ("skill", "I know asyncio basics but never used TaskGroup."),
        ("preference", "I prefer to keep dependencies minimal, so no anyio for now."),
        ("project", "我们的项目用 PostgreSQL 做主库。"),
        ("preference", "以后不要推荐 MongoDB 给我。"),
    }
    assert all(s.status == "pending" and s.thread_id == tid and s.message_id for s in r.new)
    assert store.stats()["memories"]["active"] == 0  # nothing became a memory
    again = extract_suggestions(store, tid)
    assert again.new == [] and again.already_decided == 5 and len(again.pending) == 5


def test_existing_memories_are_skipped_and_near_duplicates_offered_as_merges(store: Store) -> None:
    exact = store.add_memory("I know asyncio basics but never used TaskGroup.", "skill").memory
    near = store.add_memory("I am building a webhook relay in Python 3.12 with aiohttp", "project").memory
    tid = write(store, "relay", CONVERSATION)
    r = extract_suggestions(store, tid)
    assert r.already_memories == 1
    assert all("asyncio basics" not in s.content for s in r.new)
    merge = next(s for s in r.new if "webhook relay" in s.content)
    assert merge.merge_with == near.id and merge.similarity is not None and merge.similarity >= 0.9
    assert merge.to_json()["action"] == "merge"
    res = accept_suggestion(store, merge.id)
    assert res.action == "merged" and res.memory.id == near.id
    assert res.memory.content == "I'm building a webhook relay in Python 3.12 with aiohttp."
    assert [h.event for h in store.memory_history(near.id)] == ["add", "merge"]
    assert store.get_memory(exact.id).content == exact.content


def test_a_merge_into_a_pinned_memory_asks_first(store: Store) -> None:
    pinned = store.add_memory(
        "I am building a webhook relay in Python 3.12 with aiohttp", "project", pinned=True
    ).memory
    tid = write(store, "relay", CONVERSATION)
    s = next(x for x in extract_suggestions(store, tid).new if "webhook relay" in x.content)
    assert s.merge_with == pinned.id
    with pytest.raises(DuplicateMemoryError):
        accept_suggestion(store, s.id)
    assert get_suggestion(store, s.id).status == "pending"
    assert store.get_memory(pinned.id).content == pinned.content
    res = accept_suggestion(store, s.id, force=True)
    assert res.action == "added" and res.memory.id != pinned.id


def test_rejected_suggestions_are_never_suggested_again(store: Store) -> None:
    tid = write(store, "relay", CONVERSATION)
    s = next(x for x in extract_suggestions(store, tid).new if x.category == "skill")
    rejected = reject_suggestion(store, s.id)
    assert rejected.status == "rejected" and rejected.decided_at is not None
    assert reject_suggestion(store, s.id).status == "rejected"  # twice is a no-op
    assert all(x.id != s.id for x in extract_suggestions(store, tid).pending)
    # The same words in another thread, even after the first thread is gone.
    other = write(
        store, "other", [("user", "Hello again.  I know   asyncio basics but never used TaskGroup.")]
    )
    store.delete_thread(tid)
    r = extract_suggestions(store, other)
    assert r.new == [] and r.already_decided == 1
    assert get_suggestion(store, s.id).status == "rejected" and get_suggestion(store, s.id).thread_id is None


def test_accept_with_edits_and_decisions_are_final(store: Store) -> None:
    tid = write(store, "relay", CONVERSATION)
    s = next(x for x in extract_suggestions(store, tid).new if x.category == "skill")
    res = accept_suggestion(store, s.id, content="Knows asyncio basics; new to TaskGroup", importance=3)
    m = res.memory
    assert (m.content, m.category, m.importance, m.origin, m.source_thread_id) == (
        "Knows asyncio basics; new to TaskGroup",
        "skill",
        3,
        "extract",
        tid,
    )
    assert res.suggestion.status == "accepted" and res.suggestion.memory_id == m.id
    with pytest.raises(InvalidInputError, match="already accepted"):
        accept_suggestion(store, s.id)
    with pytest.raises(InvalidInputError, match="already accepted"):
        reject_suggestion(store, s.id)
    with pytest.raises(NotFoundError):
        accept_suggestion(store, 9999)
    other = list_suggestions(store, thread_id=tid)[0]
    with pytest.raises(InvalidInputError):
        accept_suggestion(store, other.id, category="hobby")
    assert get_suggestion(store, other.id).status == "pending"


def test_accept_all_and_all_or_nothing_rejects(store: Store) -> None:
    tid = write(store, "relay", CONVERSATION)
    ids = [s.id for s in extract_suggestions(store, tid).new]
    with pytest.raises(NotFoundError):
        reject_suggestions(store, [ids[0], 9999])
    assert get_suggestion(store, ids[0]).status == "pending"
    reject_suggestions(store, ids[:2])
    bulk = accept_all(store, tid)
    assert len(bulk.accepted) == len(ids) - 2 and bulk.failed == []
    assert count_pending(store, tid) == 0
    assert store.stats()["memories"]["active"] == len(ids) - 2
    assert {m.origin for m in store.list_memories()} == {"extract"}


def test_extract_cli_is_scriptable(
    capsys: pytest.CaptureFixture[str], db_path: Path, no_model_config: Path
) -> None:
    from app.cli import main

    s = Store(db_path, embedder=None)
    tid = write(s, "relay", CONVERSATION)
    s.close()
    db = ["--db", str(db_path)]

    def run_json(*args: str) -> object:
        code = main([*db, *args, "--json"])
        out, err = capsys.readouterr()
        assert code == 0, err
        return json.loads(out)

    found = run_json("extract", str(tid))
    assert isinstance(found, dict)
    pending = found["threads"][0]["pending"]
    assert (
        len(pending) == 5
        and {
            "id",
            "category",
            "content",
            "importance",
            "status",
            "action",
            "merge_with",
            "similarity",
            "memory_id",
            "thread_id",
        }
        <= pending[0].keys()
    )
    first, second, *rest = [p["id"] for p in pending]
    accepted = run_json(
        "extract", "accept", str(first), "--text", "Builds a webhook relay", "--category", "project"
    )
    assert isinstance(accepted, dict) and accepted["action"] == "added"
    assert (
        accepted["memory"]["content"] == "Builds a webhook relay"
        and accepted["memory"]["origin"] == "extract"
    )
    assert run_json("extract", "reject", str(second))[0]["status"] == "rejected"  # type: ignore[index]
    listed = run_json("extract", "list", "--status", "all")
    assert isinstance(listed, list) and [x["status"] for x in listed].count("pending") == len(rest)
    bulk = run_json("extract", "--all", "--accept-all")
    assert isinstance(bulk, dict) and len(bulk["accepted"]) == len(rest) and bulk["failed"] == []
    assert main([*db, "extract", "accept", str(first)]) == 2  # already accepted
    assert main([*db, "extract", "accept", "1", "2"]) == 2
    assert main([*db, "extract", "reject"]) == 2
    assert main([*db, "extract", "nope"]) == 2
    assert main([*db, "extract", str(tid), "--text", "x"]) == 2
    capsys.readouterr()


@pytest.mark.model
def test_a_paraphrase_of_a_memory_is_offered_as_a_merge_with_the_real_model(
    db_path: Path, real_embedder
) -> None:  # type: ignore[no-untyped-def]
    s = Store(db_path, embedder=real_embedder)
    near = s.add_memory("I prefer pytest over unittest for testing Python code.", "preference").memory
    other = s.add_memory("Allergic to peanuts.", "fact").memory
    tid = write(
        s,
        "py",
        [
            ("user", "I prefer pytest over unittest for Python tests. Can you port these?"),
            ("user", "I'm learning Rust lifetimes this month."),
        ],
    )
    r = extract_suggestions(s, tid)
    by_cat = {x.category: x for x in r.new}
    assert by_cat["preference"].merge_with == near.id and by_cat["preference"].similarity >= 0.9  # type: ignore[operator]
    assert by_cat["skill"].merge_with is None
    res = accept_suggestion(s, by_cat["preference"].id)
    assert res.action == "merged" and res.memory.id == near.id
    assert s.get_memory(other.id).content == "Allergic to peanuts."
    s.close()
