"""Package faces whose names are imported on first use (PEP 562 module `__getattr__`).

Why: a face such as `store.importing` or `store.truth` names what the app may use from the package, but
importing its modules pulls in numpy, the vector code and the embedder (a few hundred milliseconds). The
TUI paints its first frame and the CLI prints `--help` with only the light parts loaded, so a face hands
each name out when it is first asked for, and `from store.importing import import_paths` costs what
importing that one module costs.

Each face keeps three lists in step: its `TYPE_CHECKING` imports (for mypy and readers), `_WHERE` (name
-> module, for this module) and `__all__`; tests/hygiene/test_faces.py checks that they agree. Modules
inside a package import their siblings directly, never through the face (a face that imported its own
package's modules at import time would start import circles).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def exports(
    package: str, where: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of face `package`: `where` maps each exported name to the module
    that defines it, or to "module:attr" when the face names it otherwise (a face may not export a name
    that is also one of its submodules: importing that submodule rebinds the name to the module, so what
    `from face import name` gives would depend on import order); a name is imported once, then kept in `namespace` (the face's globals) so later
    lookups are plain module attributes."""

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attr = module.partition(":")
        value = getattr(importlib.import_module(module), attr or name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(where))

    return __getattr__, __dir__
