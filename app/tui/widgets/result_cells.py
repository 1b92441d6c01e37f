"""How one search result is drawn in the Search screen's table and preview: its kind, why it matched, the
snippet (struck through when superseded, dimmed when weak) and the query's words highlighted.

Apart from the screen (app/tui/screens/search.py), which decides when to search and what the keys do:
these are pure functions of a result, and the screen stays under the size a reader takes in at once.
"""

from __future__ import annotations

import re

from rich.text import Text

from app.text import cell
from store.search import SearchResult

MATCH_LABELS = {
    ("keyword",): "keyword",
    ("semantic",): "meaning",
    ("keyword", "semantic"): "both",
    ("semantic", "keyword"): "both",
}


def result_kind(r: SearchResult) -> str:
    """'memory', 'summary', or for a message who said it ('user', 'assistant', …)."""
    return (r.role or "message") if r.kind == "message" else r.kind


def match_cell(r: SearchResult) -> Text:
    """Why it matched; a weak result (below the answer floor) says "weak" instead, dimmed."""
    if r.weak:
        return Text("weak", style="dim italic")
    return cell(MATCH_LABELS.get(r.matched, "+".join(r.matched)), 7)


def snippet_cell(r: SearchResult, width: int) -> Text:
    """A memory a newer one superseded is struck through (it also ranks lower); weak results are dim."""
    text = cell(r.content, width)
    if r.kind == "memory" and r.superseded_by is not None:
        text.stylize("dim strike")
    elif r.weak:
        text.stylize("dim")
    return text


def query_words(query: str) -> list[str]:
    """The words of a query worth highlighting: quotes, operators and one-letter words left out."""
    words = re.findall(r"\w[\w'.+#-]*", query)
    return [w for w in words if len(w) > 1 and w not in ("AND", "OR", "NOT", "NEAR")]


def highlighted(text: Text, query: str) -> Text:
    """`text` with the query's words in reverse video (case-insensitive; also inside longer words, as
    the prefix search matches them)."""
    words = query_words(query)
    if words:
        text.highlight_words(words, style="reverse", case_sensitive=False)
    return text
