"""A tool's rejected arguments as one line an assistant can act on: which argument, what was wrong with it,
and what it takes (issue 28.17).

Why not the SDK's text: it is pydantic's multi-line report ("1 validation error for read_threadArguments
… For further information visit https://errors.pydantic.dev/…"), which names an internal model, repeats
the whole input and sends the reader to a web page. "What it takes" is read from the argument's own type
(its JSON schema: type, enum, bounds, lengths), the same facts the client was shown in `tools/list`, so
the message and the schema cannot disagree.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import TypeAdapter, ValidationError


def _n(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


def _range(schema: Mapping[str, Any], unit: str = "") -> str:
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and high is not None:
        return f" from {_n(low)} to {_n(high)}{unit}"
    if low is not None:
        return f" of at least {_n(low)}{unit}"
    if high is not None:
        return f" of at most {_n(high)}{unit}"
    return ""


def _length(schema: Mapping[str, Any]) -> str:
    low, high = schema.get("minLength"), schema.get("maxLength")
    if low and high:
        return f" of {_n(low)}-{_n(high)} characters"
    if high:
        return f" of at most {_n(high)} characters"
    if low:
        return f" of at least {_n(low)} characters"
    return ""


def takes(schema: Mapping[str, Any]) -> str:
    """What a JSON schema accepts, in words ("a whole number from 1 to 50", "one of a, b, c")."""
    if "anyOf" in schema:
        kinds = [s for s in schema["anyOf"] if s.get("type") != "null"]
        words = " or ".join(takes(s) for s in kinds)
        return words + (" (or leave it out)" if len(kinds) < len(schema["anyOf"]) else "")
    if "enum" in schema:
        return "one of " + ", ".join(str(v) for v in schema["enum"])
    kind = schema.get("type")
    if kind == "integer":
        return "a whole number" + _range(schema)
    if kind == "number":
        return "a number" + _range(schema)
    if kind == "boolean":
        return "true or false"
    if kind == "string" and schema.get("format") in ("date-time", "date"):
        return "an ISO 8601 date or date-time (2024-05-01 or 2024-05-01T09:30:00Z)"
    if kind == "string":
        return "text" + _length(schema)
    return "a value of type " + str(kind or "any")


def _shown(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _problem(error: Mapping[str, Any]) -> str:
    if error["type"] == "missing":
        return "is missing"
    return f"cannot be {_shown(error.get('input'))}"


def explain(tool: str, fn: Callable[..., Any], error: ValidationError, arguments: Mapping[str, Any]) -> str:
    """One line for `tool`'s rejected `arguments` (fn is the tool's function, its first parameter the
    store): each bad argument with what it takes, then any argument the tool does not have."""
    params = list(inspect.signature(fn, eval_str=True, locals={"Store": object}).parameters.values())[1:]
    by_name = {p.name: p for p in params}
    parts = []
    seen: set[str] = set()
    for e in error.errors(include_url=False):
        name = str(e["loc"][0]) if e["loc"] else ""
        if name in seen:
            continue  # a union reports each of its branches: one line per argument is enough
        seen.add(name)
        param = by_name.get(name)
        if param is None:
            parts.append(f"{name or 'the arguments'} {_problem(e)}")
            continue
        schema = TypeAdapter(param.annotation).json_schema()
        parts.append(f"{name} {_problem(e)}; it takes {takes(schema)}")
    text = f"Invalid argument for {tool}: " + "; ".join(parts) + "."
    unknown = [k for k in arguments if k not in by_name]
    if unknown:
        names = ", ".join(unknown)
        verb = "is not an argument" if len(unknown) == 1 else "are not arguments"
        text += f" {names} {verb} of {tool}, which takes {', '.join(by_name)}."
    return text
