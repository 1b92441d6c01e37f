"""The MCP server on an encrypted chat.db (issue 33): it has no terminal, so its passphrase comes from
MEMAPP_PASSPHRASE_COMMAND (or the keyring); without one, a tool call is refused with one line that holds no
secret, and nothing is opened."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from app.mcp.server import build_server
from embeddings import FakeEmbedder
from store import Store
from store.crypto import convert, keys
from tests.app.mcp.mcp_helpers import text_of

PASS = "bright canyon under snow"


@pytest.fixture
def enc_db(tmp_path: Path) -> Path:
    path = tmp_path / "chat.db"
    convert.create_encrypted(path, PASS)
    with Store(path, embedder=FakeEmbedder()) as s:
        s.add_memory("I deploy with ansible on Fridays", "fact")
    keys.forget_process_keys()
    return path


async def test_the_server_opens_it_with_the_passphrase_command(
    enc_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "pw.sh"
    script.write_text(f"#!/bin/sh\necho '{PASS}'\n")
    script.chmod(0o700)
    monkeypatch.setenv(keys.PASSPHRASE_COMMAND, str(script))
    opened: list[Store] = []

    def open_store() -> Store:
        opened.append(Store(enc_db, embedder=FakeEmbedder()))
        return opened[-1]

    async with Client(build_server(open_store)) as client:
        result = await client.call_tool("search_memory", {"query": "ansible deploy"})
    assert "ansible" in str(result.structured_content)
    for s in opened:
        s.close()


async def test_without_a_passphrase_a_tool_call_is_refused_in_one_line(enc_db: Path) -> None:
    async with Client(build_server(lambda: Store(enc_db, embedder=FakeEmbedder()))) as client:
        result = await client.call_tool("search_memory", {"query": "ansible"})
    text = text_of(result)
    assert result.is_error
    assert "encrypted and no passphrase was found" in text and PASS not in text
    assert "\n" not in text.strip()
