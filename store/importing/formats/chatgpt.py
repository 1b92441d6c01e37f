"""ChatGPT "Export data" archives: the zip, its extracted folder, or `conversations*.json`.

A conversation is a tree (`mapping`) of nodes: every regeneration and edit is a sibling branch. What the
person saw is one path, from `current_node` back through `parent` to the root; walking all children or
sorting nodes by time mixes branches together, so we never do that. Most nodes on that path are still
not conversation: hidden system scaffolding, tool plumbing (memory writes, web search) and reasoning
traces. Those are skipped so search and summaries see what was said. Code sent to the code interpreter
is kept, as a fenced block, so its output (the tool message after it) is not an answer without a question.

The `bio` tool's writes (ChatGPT's "saved memories") become MemoryIn records, from every branch: the
write happened whichever answer the person kept.

Newer exports split `conversations.json` into `conversations-000.json`, ... plus `export_manifest.json`;
any file the manifest names that is missing is reported. The manifest's exact shape is not documented,
so we only look for file names in it.
"""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from store.importing.formats._common import (
    BadRecord,
    Bundle,
    ImportFormatError,
    ImportProblem,
    Item,
    JsonError,
    JsonStream,
    Skipped,
    as_dict,
    as_list,
    bad_utf8_problems,
    clean_text,
    describe,
    dict_or_empty,
    guess_category,
    ident,
    json_items,
    parse_ts,
    skipped_problem,
    stream_error,
    title_or_fallback,
)
from store.importing.formats.chatgpt_manifest import CONVERSATION_FILE, check_manifest
from store.records import MemoryIn, MessageIn, ThreadIn

SOURCE = "chatgpt"

# Tool outputs that are plumbing, not conversation (memory writes, search result dumps).
_HIDDEN_TOOLS = {"bio", "web.run", "web.search", "web"}
_HIDDEN_TYPES = {
    "sonic_webpage",
    "system_error",
    "tether_browsing_display",
    "computer_output",
    "super_widget",
    "model_editable_context",
    "user_editable_context",
    "code",
}
_REASONING_TYPES = {"thoughts", "reasoning_recap"}
# Code the assistant sent to the code interpreter: kept (as a fenced block) with the output that follows.
_CODE_TOOLS = {"python", "python_user_visible"}
_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "tool": "tool", "function": "tool"}

# Citation markers: \ue200cite\ue202turn0search3\ue201 (and filecite, image_group, ...), then any stray
# private-use characters, then the older 【12†L1-L5】 form. Stripped before FTS and embedding.
_PUA_SPAN = re.compile("[ \t]*\ue200[^\ue200\ue201]*\ue201")
_PUA = re.compile("[\ue000-\uf8ff]")
_LENTICULAR = re.compile("【[^【】\n]{0,120}†[^【】\n]{0,120}】")
_MARKER_CHAR = re.compile("[\ue000-\uf8ff【]")
_BIO_STATUS = re.compile(
    r"^\s*(model set context|memory (updated|saved)|updated saved memory)", re.IGNORECASE
)


def strip_citations(text: str) -> str:
    if text.isascii() or not _MARKER_CHAR.search(text):  # the common case, 10x faster than substituting
        return text
    return _LENTICULAR.sub("", _PUA.sub("", _PUA_SPAN.sub("", text)))


def read(path: Path) -> Iterator[Item]:
    """Every conversation (ThreadIn), saved memory (MemoryIn) and problem in a ChatGPT export."""
    try:
        bundle = Bundle(path)
    except (ImportFormatError, OSError) as exc:
        yield ImportProblem(str(path), None, describe(exc))
        return
    with bundle:
        names = bundle.names if bundle.kind == "file" else bundle.matching(CONVERSATION_FILE)
        if not names:
            yield ImportProblem(
                str(path), None, "no conversations.json or conversations-NNN.json in this ChatGPT export"
            )
            return
        yield from check_manifest(bundle, names)
        try:
            bundle.check_sizes(names)
        except ImportFormatError as exc:
            yield ImportProblem(str(path), None, str(exc))
            return
        seen_threads: dict[str, int] = {}
        seen_memories: set[str] = set()
        for name in names:
            label = bundle.label(name)
            stream: JsonStream | None = None
            try:
                with bundle.open(name) as fp:
                    stream = JsonStream(fp)
                    for conv in json_items(stream, ("conversations",)):
                        if isinstance(conv, Skipped):
                            yield skipped_problem(conv, label, "conversation")
                            continue
                        yield from _one(conv, label, seen_threads, seen_memories)
            except (JsonError, OSError, zipfile.BadZipFile, EOFError) as exc:
                yield ImportProblem(label, None, stream_error(exc, stream))
                continue
            yield from bad_utf8_problems(stream, label)


def _digest(thread: ThreadIn) -> int:
    return hash((thread.title, tuple((m.external_id, m.content) for m in thread.messages)))


def _one(conv: Any, label: str, seen_threads: dict[str, int], seen_memories: set[str]) -> Iterator[Item]:
    conv_id = (
        (ident(conv.get("id")) or ident(conv.get("conversation_id"))) if isinstance(conv, dict) else None
    )
    try:
        thread, memories = parse_conversation(conv)
    except Exception as exc:  # one malformed conversation must not stop the rest of the export
        yield ImportProblem(label, conv_id, describe(exc))
        return
    digest = _digest(thread)
    if thread.external_id in seen_threads:
        # The same conversation in two split files is expected; the same id with other content is not,
        # and dropping it without a word lost conversations.
        if seen_threads[thread.external_id or ""] != digest:
            yield ImportProblem(
                label,
                conv_id,
                "another conversation with this id came earlier in the export; only the first was imported",
            )
        return
    seen_threads[thread.external_id or ""] = digest
    if thread.messages:
        yield thread
    for memory in memories:
        if memory.content.casefold() not in seen_memories:
            seen_memories.add(memory.content.casefold())
            yield memory


def parse_conversation(conv: Any) -> tuple[ThreadIn, list[MemoryIn]]:
    """One conversation object -> its active branch as a thread, plus the memories it saved."""
    conv = as_dict(conv, "conversation")
    conv_id = ident(conv.get("id")) or ident(conv.get("conversation_id"))
    if conv_id is None:
        raise BadRecord("conversation has no id")
    if "mapping" not in conv:
        raise BadRecord("conversation has no mapping (not a ChatGPT conversation?)")
    mapping = as_dict(conv["mapping"], "mapping")
    conv_created = parse_ts(conv.get("create_time"))
    thread_meta: dict[str, Any] = {}
    for key, out in (
        ("default_model_slug", "model"),
        ("gizmo_id", "gizmo_id"),
        ("conversation_template_id", "template_id"),
    ):
        if isinstance(conv.get(key), str) and conv[key]:
            thread_meta[out] = conv[key]
    if conv.get("is_archived") is True:
        thread_meta["archived"] = True

    messages: list[MessageIn] = []
    reasoning: list[str] = []
    last_time = conv_created
    for node_id, node in _active_path(mapping, conv.get("current_node")):
        msg = node.get("message")
        if msg is None:
            continue
        msg = as_dict(msg, f"message of node {node_id}")
        parsed = _message(node_id, msg, thread_meta, reasoning)
        if parsed is None:
            continue
        if parsed.created_at is None:
            parsed.created_at = last_time
            parsed.metadata["time_estimated"] = True
        last_time = parsed.created_at if parsed.created_at is not None else last_time
        messages.append(parsed)

    thread = ThreadIn(
        source=SOURCE,
        external_id=conv_id,
        title=title_or_fallback(conv.get("title"), messages),
        messages=messages,
        created_at=conv_created or (messages[0].created_at if messages else None),
        updated_at=parse_ts(conv.get("update_time")) or (messages[-1].created_at if messages else None),
        metadata=thread_meta,
    )
    return thread, _memories(mapping, conv_id)


def _active_path(mapping: dict[str, Any], current: Any) -> list[tuple[str, dict[str, Any]]]:
    """Root-to-tip nodes of the branch the person last saw (cycle-safe)."""
    start = current if isinstance(current, str) and current in mapping else _newest_leaf(mapping)
    chain: list[tuple[str, dict[str, Any]]] = []
    seen: set[str] = set()
    node_id: Any = start
    while isinstance(node_id, str) and node_id in mapping and node_id not in seen:
        seen.add(node_id)
        node = as_dict(mapping[node_id], f"node {node_id}")
        chain.append((node_id, node))
        node_id = node.get("parent")
    chain.reverse()
    return chain


def _newest_leaf(mapping: dict[str, Any]) -> str | None:
    """Without current_node: the most recently written leaf, the deepest one on ties.

    Depths are memoised: walking from every leaf to the root was quadratic for the many-branch trees
    regenerations make (a 5 MB conversation took 150 s)."""
    parents = {n.get("parent") for n in mapping.values() if isinstance(n, dict)}
    depths: dict[str, int] = {}
    best: tuple[float, int] | None = None
    best_id: str | None = None
    for node_id, node in mapping.items():
        if not isinstance(node, dict) or node_id in parents or node.get("children"):
            continue
        msg = dict_or_empty(node.get("message"))
        when = parse_ts(msg.get("update_time")) or parse_ts(msg.get("create_time")) or 0.0
        depth = _depth(mapping, node_id, depths)
        if best is None or (when, depth) > best:
            best, best_id = (when, depth), node_id
    return best_id


def _depth(mapping: dict[str, Any], node_id: str, depths: dict[str, int]) -> int:
    """Ancestors of `node_id` (cycle-safe: a node seen twice on the way up counts as a root)."""
    path: list[str] = []
    on_path: set[str] = set()
    cur: Any = node_id
    base = -1
    while isinstance(cur, str) and cur in mapping and isinstance(mapping[cur], dict):
        if cur in depths:
            base = depths[cur]
            break
        if cur in on_path:
            break
        path.append(cur)
        on_path.add(cur)
        cur = mapping[cur].get("parent")
    for i, n in enumerate(reversed(path)):
        depths[n] = base + 1 + i
    return depths[node_id]


def _message(
    node_id: str, msg: dict[str, Any], thread_meta: dict[str, Any], reasoning: list[str]
) -> MessageIn | None:
    """A visible message, or None for scaffolding, plumbing, hidden and empty nodes."""
    author = dict_or_empty(msg.get("author"))
    role = _ROLES.get(str(author.get("role")))
    tool = author.get("name") if isinstance(author.get("name"), str) else None
    content = as_dict(msg.get("content") if msg.get("content") is not None else {}, "content")
    ctype = content.get("content_type")
    meta = dict_or_empty(msg.get("metadata"))

    if meta.get("is_user_system_message") and ctype == "user_editable_context":
        _custom_instructions(content, thread_meta)
        return None
    if ctype in _REASONING_TYPES:
        reasoning.extend(_reasoning_text(content))
        return None
    if role is None or not _shown(role, tool, ctype, msg, meta):
        return None
    extra: dict[str, Any] = {}
    routed = _routed(role, msg.get("recipient"), ctype, content, extra)
    if routed is None:
        return None
    content = routed
    text, assets = _text_and_assets(content)
    text = clean_text(strip_citations(text))
    attachments = [
        a["name"]
        for a in as_list(meta.get("attachments"), "attachments")
        if isinstance(a, dict) and isinstance(a.get("name"), str)
    ]
    if not text and not assets and not attachments:
        return None
    if tool == "dalle.text2im" and not assets:
        return None  # "DALL·E displayed 1 image..." status lines; the image itself is kept
    if not text:
        text = "[attached: " + ", ".join(attachments or assets) + "]"
    _extras(extra, role, tool, content, meta, attachments, assets, reasoning)
    return MessageIn(
        role=role,
        content=text,
        external_id=node_id,
        created_at=parse_ts(msg.get("create_time")),
        metadata=extra,
    )


def _custom_instructions(content: dict[str, Any], thread_meta: dict[str, Any]) -> None:
    """The person's custom instructions (a hidden system node) go into the thread's metadata."""
    instructions = {
        k: content[k]
        for k in ("user_profile", "user_instructions")
        if isinstance(content.get(k), str) and content[k].strip()
    }
    if instructions:
        thread_meta["custom_instructions"] = instructions


def _shown(role: str, tool: str | None, ctype: Any, msg: dict[str, Any], meta: dict[str, Any]) -> bool:
    """Whether the node is something the person saw (not hidden scaffolding or tool plumbing)."""
    if meta.get("is_visually_hidden_from_conversation") or msg.get("weight") == 0:
        return False
    if role == "system" and not meta.get("is_user_system_message"):
        return False
    return not (role == "tool" and (tool in _HIDDEN_TOOLS or (tool == "browser" and ctype != "tether_quote")))


def _routed(
    role: str, recipient: Any, ctype: Any, content: dict[str, Any], extra: dict[str, Any]
) -> dict[str, Any] | None:
    """The content to show for a message sent somewhere (code to the interpreter as a fenced block, a
    canvas document as its text), the content itself, or None for what is not shown."""
    if role == "assistant" and recipient in _CODE_TOOLS and ctype == "code":
        code = content.get("text")
        if not isinstance(code, str) or not code.strip():
            return None
        language = content.get("language") if isinstance(content.get("language"), str) else ""
        language = "python" if language in ("", "unknown") else language
        extra["code"] = language  # the code the interpreter ran; its output is the next (tool) message
        return {"content_type": "text", "parts": [f"```{language}\n{code.strip()}\n```"]}
    if role == "assistant" and recipient not in (None, "all"):
        if recipient != "canmore.create_textdoc":
            return None
        doc = _canvas(content)
        if doc is None:
            return None
        extra["canvas"] = doc[0]
        return {"content_type": "text", "parts": [doc[1]]}
    return None if ctype in _HIDDEN_TYPES else content


def _extras(
    extra: dict[str, Any],
    role: str,
    tool: str | None,
    content: dict[str, Any],
    meta: dict[str, Any],
    attachments: list[str],
    assets: list[str],
    reasoning: list[str],
) -> None:
    """What goes in a message's metadata beside its text (in place)."""
    if attachments:
        extra["attachments"] = attachments
    if assets:
        extra["assets"] = assets
    if role == "tool" and tool:
        extra["tool"] = tool
    if role == "assistant" and isinstance(meta.get("model_slug"), str):
        extra["model"] = meta["model_slug"]
    if content.get("content_type") == "tether_quote":
        extra.update({k: content[k] for k in ("url", "title") if isinstance(content.get(k), str)})
    if role == "assistant" and reasoning and "code" not in extra:  # reasoning goes with the answer
        extra["reasoning"] = list(reasoning)
        reasoning.clear()


def _text_and_assets(content: dict[str, Any]) -> tuple[str, list[str]]:
    """Text of every part (strings, voice transcriptions) and the names of images/audio pointed to."""
    texts: list[str] = []
    assets: list[str] = []
    for part in as_list(content.get("parts"), "content parts"):
        if isinstance(part, str):
            if part.strip():
                texts.append(part)
        elif isinstance(part, dict):
            if isinstance(part.get("text"), str) and part["text"].strip():
                texts.append(part["text"])  # audio_transcription and similar
            pointer = part.get("asset_pointer")
            if isinstance(pointer, str) and pointer:
                assets.append(pointer.split("://", 1)[-1])
    if not texts:
        for key in ("text", "result"):
            if isinstance(content.get(key), str) and content[key].strip():
                texts.append(content[key])
                break
    return "\n".join(texts), assets


def _reasoning_text(content: dict[str, Any]) -> list[str]:
    if isinstance(content.get("content"), str) and content["content"].strip():
        return [clean_text(content["content"])]
    out = []
    for thought in as_list(content.get("thoughts"), "thoughts"):
        if isinstance(thought, dict):
            text = thought.get("content") or thought.get("summary")
            if isinstance(text, str) and text.strip():
                out.append(clean_text(text))
    return out


def _canvas(content: dict[str, Any]) -> tuple[str, str] | None:
    """A canvas document (sent to canmore.create_textdoc as JSON): its name and text."""
    raw, _ = _text_and_assets(content)
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if isinstance(doc, dict) and isinstance(doc.get("content"), str) and doc["content"].strip():
        return str(doc.get("name") or "canvas"), doc["content"]
    return None


def _ancestors(mapping: dict[str, Any], node_id: str) -> tuple[str, ...]:
    """The node and its parents, nearest first (cycle-safe): the messages that led to a bio write."""
    out: list[str] = []
    cur: Any = node_id
    while isinstance(cur, str) and cur in mapping and cur not in out and len(out) < 50:
        out.append(cur)
        node = mapping[cur]
        cur = node.get("parent") if isinstance(node, dict) else None
    return tuple(out)


def _memories(mapping: dict[str, Any], conv_id: str | None = None) -> list[MemoryIn]:
    """Saved memories: text the assistant sent to the `bio` tool, or `bio` messages carrying the text,
    each with the conversation and the messages that led to it (the importer links the nearest stored)."""
    out: list[MemoryIn] = []
    for node_id, node in mapping.items():
        msg = node.get("message") if isinstance(node, dict) else None
        if not isinstance(msg, dict):
            continue
        author = dict_or_empty(msg.get("author"))
        to_bio = author.get("role") == "assistant" and msg.get("recipient") == "bio"
        from_bio = author.get("name") == "bio" and author.get("role") in ("tool", "assistant")
        if not (to_bio or from_bio):
            continue
        content = dict_or_empty(msg.get("content"))
        try:
            text, _ = _text_and_assets(content)
        except BadRecord:
            continue
        text = clean_text(strip_citations(text))
        if not text or _BIO_STATUS.match(text):
            continue
        out.append(
            MemoryIn(
                category=guess_category(text, full=False),
                content=text,
                origin="chatgpt-bio",
                created_at=parse_ts(msg.get("create_time")),
                thread_source=SOURCE if conv_id else None,
                thread_external_id=conv_id,
                message_external_ids=_ancestors(mapping, str(node_id)),
            )
        )
    out.sort(key=lambda m: m.created_at or 0.0)
    return out
