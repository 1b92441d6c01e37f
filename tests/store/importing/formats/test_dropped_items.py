"""Nothing an export holds is dropped without a report (issue 20, D7): a repeated ChatGPT conversation id
with other content, repeated message ids in one generic thread, an llm logs.db whose prompt column was
renamed, llm threads with no id."""

from __future__ import annotations

import json
from pathlib import Path

from store import Store
from store.importing.pipeline import import_paths
from tests.store.importing.formats.import_helpers import FIXTURES, build_llm_db, read


def test_a_repeated_chatgpt_id_with_other_content_is_reported(tmp_path: Path) -> None:
    convs = json.loads((FIXTURES / "chatgpt" / "conversations.json").read_text(encoding="utf-8"))
    first = convs[0]
    other = json.loads(json.dumps(first))
    other["title"] = "Something else entirely"
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([first, first, other]))  # an exact repeat is fine; other content is not
    r = read(path, "chatgpt")
    assert [t.external_id for t in r.threads] == [first.get("id") or first.get("conversation_id")]
    [problem] = r.problems
    assert "another conversation with this id" in problem.error


def test_repeated_message_ids_in_a_generic_thread_are_kept_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    msgs = [
        {"id": "m1", "role": "user", "content": "first"},
        {"id": "m1", "role": "assistant", "content": "second"},
        {"id": "m1", "role": "user", "content": "third"},
    ]
    path.write_text(json.dumps({"id": "t", "messages": msgs}) + "\n")
    r = read(path, "generic")
    assert [(m.external_id, m.content) for m in r.threads[0].messages] == [
        ("m1", "first"),
        ("m1#2", "second"),
        ("m1#3", "third"),
    ]
    [problem] = r.problems
    assert problem.note and "used twice" in problem.error and "'m1' -> 'm1#2'" in problem.error
    with Store(tmp_path / "chat.db", embedder=None) as s:
        assert import_paths(s, [path], embed=False).messages_added == 3
        again = import_paths(s, [path], embed=False)
        assert again.messages_added == 0  # the numbering is stable: a re-import writes nothing


def test_an_llm_db_without_a_prompt_column_says_so(tmp_path: Path) -> None:
    db = build_llm_db(tmp_path / "logs.db")
    import apsw

    con = apsw.Connection(str(db))
    con.execute("ALTER TABLE responses RENAME COLUMN prompt TO prompt_text")
    con.close()
    r = read(db, "llm")
    assert any("no 'prompt' column" in p.error for p in r.problems)


def test_llm_threads_without_an_id_are_reported_not_merged(tmp_path: Path) -> None:
    db = build_llm_db(tmp_path / "logs.db")
    import apsw

    con = apsw.Connection(str(db))
    con.execute("UPDATE threads SET id = NULL WHERE id IN ('01fork', '01newonly')")
    con.close()
    r = read(db, "llm")
    assert "None" not in {t.external_id for t in r.threads}
    assert sum("has no id" in p.error for p in r.problems) == 2
