"""No module import circles in app/, store/ or embeddings/ (issue 32: three had grown unnoticed).

A circle means two modules can only be understood, tested and changed together, and an import order that
happens to work today. Imports under TYPE_CHECKING count too (they are how the TUI circle hid): break a
circle with a Protocol or by moving the shared part down, not by hiding the import. One exception: a lazy
package face's own TYPE_CHECKING block (store/lazy.py) is the list of names it hands out, not something
it runs, so `store.core -> store.secrets` (a face) does not close a circle through the face's list.
"""

from __future__ import annotations

from pathlib import Path

import grimp

PACKAGES = ("app", "store", "embeddings")


def graph_without_face_lists() -> grimp.ImportGraph:
    """The import graph, less the type-only imports made by a lazy face's `__init__`."""
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    running = grimp.build_graph(*PACKAGES, cache_dir=None, exclude_type_checking_imports=True)
    for face in graph.modules:
        if face.split(".")[0] != "store" or not graph.find_children(face):
            continue
        text = (Path(__file__).resolve().parents[2] / face.replace(".", "/") / "__init__.py").read_text()
        if "exports(__name__" not in text:
            continue
        for imported in graph.find_modules_directly_imported_by(
            face
        ) - running.find_modules_directly_imported_by(face):
            graph.remove_import(importer=face, imported=imported)
    return graph


def circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next((c for c in children if c.split(".")[0] in PACKAGES), None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_finds_a_circle() -> None:
    graph = grimp.ImportGraph()
    for a, b in (("app.a", "app.b"), ("app.b", "app.c"), ("app.c", "app.a"), ("app.c", "app.d")):
        graph.add_import(importer=a, imported=b)
    assert circles(graph) == [["app.a", "app.b", "app.c"]]


def test_no_import_circles() -> None:
    assert circles(graph_without_face_lists()) == []


def test_migrations_carry_their_own_code() -> None:
    """A migration never calls live feature code (its meaning would change with that code): the
    migrations module imports only the errors and the frozen migration modules, which import no store
    code at all."""
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    frozen = {"store.m006", "store.m007", "store.sync.m009"}
    assert graph.find_modules_directly_imported_by("store.migrations") == {"store.errors", *frozen}
    for module in frozen:
        assert graph.find_modules_directly_imported_by(module) == set(), module
