"""A ChatGPT export's `export_manifest.json`: the conversations files it lists that the export lacks.

Newer exports split `conversations.json` into `conversations-000.json`, ... plus this manifest. Its exact
shape is not documented, so only file names are looked for in it, anywhere. A manifest that cannot be
read (not JSON, too big for the memory at hand, nested deeper than Python recurses) is reported, and the
conversations present are imported: it only lists names, nothing of the export is lost without it.
"""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Iterator
from typing import Any

from store.importing.formats._common import Bundle, ImportFormatError, ImportProblem, describe
from store.importing.formats.limits import too_big

CONVERSATION_FILE = re.compile(r"conversations(-\d+)?\.json")
MANIFEST = "export_manifest.json"


def check_manifest(bundle: Bundle, names: list[str]) -> Iterator[ImportProblem]:
    manifests = bundle.matching(re.compile(re.escape(MANIFEST)))
    if not manifests or bundle.kind == "file":
        return
    label = bundle.label(manifests[0])
    try:
        with bundle.open(manifests[0]) as fp:
            raw = fp.read(16 * 1024**2).decode("utf-8-sig")
        why = too_big(raw)
        if why is not None:
            raise ValueError(why)
        manifest = json.loads(raw)
    except (ValueError, OSError, zipfile.BadZipFile, RecursionError, ImportFormatError) as exc:
        # RecursionError: nested deeper than Python recurses; the manifest only lists file names, so
        # nothing of the export is lost without it: say so and read the conversations present
        reason = "nested too deeply" if isinstance(exc, RecursionError) else describe(exc)
        yield ImportProblem(
            label, None, f"unreadable export manifest ({reason}); importing the files present"
        )
        return
    present = {n.rsplit("/", 1)[-1] for n in names}
    for listed in sorted(_file_names(manifest)):
        if listed not in present:
            yield ImportProblem(
                label, None, f"the export manifest lists {listed} but it is not in the export"
            )


def _file_names(value: Any) -> set[str]:
    """Every conversations file name mentioned anywhere in the manifest (walked without recursion: a
    manifest can be nested as deep as the JSON parser allows)."""
    found: set[str] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            base = v.replace("\\", "/").rsplit("/", 1)[-1]
            if CONVERSATION_FILE.fullmatch(base):
                found.add(base)
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return found
