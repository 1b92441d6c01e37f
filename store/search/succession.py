"""A superseded memory never ranks above the memory that superseded it (issue 27).

The fused score of a superseded memory is halved (store.search.engine, SUPERSEDED_WEIGHT), but a strong
keyword match can still lift it to a tie or above its successor. This last step of a search is the
guarantee, whatever the ranking did: when both are in the results, the superseded one is moved to just
below its successor (down a chain of successors too) and its score capped at the successor's. With
`--as-of` the successor of a memory valid then is not in the results, so nothing moves.
"""

from __future__ import annotations

from dataclasses import replace

from store.search.results import SearchResult


def after_successors(results: list[SearchResult]) -> list[SearchResult]:
    """`results` with each superseded memory placed right after its successor when that is listed."""
    out = list(results)
    for _ in range(len(out)):  # each pass moves one memory down; a chain needs at most len() passes
        where = {r.id: i for i, r in enumerate(out) if r.kind == "memory"}
        moved = False
        for i, r in enumerate(out):
            j = where.get(r.superseded_by) if r.kind == "memory" and r.superseded_by is not None else None
            if j is not None and j > i:
                successor = out[j]
                out.pop(i)
                out.insert(j, replace(r, score=min(r.score, successor.score)))
                moved = True
                break
        if not moved:
            break
    return out
