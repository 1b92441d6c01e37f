"""The context builder on a real chat.db: budget, tiers, condensing, pinned and retrieved memories,
access counting, the summary tier, and the CLI's JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from store import InvalidInputError, Store, ThreadIn
from store.config import Config
from store.context.builder import TRUNCATED, build_context
from store.extract.summaries import summarize_thread
from store.records import MessageIn

WORDS = [
    "restic",
    "snapshot",
    "offsite",
    "schedule",
    "retention",
    "prune",
    "encryption",
    "repository",
    "drill",
    "storage",
]


def body(i: int, n_words: int = 40) -> str:
    return " ".join(WORDS[(i + k) % len(WORDS)] for k in range(n_words)) + f" (message {i})."


def write(store: Store, msgs: list[tuple[str, str]], external_id: str = "t") -> int:
    ins = [MessageIn(role, text, f"{external_id}-{i}") for i, (role, text) in enumerate(msgs)]
    return store.write_thread(ThreadIn("test", external_id, external_id, ins)).thread_id


def chat(n: int) -> list[tuple[str, str]]:
    return [("user" if i % 2 == 0 else "assistant", body(i)) for i in range(n)]


def check_invariants(store: Store, r: object, thread_id: int) -> None:
    from store.context.builder import ContextResult

    assert isinstance(r, ContextResult)
    s = r.token_stats
    exact = store.tokens.count_messages(r.messages)
    assert s.system + s.memories + s.summary + s.condensed + s.recent == s.total == exact
    assert exact <= r.available <= s.budget
    last = store.get_messages(thread_id, offset=store.get_thread(thread_id).message_count - 1, limit=1)
    if last:
        assert r.messages[-1]["role"] == last[0].role
        got = r.messages[-1]["content"]
        assert got == last[0].content or got.endswith(TRUNCATED)


def test_json_shape_and_exact_accounting(store: Store) -> None:
    tid = write(store, chat(60))
    r = build_context(store, tid, 2000, system="You are terse.")
    data = json.loads(json.dumps(r.to_json()))
    assert set(data) == {"messages", "token_stats", "metadata"}
    assert set(data["token_stats"]) == {
        "system",
        "memories",
        "summary",
        "condensed",
        "recent",
        "total",
        "budget",
    }
    assert set(data["metadata"]) == {
        "included_messages",
        "summarized_messages",
        "used_summary",
        "retrieved_memories",
        "pinned_memories",
    }
    assert all(set(m) == {"role", "content"} for m in data["messages"])
    assert data["messages"][0] == {"role": "system", "content": "You are terse."}
    check_invariants(store, r, tid)
    assert r.available == 1800  # 10% safety margin, no output reserve
    assert r.token_stats.recent <= 0.55 * (1800 - r.token_stats.system) + r.token_stats.recent / 10 + 50
    m = r.metadata
    assert m.included_messages == len(r.condensed_seqs) + len(r.recent_seqs)
    assert m.summarized_messages == 60 - m.included_messages
    seqs = r.condensed_seqs + r.recent_seqs
    assert seqs == list(range(60 - len(seqs), 60))  # a contiguous tail, in order
    assert len(r.recent_seqs) == 10


def test_condensing_rules_apply_to_older_messages_only(store: Store) -> None:
    tool_output = "row " * 400
    msgs = (
        [
            ("user", "Run the report."),
            ("assistant", "<think>private reasoning " * 30 + "</think>Running it now."),
            ("tool", tool_output),
        ]
        + chat(12)
        + [("tool", tool_output)]
    )
    tid = write(store, msgs)
    r = build_context(store, tid, 6000)
    by_seq = dict(
        zip(
            r.condensed_seqs + r.recent_seqs,
            r.messages[-(len(r.condensed_seqs) + len(r.recent_seqs)) :],
            strict=True,
        )
    )
    assert {1, 2} <= set(r.condensed_seqs) and 15 in r.recent_seqs
    assert by_seq[1]["content"] == "Running it now."
    assert by_seq[2]["content"] == tool_output[:200] + "... (truncated)"
    assert by_seq[15]["content"] == tool_output  # recent messages are verbatim
    check_invariants(store, r, tid)


def test_the_last_message_is_always_there_even_cut(store: Store) -> None:
    huge = " ".join(f"word{i}" for i in range(3000))
    tid = write(store, [*chat(5), ("user", huge)])
    r = build_context(store, tid, 300)
    assert len(r.messages) == 1 and r.recent_seqs == [5] and r.truncated_seqs == [5]
    assert r.messages[0]["content"].startswith("word0 word1") and r.messages[0]["content"].endswith(TRUNCATED)
    check_invariants(store, r, tid)


def test_too_small_a_budget_says_the_minimum(store: Store) -> None:
    tid = write(store, chat(3))
    with pytest.raises(InvalidInputError, match=r"at least (\d+)") as exc:
        build_context(store, tid, 10)
    minimum = int(str(exc.value).rsplit(" ", 1)[1])
    check_invariants(store, build_context(store, tid, minimum), tid)
    with pytest.raises(InvalidInputError):
        build_context(store, tid, 0)
    with pytest.raises(InvalidInputError):
        build_context(store, tid, 1000, output_reserve=-1)


def test_output_reserve_and_margin(db_path: Path) -> None:
    cfg = Config()
    cfg.context.safety_margin = 0.2
    s = Store(db_path, config=cfg, embedder=None)
    tid = write(s, chat(80))
    r = build_context(s, tid, 5000, output_reserve=1000)
    assert r.available == 3000 and r.token_stats.total <= 3000
    check_invariants(s, r, tid)
    s.close()


def test_pinned_memories_come_first_and_may_exceed_tier_one(store: Store) -> None:
    tid = write(store, chat(40))
    pinned = [
        store.add_memory(
            f"Pinned rule number {i}: always answer about {WORDS[i]} carefully.", "preference", pinned=True
        ).memory
        for i in range(6)
    ]
    store.add_memory("Allergic to hazelnuts.", "fact")
    r = build_context(store, tid, 800)
    assert r.metadata.pinned_memories == 6 and sorted(r.memory_ids) == [m.id for m in pinned]
    assert r.token_stats.memories > 0.10 * r.available  # pinned are not limited to tier 1's share
    block = r.messages[0]["content"]
    assert all(m.content in block for m in pinned) and "hazelnuts" not in block
    check_invariants(store, r, tid)


def test_memories_retrieved_for_the_query_are_touched(store: Store) -> None:
    tid = write(store, chat(30))
    hit = store.add_memory("Uses restic with an offsite storage box for backups.", "project").memory
    miss = store.add_memory("Allergic to hazelnuts.", "fact").memory
    pin = store.add_memory("Prefers short answers.", "preference", pinned=True).memory
    r = build_context(store, tid, 4000, query="restic offsite backups", touch=False)
    assert r.metadata.retrieved_memories == 1 and r.memory_ids == [pin.id, hit.id]
    assert store.get_memory(hit.id).access_count == 0  # a preview counts nothing
    build_context(store, tid, 4000, query="restic offsite backups")
    assert [store.get_memory(i).access_count for i in (hit.id, miss.id, pin.id)] == [1, 0, 1]


def test_latest_user_message_is_the_default_query(store: Store) -> None:
    hit = store.add_memory("Prefers Hetzner storage boxes for offsite backups.", "preference").memory
    tid = write(
        store,
        [
            ("user", "hello"),
            ("assistant", "hi"),
            ("user", "How should I pick a Hetzner storage box for offsite backups?"),
            ("assistant", "Pick the smallest tier that fits."),
        ],
    )
    r = build_context(store, tid, 3000, touch=False)
    assert r.memory_ids == [hit.id]
    assert "Hetzner storage boxes" in r.messages[0]["content"]


def test_summary_tier_only_when_messages_are_left_out(store: Store) -> None:
    tid = write(store, chat(200))
    summarize_thread(store, tid)
    small = build_context(store, tid, 3000)
    assert small.metadata.used_summary and small.token_stats.summary > 0
    assert any(m["content"].startswith("[Conversation summary]") for m in small.messages)
    short = write(store, chat(6), "short")
    summarize_thread(store, short)
    big = build_context(store, short, 20000)
    assert not big.metadata.used_summary and big.metadata.summarized_messages == 0
    check_invariants(store, small, tid)
    check_invariants(store, big, short)


def test_an_empty_thread_and_no_system_prompt(store: Store) -> None:
    tid = store.write_thread(ThreadIn("test", "empty", "empty", [])).thread_id
    r = build_context(store, tid, 100)
    assert r.messages == [] and r.token_stats.total == 2 and r.metadata.included_messages == 0


def test_context_cli(capsys: pytest.CaptureFixture[str], db_path: Path, no_model_config: Path) -> None:
    from app.cli import main

    s = Store(db_path, embedder=None)
    tid = write(s, chat(30))
    s.close()
    db = ["--db", str(db_path)]
    assert (
        main(
            [
                *db,
                "context",
                str(tid),
                "--budget",
                "1500",
                "--system",
                "Be brief.",
                "--output-reserve",
                "200",
                "--json",
            ]
        )
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert data["token_stats"]["budget"] == 1500 and data["token_stats"]["total"] <= 1150
    assert data["messages"][0] == {"role": "system", "content": "Be brief."}
    assert main([*db, "context", str(tid), "--budget", "1500"]) == 0
    out = capsys.readouterr().out
    assert "recent" in out and "--- user ---" in out
    assert main([*db, "context", str(tid), "--budget", "5"]) == 2
    assert main([*db, "context", "999", "--budget", "500"]) == 2
    assert "too small" in capsys.readouterr().err


@pytest.mark.model
def test_memories_are_retrieved_by_meaning_with_the_real_model(db_path: Path, real_embedder) -> None:  # type: ignore[no-untyped-def]
    s = Store(db_path, embedder=real_embedder)
    related = s.add_memory("Uses restic for laptop backups to a Hetzner storage box.", "project").memory
    s.add_memory("Allergic to peanuts.", "fact")
    tid = write(
        s,
        [
            ("user", "Hi!"),
            ("assistant", "Hello."),
            ("user", "How often should I schedule backups of my laptop?"),
        ],
    )
    r = build_context(s, tid, 4000)
    assert r.memory_ids == [related.id] and r.metadata.retrieved_memories == 1
    assert "restic" in r.messages[0]["content"] and "peanuts" not in r.messages[0]["content"]
    assert s.get_memory(related.id).access_count == 1
    check_invariants(s, r, tid)
    s.close()
