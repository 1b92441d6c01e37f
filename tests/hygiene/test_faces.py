"""The store's faces (docs/design/store-surface.md): what each exports, kept in step, and the only way in.

- Each lazy face (store/lazy.py) lists its names three times: the `TYPE_CHECKING` imports (for mypy and
  readers), `_WHERE` (for the import on first use) and `__all__`. They must agree, and each name must
  really be importable, or `from store.x import name` fails only when a user reaches that code path.
- A face may not export a name that is also one of its submodules (importing the submodule would rebind it).
- app/ imports from store only the faces (an allow-list: a new store module is not reachable until it is
  named a face here and in the doc; pyproject's import-linter contract says the same as a deny-list).
- The surface snapshot (surface_snapshot.txt): the names each face exports and the Store's public members,
  so a change to the surface shows as a diff in review. `MEMAPP_UPDATE_SURFACE=1 pytest
  tests/hygiene/test_faces.py` rewrites it.
"""

from __future__ import annotations

import ast
import importlib
import os
import pkgutil
from pathlib import Path
from types import ModuleType

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = Path(__file__).parent / "surface_snapshot.txt"

# The package faces, each with a lazy __init__.
PACKAGE_FACES = (
    "store",
    "store.context",
    "store.crypto",
    "store.extract",
    "store.importing",
    "store.search",
    "store.secrets",
    "store.sync",
    "store.truth",
    "store.vectors",
)
# Top-level modules of functions taking a store (or small file helpers): each is its own face.
MODULE_FACES = (
    "store.checkpoints",
    "store.cleanup",
    "store.export",
    "store.files",
    "store.maintenance",
    "store.message_notes",
    "store.prompt_export",
    "store.restore",
    "store.scratch",
)
# Named exceptions: the admin commands open and migrate the file themselves (store.db, store.migrations);
# two modules are namespaces of many small calls (the key's state, the sync settings); the generated
# configuration reference (app.cli.reference) reads the config module's own definition: ranges, choices.
EXCEPTIONS = ("store.db", "store.migrations", "store.crypto.keys", "store.sync.state", "store.config")


def _type_checking_imports(module: ModuleType) -> dict[str, str]:
    """{exported name: "module" or "module:attr"} from the face's `if TYPE_CHECKING:` block."""
    assert module.__file__ is not None
    tree = ast.parse(Path(module.__file__).read_text())
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.module, ast.dump(imp)
                for alias in imp.names:
                    target = (
                        imp.module if alias.asname in (None, alias.name) else f"{imp.module}:{alias.name}"
                    )
                    found[alias.asname or alias.name] = target
    return found


def _eager_names(module: ModuleType) -> set[str]:
    """Names the face binds at import time (store.secrets imports its light detector eagerly)."""
    assert module.__file__ is not None
    tree = ast.parse(Path(module.__file__).read_text())
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("store."):
            names |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.FunctionDef):
            names.add(node.name)
    return names - {"exports"}


@pytest.mark.parametrize("face", PACKAGE_FACES)
def test_face_lists_agree_and_every_name_imports(face: str) -> None:
    module = importlib.import_module(face)
    where: dict[str, str] = module._WHERE
    assert _type_checking_imports(module) == where, "TYPE_CHECKING imports and _WHERE differ"
    assert set(module.__all__) == set(where) | _eager_names(module), "__all__ and _WHERE differ"
    assert len(module.__all__) == len(set(module.__all__))
    for name in module.__all__:
        assert getattr(module, name) is not None
    submodules = {m.name for m in pkgutil.iter_modules(module.__path__)}
    assert not submodules & set(module.__all__), "a face exports a name that is also its submodule"


def test_an_unknown_name_is_an_attribute_error() -> None:
    import store.truth

    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        _ = store.truth.nothing_here


def test_app_imports_store_only_through_its_faces() -> None:
    graph = grimp.build_graph("app", "store", "embeddings", cache_dir=None)
    allowed = set(PACKAGE_FACES) | set(MODULE_FACES) | set(EXCEPTIONS)
    wrong = sorted(
        f"{importer} -> {imported}"
        for importer in graph.find_descendants("app")
        for imported in graph.find_modules_directly_imported_by(importer)
        if imported.split(".")[0] == "store" and imported not in allowed
    )
    assert wrong == []


def _surface() -> str:
    from store import Store

    lines: list[str] = []
    for face in PACKAGE_FACES:
        lines.append(f"[{face}]")
        lines += sorted(importlib.import_module(face).__all__)
    lines.append("[Store public members]")
    lines += sorted(name for name in dir(Store) if not name.startswith("_"))
    return "\n".join(lines) + "\n"


def test_surface_matches_snapshot() -> None:
    now = _surface()
    if os.environ.get("MEMAPP_UPDATE_SURFACE"):
        SNAPSHOT.write_text(now)
    assert now == SNAPSHOT.read_text(), (
        "the store's surface changed: if meant, MEMAPP_UPDATE_SURFACE=1 and commit the snapshot"
    )
