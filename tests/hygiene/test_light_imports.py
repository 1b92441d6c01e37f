"""Opening chat.db and counting tokens stay cheap until the heavy parts are used (issue 7, benchmark 4):
`import store` and `store.db.connect` without numpy, the tokenizer's BPE file checked at once but parsed
on first use, and SQLite's log still routed to the `memapp.sqlite` logger.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import sqlite_vec

import embeddings.tokens as tokens
from embeddings import TokenCounter
from embeddings.data_files import data_file
from store import db


def _run(code: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def test_opening_chat_db_does_not_import_numpy(tmp_path: Path) -> None:
    seen = _run(
        "import json, sys\n"
        "import store, store.db, store.errors\n"
        f"con = store.db.connect({str(tmp_path / 'chat.db')!r})\n"
        "vec = con.execute('SELECT vec_version()').fetchall()[0][0]\n"
        "heavy = sorted(m for m in ('numpy', 'sqlite_vec', 'store.store', 'store.records') if m in sys.modules)\n"
        "from store import CATEGORIES, Store\n"
        "print(json.dumps({'heavy': heavy, 'vec': vec, 'store': Store.__module__, 'cats': list(CATEGORIES),\n"
        "                  'numpy_after': 'numpy' in sys.modules}))\n"
    )
    assert seen["heavy"] == []
    assert str(seen["vec"]).startswith("v")  # sqlite-vec loaded from its package, without importing it
    assert seen["store"] == "store.store" and seen["cats"] == ["preference", "project", "skill", "fact"]
    assert seen["numpy_after"] is True  # `from store import Store` still works, and brings the rest


def test_store_names_resolve_and_unknown_ones_fail() -> None:
    import store

    assert set(store.__all__) == set(store._WHERE) and set(store.__all__) <= set(dir(store))
    for name in store.__all__:
        assert getattr(store, name) is not None
    with pytest.raises(AttributeError):
        _ = store.NoSuchThing  # type: ignore[attr-defined]


def test_vec0_path_is_the_packages_own() -> None:
    assert db.vec0_path() == sqlite_vec.loadable_path()


def test_sqlite_log_goes_to_the_memapp_sqlite_logger(tmp_path: Path) -> None:
    # In a fresh process: SQLite's log can only be routed before SQLite is first initialised.
    seen = _run(
        "import json, logging\n"
        "import apsw\n"
        "from store import db\n"
        "got = []\n"
        "class Keep(logging.Handler):\n"
        "    def emit(self, record): got.append([record.levelname, record.getMessage()])\n"
        "logging.getLogger('memapp.sqlite').addHandler(Keep())\n"
        f"con = db.connect({str(tmp_path / 'chat.db')!r})\n"
        "try:\n"
        "    con.execute('SELECT * FROM no_such_table')\n"
        "except apsw.SQLError:\n"
        "    pass\n"
        "print(json.dumps({'got': got}))\n"
    )
    got = seen["got"]
    assert isinstance(got, list) and got
    level, message = got[0]
    assert level == "WARNING" and "no such table: no_such_table" in message and "SQLITE_ERROR" in message


def test_token_counter_checks_at_once_and_parses_on_first_use() -> None:
    seen = _run(
        "import json, sys\n"
        "from embeddings.tokens import TokenCounter\n"
        "c = TokenCounter()\n"
        "before = [c.exact, 'tiktoken' in sys.modules]\n"
        "n = c.count('hello world')\n"
        "print(json.dumps({'before': before, 'count': n, 'after': 'tiktoken' in sys.modules}))\n"
    )
    assert seen == {"before": [True, False], "count": 2, "after": True}


def test_a_tokenizer_that_fails_to_build_falls_back_to_estimates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bpe = data_file("cl100k_base.tiktoken")
    assert bpe is not None
    copy = tmp_path / "cl100k_base.tiktoken"  # another path: not the encoder this process already built
    shutil.copy(bpe, copy)

    def broken(spec: tokens.EncodingSpec, path: Path) -> object:
        raise ImportError("tiktoken is broken")

    monkeypatch.setattr(tokens, "_read_encoding", broken)
    c = TokenCounter(bpe_file=copy)
    assert c.exact  # the file is right; the encoder is built on first use
    assert c.count("abcdefgh") == 2  # the estimate: one token per four characters
    assert not c.exact and "broken" in (c.problem or "") and "estimated" in c.status
