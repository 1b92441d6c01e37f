"""The demo (data/demo.json) and its vectors, shipped beside it (data/demo.vectors.json), so "load demo"
needs no model.

`load_demo` wraps the store's embedder in an embeddings.precomputed.PrecomputedEmbedder over the vectors
file while it imports, summarises and finds suggestions; the file is used only when it was made by the
configured model (same name and dimension). Regenerate it after changing data/demo.json or the way
summaries/suggestions pick sentences (tests/store/test_demo_vectors.py says when it is stale):

    .venv/bin/python -m store.importing.demo_vectors

Why a module of its own: the pipeline imports any export; the demo is one use of it, and the tool that
writes the vectors file (store.importing.demo_vectors) loads the demo, so with load_demo in the pipeline
the two modules imported each other.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from embeddings import precision_switching
from embeddings.data_files import data_file
from embeddings.precomputed import PrecomputedEmbedder, read_table, table_model
from store.errors import StoreError
from store.importing.pipeline import import_paths
from store.importing.run import ImportReport, ProgressFn
from store.store import Store

DEMO_FILE = "demo.json"
DEMO_VECTORS = "demo.vectors.json"


def load_demo(
    store: Store,
    *,
    embed: bool = True,
    progress: ProgressFn | None = None,
    use_shipped_vectors: bool = True,
) -> ImportReport:
    """Import the bundled demo threads and memories (the TUI's "load demo"); a second call adds nothing.

    The demo's vectors ship beside it (data/demo.vectors.json): with the configured model being the
    one that made them, no model is loaded at all."""
    path = data_file(DEMO_FILE)
    if path is None:
        raise StoreError(
            f"the bundled demo data ({DEMO_FILE}) is not installed; set MEMAPP_DATA_DIR to its folder"
        )
    with demo_vectors(store) if use_shipped_vectors and embed else contextlib.nullcontext():
        report = import_paths(store, [path], "generic", embed=embed, progress=progress, summarize=False)
        # Demo threads are short (below the summary trigger): summarise them and find their memory
        # suggestions now, so the demo shows every part of the thread view.
        from store.extract.suggestions import extract_suggestions
        from store.extract.summaries import summarize_thread

        for thread_id in dict.fromkeys(report.grown_threads):
            summarize_thread(store, thread_id, use_model=embed)
            extract_suggestions(store, thread_id)
            report.summaries_updated += 1
    return report


@contextlib.contextmanager
def demo_vectors(store: Store) -> Iterator[PrecomputedEmbedder | None]:
    """While inside, the store's embedder answers the demo's texts from the shipped vectors (None when
    there is no usable file or no usable model)."""
    inner = store.embedder
    path = data_file(DEMO_VECTORS)
    table = None
    if inner is not None and path is not None and store.vector_problem is None:
        table = read_table(path, inner.name, inner.dimension)
        switching = precision_switching(inner)
        made_by = table_model(path) if table is None else None
        # The same model at the other precision (float32 / int8): a database with no vectors yet takes the
        # demo's, so loading the demo still needs no model (store.core says when an embedder switches).
        if (
            made_by
            and store.vectors.recorded_model() is None
            and switching is not None
            and switching.use_model_of(made_by)
        ):
            table = read_table(path, inner.name, inner.dimension)
    if inner is None or table is None:
        yield None
        return
    wrapper = PrecomputedEmbedder(inner, table)
    store.embedder = wrapper
    try:
        yield wrapper
    finally:
        if store.embedder is wrapper:
            store.embedder = inner
