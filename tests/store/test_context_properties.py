"""Property test: for random threads, memories, prompts and budgets, the context builder never goes over
budget, its stats add up, pinned memories are there whenever they fit, the last message is always there,
and the condensing rules hold."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from embeddings import FakeEmbedder
from store import InvalidInputError, Store, ThreadIn
from store.config import Config
from store.context.builder import TRUNCATED, build_context
from store.context.tier1 import memory_line, memory_text
from store.extract.sentences import strip_reasoning
from store.records import MessageIn

WORDS = [
    "backup",
    "restic",
    "schedule",
    "parser",
    "lifetime",
    "token",
    "budget",
    "红烧肉",
    "京都",
    "🙂",
    "[red]",
    "c++",
    "don't",
    "the",
    "a",
    "is",
]

message = st.tuples(
    st.sampled_from(["user", "assistant", "tool", "system"]),
    st.lists(st.sampled_from(WORDS), min_size=0, max_size=300).map(" ".join),
    st.booleans(),  # wrap part of it in a reasoning block
)


@st.composite
def scenario(draw: st.DrawFn) -> dict[str, object]:
    msgs = draw(st.lists(message, min_size=0, max_size=40))
    return {
        "messages": [
            (role, f"<think>{text[:80]}</think>{text}" if think and text else text)
            for role, text, think in msgs
        ],
        "pinned": draw(
            st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=30).map(" ".join), max_size=5)
        ),
        "other": draw(
            st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(" ".join), max_size=5)
        ),
        "system": draw(st.one_of(st.none(), st.lists(st.sampled_from(WORDS), max_size=60).map(" ".join))),
        "budget": draw(st.integers(min_value=1, max_value=6000)),
        "reserve": draw(st.one_of(st.none(), st.integers(min_value=0, max_value=500))),
        "margin": draw(st.sampled_from([0.0, 0.05, 0.1, 0.3])),
        "query": draw(st.one_of(st.none(), st.sampled_from(WORDS))),
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sc=scenario())
def test_context_properties(sc: dict) -> None:  # type: ignore[type-arg]
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Config()
        cfg.context.safety_margin = sc["margin"]
        store = Store(Path(tmp) / "chat.db", config=cfg, embedder=FakeEmbedder())
        try:
            check(store, sc)
        finally:
            store.close()


def check(store: Store, sc: dict) -> None:  # type: ignore[type-arg]
    msgs = [MessageIn(role, text, f"m{i}") for i, (role, text) in enumerate(sc["messages"])]
    tid = store.write_thread(ThreadIn("test", "t", "t", msgs)).thread_id
    pinned = {}
    for text in sc["pinned"]:
        m = store.add_memory(text, "fact", pinned=True, force=True).memory
        pinned[m.id] = m
    for text in sc["other"]:
        store.add_memory(text, "preference", force=True)
    try:
        r = build_context(
            store, tid, sc["budget"], query=sc["query"], system=sc["system"], output_reserve=sc["reserve"]
        )
    except InvalidInputError as exc:
        assert "too small" in str(exc)
        minimum = int(str(exc).rsplit(" ", 1)[1])
        assert minimum > sc["budget"]
        r = build_context(
            store, tid, minimum, query=sc["query"], system=sc["system"], output_reserve=sc["reserve"]
        )
    stats = r.token_stats
    exact = store.tokens.count_messages(r.messages)
    # Never over budget; the tiers add up.
    assert exact <= r.available <= stats.budget
    assert (
        stats.system + stats.memories + stats.summary + stats.condensed + stats.recent == stats.total == exact
    )
    stored = store.get_messages(tid, limit=1000)
    by_seq = {m.seq: m for m in stored}
    n_included = len(r.condensed_seqs) + len(r.recent_seqs)
    tail = r.messages[len(r.messages) - n_included :]
    # The last message is always there (cut to fit when it alone is too long).
    if stored:
        assert r.recent_seqs and r.recent_seqs[-1] == stored[-1].seq
        assert tail[-1]["role"] == stored[-1].role
        assert tail[-1]["content"] == stored[-1].content or tail[-1]["content"].endswith(TRUNCATED)
    # Included messages are a contiguous run ending at the last one.
    seqs = r.condensed_seqs + r.recent_seqs
    assert seqs == list(range(len(stored) - len(seqs), len(stored)))
    # Condensed: no reasoning blocks, tool output cut; recent: verbatim unless cut to fit.
    for seq, msg in zip(seqs, tail, strict=True):
        original = by_seq[seq].content
        if seq in r.recent_seqs:
            assert msg["content"] == original or seq in r.truncated_seqs
        else:
            assert "<think>" not in msg["content"]
            clean = strip_reasoning(original).strip() if "<think>" in original else original
            if by_seq[seq].role == "tool" and len(clean) > 200:
                clean = clean[:200] + TRUNCATED
            if seq in r.truncated_seqs:  # cut again to fit: a prefix of the condensed text
                assert clean.startswith(msg["content"].removesuffix("\n" + TRUNCATED))
            else:
                assert msg["content"] == clean
    assert len(r.recent_seqs) <= store.config.context.recent_messages
    # Pinned memories are all there whenever they fit next to the system prompt and the last message.
    if pinned:
        lines = [memory_line(m.category, m.content, True) for m in pinned.values()]
        need = store.tokens.count_messages([{"role": "system", "content": memory_text(lines)}]) - 2
        last_cost = store.tokens.count_messages([tail[-1]]) - 2 if stored else 0
        if stats.system + need + last_cost <= r.available:
            assert r.metadata.pinned_memories == len(pinned)
            assert set(r.memory_ids) >= set(pinned)
    assert r.metadata.pinned_memories + r.metadata.retrieved_memories == len(r.memory_ids)
    assert r.metadata.included_messages + r.metadata.summarized_messages == len(stored)
