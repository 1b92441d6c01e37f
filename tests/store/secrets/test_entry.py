"""Secrets never stored in the clear (issue 33.2): every way text enters chat.db passes the one gate
(Store.redact / Store.redact_thread), so the value is in no row, no history, no keyword index and no
vector; with `[privacy] redact = "off"` it is stored, but no export and no path to an assistant emits it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from embeddings import FakeEmbedder
from store import Store
from store.config import Config, PrivacyConfig, load_config
from store.context.builder import build_context
from store.context.profile import build_profile
from store.errors import StoreError
from store.export import export_json, markdown_files, restore_json
from store.extract.suggestions import accept_suggestion, extract_suggestions, list_suggestions
from store.importing.pipeline import import_paths
from store.prompt_export import prompt_block
from store.records import MessageIn, ThreadIn

AWS = "AKIAIH2JOFT6M4SFIHQP"
GH = "ghp_4f9KzQ2mN7xR1tV8bW3yC6pL0sD5hJ2gE9aB"
ANT = "sk-ant-api03-" + "Qz7xK2mP9vR4tW8yB3nC6hL1sD5fG0jA" * 3 + "AbCdEAA"
PW = "Tr0ub4dor&3xQ"
SECRETS = (AWS, GH, ANT, PW)
FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "import" / "claude-code"


class Recorder(FakeEmbedder):
    """The fake embedder, keeping every text it was asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.seen += list(texts)
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        self.seen.append(text)
        return super().embed_query(text)


def _store(path: Path, mode: str = "store") -> Store:
    return Store(path, embedder=Recorder(), config=Config(privacy=PrivacyConfig(redact=mode)))


@pytest.fixture
def gated(tmp_path: Path) -> Iterator[Store]:
    s = _store(tmp_path / "chat.db")
    yield s
    s.close()


def dump(store: Store) -> str:
    """Every byte of every table (canonical rows, keyword-index vocabularies, settings) as text."""
    parts = []
    for (name,) in store.con.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
        if name.startswith(("vec_", "sqlite_")) or name.endswith(
            ("_data", "_idx", "_content", "_docsize", "_config")
        ):
            continue
        parts += [repr(r) for r in store.con.execute(f"SELECT * FROM {name}")]
    for fts in ("fts_messages", "fts_memories", "fts_summaries"):
        parts += (
            [str(r[0]) for r in store.con.execute(f"SELECT term FROM {fts}_vocab")]
            if _vocab(store, fts)
            else []
        )
    return "\n".join(parts)


def _vocab(store: Store, fts: str) -> bool:
    store.con.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{fts}_vocab USING fts5vocab(main, {fts}, row)"
    )
    return True


def assert_clean(store: Store) -> None:
    text = dump(store).lower()
    for value in SECRETS:
        assert value.lower() not in text
        assert value[:12].lower() not in text  # nor a piece of it (the keyword index splits tokens)
    seen = "\n".join(store.embedder.seen)  # type: ignore[union-attr]
    for value in SECRETS:
        assert value not in seen, "a vector was made from a secret"


def _thread_with_secrets() -> ThreadIn:
    return ThreadIn(
        source="jsonl",
        external_id="t1",
        title=f"deploy with {AWS}",
        messages=[
            MessageIn("user", f"export GITHUB_TOKEN={GH}\nand the db password: {PW}", "m1"),
            MessageIn(
                "assistant",
                "Done. I called the API.",
                "m2",
                metadata={
                    "tool_calls": [{"name": "Bash", "input": f"curl -H 'x-api-key: {ANT}' https://api"}]
                },
            ),
        ],
    )


def test_an_import_stores_markers_in_rows_index_and_vectors(gated: Store, tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    t = _thread_with_secrets()
    path.write_text(
        json.dumps(
            [
                {
                    "id": t.external_id,
                    "title": t.title,
                    "messages": [
                        {"id": m.external_id, "role": m.role, "content": m.content, "metadata": m.metadata}
                        for m in t.messages
                    ],
                }
            ]
        )
    )
    report = import_paths(gated, [path], "generic")
    assert report.ok and report.messages_added == 2
    [thread] = gated.list_threads()
    assert thread.title == "deploy with [secret: aws-access-key]"
    first = gated.get_messages(thread.id)[0].content
    assert first == "export GITHUB_TOKEN=[secret: github-token]\nand the db password: [secret: password]"
    assert gated.stats()["embedded_chunks"] >= 2  # vectors were written, from the redacted text
    assert_clean(gated)
    assert gated.check_indexes() == []
    # and a keyword search for the secret finds nothing (a search for the marker's kind does)
    assert gated.search(GH[:20]).results == []
    assert gated.search("github token").results


def test_write_thread_redacts_even_without_the_import_pipeline(gated: Store) -> None:
    gated.write_thread(_thread_with_secrets())
    metadata = gated.get_messages(1)[1].metadata
    assert metadata["tool_calls"][0]["input"] == "curl -H 'x-api-key: [secret: anthropic-key]' https://api"
    assert_clean(gated)


def test_a_captured_transcript_is_redacted(gated: Store, tmp_path: Path) -> None:
    folder = tmp_path / "projects"
    shutil.copytree(FIXTURE, folder)
    [session] = folder.rglob("5f0c7a52*.jsonl")
    text = session.read_text()
    needle = "I prefer small fixes over rewrites."
    assert needle in text
    session.write_text(text.replace(needle, f"{needle} The token is {GH} and the password is {PW}"))
    assert import_paths(gated, [folder]).ok
    contents = [m.content for t in gated.list_threads() for m in gated.get_messages(t.id)]
    assert any("[secret: github-token]" in c for c in contents)
    assert_clean(gated)


def test_memory_add_edit_and_history(gated: Store) -> None:
    added = gated.add_memory(f"My GitHub token is {GH}", "fact").memory
    assert added.content == "My GitHub token is [secret: github-token]"
    edited = gated.edit_memory(added.id, content=f"My Anthropic key is {ANT}")
    assert edited.content == "My Anthropic key is [secret: anthropic-key]"
    assert [h.event for h in gated.memory_history(added.id)] == ["add", "edit"]
    gated.rename_thread(gated.write_thread(_thread_with_secrets()).thread_id, f"keys {AWS}")
    assert_clean(gated)


def test_suggestions_never_propose_a_secret_and_accepting_one_redacts(gated: Store) -> None:
    tid = gated.write_thread(
        ThreadIn(
            "jsonl",
            "s1",
            "notes",
            [
                MessageIn("user", "I prefer dark mode in every editor.", "a"),
                MessageIn("user", "My Netflix password is sunflower.", "b"),
                MessageIn("user", "My bank PIN is 4821.", "c"),
                MessageIn("user", "I always pay with my card 4539 1488 0343 6467.", "d"),
            ],
        )
    ).thread_id
    extract_suggestions(gated, tid)
    proposed = [s.content for s in list_suggestions(gated, thread_id=tid)]
    assert any("dark mode" in p for p in proposed)
    assert not any(w in p for p in proposed for w in ("sunflower", "4821", "4539", "[secret:"))
    [dark] = [s for s in list_suggestions(gated, thread_id=tid) if "dark mode" in s.content]
    accepted = accept_suggestion(gated, dark.id, content=f"I prefer dark mode; token {GH}")
    assert accepted.memory.content == "I prefer dark mode; token [secret: github-token]"
    assert_clean(gated)


def test_a_restored_export_passes_the_gate_and_its_secret_vectors_stay_out(
    gated: Store, tmp_path: Path
) -> None:
    with Store(tmp_path / "src.db", embedder=FakeEmbedder()) as src:
        src.write_thread(ThreadIn("jsonl", "x", "plain", [MessageIn("user", "nothing secret here", "1")]))
        src.add_memory("I like tea", "preference")
        data = export_json(src, include_embeddings=True)
    # an export from an older memapp, written before exports were redacted
    data["tables"]["messages"][0]["content"] = f"the key is {GH}"
    data["tables"]["long_term_memories"][0]["content"] = f"I like tea {ANT}"
    restore_json(gated, data)
    assert gated.get_messages(1)[0].content == "the key is [secret: github-token]"
    memory = gated.list_memories()[0]
    assert memory.content == "I like tea [secret: anthropic-key]"
    # the exported vectors were made from the secret: not restored (`memapp embed` redoes them)
    assert gated.stats()["embedded_chunks"] == 0 and gated.stats()["embedded_memories"] == 0
    assert_clean(gated)


def test_with_redaction_off_text_is_stored_but_nothing_leaves_with_a_secret(tmp_path: Path) -> None:
    s = _store(tmp_path / "off.db", mode="off")
    try:
        tid = s.write_thread(_thread_with_secrets()).thread_id
        m = s.add_memory(f"My GitHub token is {GH}", "fact", pinned=True).memory
        assert GH in s.get_memory(m.id).content  # stored as typed: the user chose "off"
        outputs = [
            json.dumps(export_json(s)),
            "\n".join(text for _, text in markdown_files(s)),
            prompt_block(s).text,
            json.dumps(build_profile(s, 2000).to_json()),
            json.dumps(build_context(s, tid, 4000).to_json()),
        ]
        for out in outputs:
            for value in SECRETS:
                assert value not in out
        assert "[secret: github-token]" in outputs[2] and "[secret: github-token]" in outputs[3]
    finally:
        s.close()


def test_the_privacy_setting_is_checked(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('[privacy]\nredact = "off"\n')
    assert load_config(cfg).privacy.redact == "off"
    assert load_config(tmp_path / "none.toml").privacy.redact == "store"
    cfg.write_text('[privacy]\nredact = "sometimes"\n')
    with pytest.raises(StoreError, match="privacy.redact must be one of 'store', 'off'"):
        load_config(cfg)
