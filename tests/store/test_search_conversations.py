"""Issue 30: search in long conversations between people, and a keyword half that never empties.

Against the real apsw + sqlite-vec database in a temp file, with the fake embedder (the model is not the
point of these rules: what is, is how the ranking reads a conversation's structure).
"""

from __future__ import annotations

from store import MessageIn, Store, ThreadIn


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
