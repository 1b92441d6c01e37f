"""Thread summaries on a real chat.db with the fake embedder (and with no model at all): the cap, the
incremental update, recursive compression and its history, and what is never summarised."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from embeddings import FakeEmbedder
from store import Store, ThreadIn
from store.config import Config
from store.extract.sentences import split_sentences, strip_reasoning
from store.extract.summaries import (
    compression_history,
    maybe_summarize,
    summarize_thread,
    threads_to_summarize,
    unsummarised_count,
)
from store.records import MessageIn
from store.text import fts_query

TOPIC_WORDS = {
    "backup": [
        "restic",
        "snapshot",
        "offsite",
        "storage",
        "schedule",
        "retention",
        "prune",
        "encryption",
        "repository",
        "drill",
    ],
    "garden": [
        "tomato",
        "seedling",
        "compost",
        "watering",
        "trellis",
        "mulch",
        "greenhouse",
        "pruning",
        "harvest",
        "soil",
    ],
}


def chatter(rng: random.Random, topic: str, n: int) -> list[str]:
    words = TOPIC_WORDS[topic]
    out = []
    for _ in range(n):
        sentences = []
        for _ in range(rng.randint(2, 6)):
            body = " ".join(rng.choice(words) for _ in range(rng.randint(6, 14)))
            sentences.append(f"The {body} matters here.")
        out.append(" ".join(sentences))
    return out


def write(store: Store, external_id: str, texts: list[str], start: int = 0) -> int:
    msgs = [
        MessageIn("user" if (start + i) % 2 == 0 else "assistant", t, f"{external_id}-{start + i}")
        for i, t in enumerate(texts)
    ]
    return store.write_thread(ThreadIn("test", external_id, external_id, msgs)).thread_id


def history_rows(store: Store, thread_id: int) -> list[dict[str, object]]:
    return compression_history(store, thread_id)[::-1]


def small_cap_store(db_path: Path, cap: int, embedder: object = "fake") -> Store:
    cfg = Config()
    cfg.summary.max_tokens = cap
    return Store(db_path, config=cfg, embedder=FakeEmbedder() if embedder == "fake" else None)


def test_long_thread_summary_stays_under_the_cap_and_is_indexed(store: Store) -> None:
    rng = random.Random(1)
    tid = write(store, "long", chatter(rng, "backup", 300))
    r = summarize_thread(store, tid)
    assert r.action == "created" and r.strategy == "extractive" and r.method == "embedding"
    s = store.get_summary(tid)
    assert s is not None and s.last_message_seq == 299 and s.content
    assert s.token_count == store.tokens.count(s.content) <= store.config.summary.max_tokens
    assert r.before_tokens == store.get_thread(tid).token_count
    assert all(line.startswith(("- user: ", "- assistant: ")) for line in s.content.splitlines())
    q = fts_query("restic")
    assert q is not None
    assert [
        row[0]
        for row in store.con.execute("SELECT rowid FROM fts_summaries WHERE fts_summaries MATCH ?", (q,))
    ] == [tid]
    rows = history_rows(store, tid)
    assert len(rows) == 1 and rows[0]["messages_compressed"] == 300 and rows[0]["strategy"] == "extractive"
    assert rows[0]["after_tokens"] == s.token_count and rows[0]["before_tokens"] == r.before_tokens
    assert rows[0]["ratio"] == round(s.token_count / r.before_tokens, 4) < 0.1
    assert store.check_indexes() == []


def test_incremental_update_covers_only_the_new_messages(store: Store) -> None:
    rng = random.Random(2)
    tid = write(store, "inc", chatter(rng, "backup", 40))
    first = summarize_thread(store, tid)
    assert first.summary is not None
    old = first.summary.content
    new_texts = chatter(rng, "garden", 10)
    write(store, "inc", new_texts, start=40)
    assert unsummarised_count(store, tid) == 10
    r = summarize_thread(store, tid)
    assert r.action == "updated" and r.strategy == "incremental" and r.messages_covered == 10
    assert r.summary is not None and r.summary.last_message_seq == 49
    assert r.summary.content.startswith(old)  # the old part is kept as it was
    added = r.summary.content[len(old) :].strip().splitlines()
    assert added, "the new messages added something"
    for line in added:
        sentence = line.split(": ", 1)[1]
        assert any(sentence in t for t in new_texts), line
    details = history_rows(store, tid)[-1]["details"]
    assert isinstance(details, dict) and (details["from_seq"], details["to_seq"]) == (40, 49)
    assert summarize_thread(store, tid).action == "unchanged"


def test_recursive_compression_is_triggered_and_recorded(db_path: Path) -> None:
    s = small_cap_store(db_path, 200)
    rng = random.Random(3)
    tid = write(s, "rec", chatter(rng, "backup", 60))
    first = summarize_thread(s, tid)
    assert first.summary is not None and first.summary.token_count <= 200
    write(s, "rec", chatter(rng, "garden", 60), start=60)
    r = summarize_thread(s, tid)
    assert r.strategy == "recursive"
    assert r.summary is not None and r.summary.token_count <= 200
    rows = history_rows(s, tid)
    assert [row["strategy"] for row in rows] == ["extractive", "recursive"]
    details = rows[1]["details"]
    assert isinstance(details, dict) and details["passes"] >= 1
    assert details["compressed_old_tokens"] <= details["old_tokens"] // 3
    garden = TOPIC_WORDS["garden"]
    assert any(w in r.summary.content for w in garden), "the new part made it into the merged summary"
    s.close()


def test_decisions_tasks_and_preferences_are_favoured(db_path: Path) -> None:
    s = small_cap_store(db_path, 120)
    rng = random.Random(4)
    texts = chatter(rng, "backup", 30)
    texts[11] += " We decided to use restic with a Hetzner storage box for the offsite copy."
    texts[20] += " TODO: write the restore drill checklist before June."
    texts[26] += " I prefer systemd timers over cron for every schedule."
    tid = write(s, "cues", texts)
    content = summarize_thread(s, tid).summary.content  # type: ignore[union-attr]
    assert "We decided to use restic" in content
    assert "TODO: write the restore drill checklist" in content
    assert "I prefer systemd timers" in content
    s.close()


def test_without_a_model_it_falls_back_to_tfidf(db_path: Path) -> None:
    s = small_cap_store(db_path, 150, embedder=None)
    rng = random.Random(5)
    texts = chatter(rng, "garden", 40)
    texts[17] += " We decided to build a cedar trellis for the tomatoes."
    tid = write(s, "tfidf", texts)
    r = summarize_thread(s, tid)
    assert r.method == "tfidf" and r.summary is not None
    assert 0 < r.summary.token_count <= 150
    assert "We decided to build a cedar trellis" in r.summary.content
    assert json.loads(json.dumps(r.to_json()))["method"] == "tfidf"
    s.close()


def test_code_reasoning_tool_output_and_filler_are_not_summarised(store: Store) -> None:
    texts = [
        "<think>secret chain of thought about the zebra plan</think>We will migrate the nightly backup to restic.",
        "```python\nprint('hidden code line')\n```\nThe restic repository lives on the storage box.",
        "Thanks!",
    ]
    tid = store.write_thread(
        ThreadIn(
            "test",
            "clean",
            "clean",
            [
                MessageIn("user", texts[0], "a"),
                MessageIn("assistant", texts[1], "b"),
                MessageIn("tool", "tool output: restic snapshot list with forty lines of ids", "c"),
                MessageIn("user", texts[2], "d"),
            ],
        )
    ).thread_id
    content = summarize_thread(store, tid).summary.content  # type: ignore[union-attr]
    assert "secret" not in content and "hidden code" not in content and "tool output" not in content
    assert "Thanks" not in content
    assert "We will migrate the nightly backup to restic." in content


def test_a_thread_with_nothing_to_say_still_advances(store: Store) -> None:
    tid = store.write_thread(
        ThreadIn("test", "tiny", "tiny", [MessageIn("user", "ok", "a"), MessageIn("assistant", "Sure!", "b")])
    ).thread_id
    r = summarize_thread(store, tid)
    assert r.summary is not None and r.summary.content == "" and r.summary.last_message_seq == 1
    assert store.check_indexes() == []


def test_maybe_summarize_waits_for_the_trigger(store: Store) -> None:
    rng = random.Random(6)
    trigger = store.config.summary.trigger_messages
    tid = write(store, "trig", chatter(rng, "backup", trigger - 1))
    assert maybe_summarize(store, tid) is None
    assert threads_to_summarize(store, min_new=trigger) == []
    write(store, "trig", chatter(rng, "backup", 1), start=trigger - 1)
    assert threads_to_summarize(store, min_new=trigger) == [tid]
    r = maybe_summarize(store, tid)
    assert r is not None and r.messages_covered == trigger
    assert maybe_summarize(store, tid) is None
    assert threads_to_summarize(store) == []


def test_rebuild_starts_from_the_first_message(store: Store) -> None:
    rng = random.Random(7)
    tid = write(store, "reb", chatter(rng, "backup", 20))
    summarize_thread(store, tid)
    write(store, "reb", chatter(rng, "garden", 5), start=20)
    summarize_thread(store, tid)
    r = summarize_thread(store, tid, force=True)
    assert r.action == "updated" and r.strategy == "extractive" and r.messages_covered == 25
    assert len(history_rows(store, tid)) == 3


def test_sentences_are_cut_the_same_way_everywhere() -> None:
    text = (
        "Start with the 3-2-1 rule. Version 3.11 is fine!\n1. **List what matters.** Photos first.\n"
        "| a | b |\n<think>hidden</think>我想做红烧肉。我喜欢偏甜的口味！好吗？"
    )
    assert list(split_sentences(text)) == [
        "Start with the 3-2-1 rule.",
        "Version 3.11 is fine!",
        "List what matters.",
        "Photos first.",
        "我想做红烧肉。",
        "我喜欢偏甜的口味！",
        "好吗？",
    ]
    assert strip_reasoning('a<details type="reasoning">x</details>b<think>y') == "ab"


def test_summarize_cli(capsys: pytest.CaptureFixture[str], db_path: Path, no_model_config: Path) -> None:
    from app.cli import main

    s = Store(db_path, embedder=None)
    tid = write(s, "cli", chatter(random.Random(8), "backup", 12))
    s.close()
    assert main(["--db", str(db_path), "summarize", str(tid), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {
        "thread_id",
        "action",
        "messages_covered",
        "strategy",
        "method",
        "before_tokens",
        "after_tokens",
        "summary",
        "topics",
    } <= data.keys()
    assert (
        data["action"] == "created"
        and data["method"] == "tfidf"
        and data["summary"]["last_message_seq"] == 11
    )
    assert main(["--db", str(db_path), "summarize", "--all", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"results": [], "failed": []}
    assert main(["--db", str(db_path), "summarize"]) == 2
    assert main(["--db", str(db_path), "summarize", "999"]) == 2


def test_a_summary_written_meanwhile_by_another_process_wins(
    store: Store, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from store.extract import topics

    rng = random.Random(9)
    tid = write(store, "race", chatter(rng, "backup", 20))
    other = Store(db_path, embedder=FakeEmbedder())
    real_topics = topics.thread_topics

    def topics_then_race(s: Store, thread_id: int) -> list[topics.Topic]:
        if s is store:  # while this run computes, another process writes its summary
            summarize_thread(other, thread_id)
        return real_topics(s, thread_id)

    monkeypatch.setattr(topics, "thread_topics", topics_then_race)
    r = summarize_thread(store, tid)
    assert r.action == "unchanged" and r.summary is not None
    assert len(history_rows(store, tid)) == 1  # one run recorded, not two
    other.close()


def test_topics_in_english_and_chinese(store: Store) -> None:
    from store.extract.topics import thread_topics, update_topics

    en = [
        ("user", "I want restic backups to a Hetzner storage box. Restic snapshots should run nightly."),
        (
            "assistant",
            "Restic works well with a Hetzner storage box over SFTP; schedule the restic snapshot.",
        ),
        ("user", "How long should restic keep snapshots on the storage box?"),
        ("assistant", "Keep daily restic snapshots for a week on the Hetzner storage box, then prune."),
        ("user", "Python is fine for the wrapper script around restic."),
        ("assistant", "A Python wrapper can call restic and report failures from the storage box."),
    ]
    zh = [
        ("user", "我想第一次做红烧肉，家里有五花肉。"),
        ("assistant", "五花肉切块焯水，再炒糖色。"),
        ("user", "没有冰糖，五花肉还能做红烧肉吗？"),
        ("assistant", "可以用白砂糖，红烧肉的颜色会浅一点。"),
        ("user", "红烧肉炖多久？"),
        ("assistant", "五花肉小火炖一个小时左右。"),
    ]
    other = [
        ("user", "Python packaging with uv is fast."),
        ("assistant", "Python wheels install quickly with uv."),
    ] * 3
    tid_en = write(store, "en", [t for _, t in en])
    tid_zh = write(store, "zh", [t for _, t in zh])
    write(store, "other", [t for _, t in other])
    topics_en = dict(update_topics(store, tid_en))
    assert topics_en["restic"] >= 8  # "Restic" and "restic", counted together
    assert {"Hetzner storage box", "restic snapshots"} <= topics_en.keys()
    assert "storage" not in topics_en and "Hetzner" not in topics_en  # said inside "Hetzner storage box"
    assert [t for t, _ in store.get_topics(tid_en)][0] == "restic"
    # "Python" is said as often as "wrapper" here, but other threads say it too: it ranks lower.
    scored = [(t.topic, t.mention_count) for t in thread_topics(store, tid_en)]
    assert ("wrapper", 2) in scored and ("Python", 2) in scored
    assert scored.index(("wrapper", 2)) < scored.index(("Python", 2))
    topics_zh = dict(update_topics(store, tid_zh))
    assert topics_zh.get("红烧肉", 0) >= 3 and topics_zh.get("五花肉", 0) >= 3
    assert "五花" not in topics_zh and "烧肉" not in topics_zh  # fragments of longer terms
    rows = store.con.execute("SELECT count(*) FROM memory_topics WHERE thread_id = ?", (tid_zh,)).fetchone()
    assert rows[0] == len(topics_zh)  # type: ignore[index]
