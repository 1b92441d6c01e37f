"""What every importer shares: error types, the problem record, time and text clean-up, safe archives.

Why one module: each export format has its own shape, but they fail in the same ways (bad JSON, wrong
types, odd timestamps, hostile zips) and the person importing should get the same kind of report for all
of them. Nothing here touches the database.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any

from store.errors import StoreError
from store.importing.formats._json import JsonError, JsonStream, Skipped
from store.records import MemoryIn, MessageIn, SuggestionIn, ThreadIn

FORMATS: tuple[str, ...] = (
    "chatgpt",
    "claude",
    "llm",
    "openwebui",
    "generic",
    "claude-code",
    "codex",
    "text",
)
SESSION_FORMATS: tuple[str, ...] = ("claude-code", "codex")  # append-only logs, imported incrementally
FORMATS_HINT = (
    "memapp reads: ChatGPT data exports (.zip, folder or conversations*.json), Claude.ai exports "
    "(.zip, folder, conversations.json, memories.json), simonw/llm logs.db, Open WebUI chat exports (.json) "
    "Claude Code and Codex CLI session transcripts (.jsonl, or a folder of them), a text list of memories "
    "(--format text) and the generic JSON/JSONL format (see the README)"
)


class ImportFormatError(StoreError):
    """A file (not one conversation in it) cannot be read as an export; the message says why."""


class UnknownFormatError(ImportFormatError):
    """The file is none of the formats we read; the message names them."""


class BadRecord(ValueError):
    """One conversation or memory has the wrong shape; it is reported and skipped."""


@dataclass(frozen=True, slots=True)
class ImportProblem:
    """Something that was skipped: a whole file (conversation None) or one conversation in it.

    With `note`, nothing was skipped: the text was repaired (invalid UTF-8 or a lone surrogate shown as
    U+FFFD, a repeated id renamed) and everything was imported; the person is told, the import does not
    count as failed."""

    file: str
    conversation: str | None
    error: str
    note: bool = False


Item = ThreadIn | MemoryIn | SuggestionIn | ImportProblem


def describe(exc: BaseException) -> str:
    """A one-line reason for an error, without a traceback; our own errors speak for themselves."""
    if isinstance(exc, BadRecord | ImportFormatError | JsonError):
        return str(exc)
    text = str(exc) or exc.__class__.__name__
    return f"{exc.__class__.__name__}: {text}"


# --- time ----------------------------------------------------------------------------------------

_NUMERIC = re.compile(r"^\s*-?\d+(\.\d+)?([eE][+-]?\d+)?\s*$")


def parse_ts(value: Any) -> float | None:
    """Epoch seconds (UTC) from what exports put in time fields, or None.

    Exports mix float seconds, integer milliseconds (Open WebUI chats, some ChatGPT payloads), numeric
    strings and ISO-8601 with `Z` or an offset. A time we cannot read is left empty, never an error:
    losing a timestamp is better than losing the message.
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        s = value.strip()
        if not s:
            return None
        if _NUMERIC.match(s):
            return parse_ts(float(s))
        try:
            when = dt.datetime.fromisoformat(s.replace(" UTC", "Z"))
        except ValueError:
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=dt.UTC)
        return when.timestamp()
    if isinstance(value, int | float):
        v = float(value)
        if not math.isfinite(v) or v <= 0:
            return None
        if v > 1e17:  # nanoseconds
            v /= 1e9
        elif v > 1e14:  # microseconds
            v /= 1e6
        elif v > 1e11:  # milliseconds (1e11 s would be the year 5138)
            v /= 1e3
        return v
    return None


# --- text ----------------------------------------------------------------------------------------


def clean_text(text: str) -> str:
    """Normalise line endings and drop NULs; exports from Windows tools carry \\r\\n and lone \\r."""
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "").strip()


def as_text(value: Any) -> str:
    """A string field that may be missing or null; anything else is a shape error."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    raise BadRecord(f"expected text, got {type(value).__name__}")


def as_dict(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise BadRecord(f"{what} is {type(value).__name__}, expected an object")
    return value


def dict_or_empty(value: Any) -> dict[str, Any]:
    """An optional sub-object: anything that is not an object counts as absent."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any, what: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise BadRecord(f"{what} is {type(value).__name__}, expected a list")
    return value


def ident(value: Any) -> str | None:
    """An id field as text (some tools write numbers); empty or odd values count as missing."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | str):
        s = str(value).strip()
        return s or None
    return None


def title_or_fallback(title: Any, messages: list[MessageIn]) -> str:
    """The export's title, else the first line of the first user message, else "Untitled"."""
    if isinstance(title, str) and title.strip():
        return clean_text(title).splitlines()[0][:200]
    for m in messages:
        if m.role == "user" and m.content.strip():
            line = m.content.strip().splitlines()[0].strip()
            return line if len(line) <= 80 else line[:79].rstrip() + "…"
    return "Untitled"


# --- memory categories ---------------------------------------------------------------------------

_PREFERENCE = re.compile(
    r"\b(prefers?|preferred|preference|likes?|liked|loves?|enjoys?|wants?|wishes|favou?rite|"
    r"dislikes?|hates?|would rather|doesn'?t like|does not like|don'?t like|do not like|"
    r"doesn'?t want|does not want|rather than|avoid(s)?)\b",
    re.IGNORECASE,
)
_PROJECT = re.compile(
    r"\b(working on|works on|building|is developing|project|startup|repo(sitory)?|codebase|roadmap|"
    r"deadline|launch(ing)?|thesis)\b",
    re.IGNORECASE,
)
_SKILL = re.compile(
    r"\b(knows? how|experienced (in|with)|proficient|skilled|expert (in|at)|fluent in|familiar with|"
    r"years of experience|learning|can (code|program|write|speak))\b",
    re.IGNORECASE,
)


def guess_category(text: str, *, default: str = "fact", full: bool = True) -> str:
    """A category for an imported memory line.

    With full=False only preference vs the default is decided: ChatGPT's saved memories are mostly
    facts about the user, and guessing project/skill from a short sentence misfiles too many of them.
    """
    if _PREFERENCE.search(text):
        return "preference"
    if full:
        if _PROJECT.search(text):
            return "project"
        if _SKILL.search(text):
            return "skill"
    return default


# --- containers: a folder, a zip archive, or one file --------------------------------------------

MAX_READ_TOTAL = 2 * 1024**3  # bytes we are willing to decompress from one archive
MAX_RATIO = 200  # uncompressed/compressed; JSON compresses ~10-30x, bombs ~1000x+
_RATIO_FLOOR = 16 * 1024**2  # small members may compress absurdly well and still be harmless
_DRIVE = re.compile(r"^[A-Za-z]:")
_SYMLINK = 0o120000
_ENCRYPTED = 0x1  # general purpose flag bit 0
_READABLE_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA)
_METHOD_NAMES = {
    9: "Deflate64",
    10: "PKWARE DCL Implode",
    6: "Implode",
    98: "PPMd",
    93: "Zstandard",
    95: "XZ",
}


def _unsafe_name(name: str) -> bool:
    if name.startswith(("/", "\\")) or _DRIVE.match(name):
        return True
    return ".." in PurePosixPath(name.replace("\\", "/")).parts


class Bundle:
    """An export as named members, whether it arrived as a folder, a zip archive or a single file.

    Archives are never extracted: members are streamed, so a hostile name can only make us refuse the
    archive, never write outside it. Sizes are checked before reading (zip bombs); zipfile itself stops
    at each member's declared size and checks its CRC.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._zip: zipfile.ZipFile | None = None
        self.names: list[str]
        if path.is_dir():
            self.kind = "dir"
            try:
                self.names = sorted(
                    p.relative_to(path).as_posix()
                    for p in path.rglob("*")
                    if p.is_file() and not p.is_symlink()
                )
            except OSError as exc:
                raise ImportFormatError(f"{path}: cannot list the folder ({exc})") from None
        elif zipfile.is_zipfile(path):
            self.kind = "zip"
            try:
                self._zip = zipfile.ZipFile(path)
                infos = self._zip.infolist()
            except (zipfile.BadZipFile, OSError, ValueError) as exc:
                raise ImportFormatError(f"{path}: not a readable zip archive ({exc})") from None
            for info in infos:
                if _unsafe_name(info.filename):
                    raise ImportFormatError(
                        f"{path}: refusing archive with unsafe member path {info.filename!r}"
                    )
                if (info.external_attr >> 16) & 0o170000 == _SYMLINK:
                    raise ImportFormatError(f"{path}: refusing archive with symlink member {info.filename!r}")
            self.names = sorted(i.filename for i in infos if not i.is_dir())
        else:
            self.kind = "file"
            self.names = [path.name]

    def __enter__(self) -> Bundle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._zip is not None:
            self._zip.close()
            self._zip = None

    def label(self, name: str) -> str:
        """How a member is named in problem reports: the path a person can find."""
        if self.kind == "zip":
            return f"{self.path}!{name}"
        if self.kind == "dir":
            return str(self.path / name)
        return str(self.path)

    def check_sizes(self, names: list[str]) -> None:
        """Refuse to decompress more than MAX_READ_TOTAL, or members that compress absurdly well."""
        if self._zip is None:
            return
        total = 0
        for name in names:
            info = self._zip.getinfo(name)
            total += info.file_size
            if info.file_size > _RATIO_FLOOR and info.file_size > MAX_RATIO * max(info.compress_size, 1):
                raise ImportFormatError(
                    f"{self.label(name)}: refusing member that expands {info.file_size // max(info.compress_size, 1)}x "
                    "(looks like a zip bomb)"
                )
        if total > MAX_READ_TOTAL:
            raise ImportFormatError(
                f"{self.path}: refusing to decompress {total / 1024**3:.1f} GiB of conversations (limit 2 GiB)"
            )

    def open(self, name: str) -> IO[bytes]:
        """A member's bytes, streamed. Every read of an archive member goes through the checks here, format
        detection's first peek included (a 1 MB bomb once cost 2.6 GB and a minute before the refusal)."""
        if self._zip is not None:
            info = self._zip.getinfo(name)
            if info.flag_bits & _ENCRYPTED:
                raise ImportFormatError(
                    f"{self.label(name)}: the archive is password-protected; unzip it yourself and import the folder"
                )
            if info.compress_type not in _READABLE_METHODS:
                method = _METHOD_NAMES.get(info.compress_type, f"method {info.compress_type}")
                raise ImportFormatError(
                    f"{self.label(name)}: compressed with {method}, which memapp cannot read; "
                    "unzip it with another tool and import the folder"
                )
            self.check_sizes([name])
            return self._zip.open(name)
        if self.kind == "dir":
            return (self.path / name).open("rb")
        return self.path.open("rb")

    def matching(self, pattern: re.Pattern[str]) -> list[str]:
        """Members whose base name matches, shallowest first (an archive may wrap everything in a folder)."""
        found = [n for n in self.names if pattern.fullmatch(n.rsplit("/", 1)[-1])]
        return sorted(found, key=lambda n: (n.count("/"), _natural_key(n)))


def _natural_key(name: str) -> list[Any]:
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


def stream_error(exc: BaseException, stream: JsonStream | None) -> str:
    """A file that failed to parse, described once: with the invalid UTF-8 it had, if any."""
    text = describe(exc)
    if stream is not None and stream.bad_utf8:
        text += f" (the file also has invalid UTF-8, the first near byte {stream.bad_utf8[0]})"
    return text


def bad_utf8_problems(stream: JsonStream, label: str) -> Iterator[ImportProblem]:
    """One problem for the invalid UTF-8 a stream replaced (everything else in the file was read)."""
    if stream.bad_utf8:
        n = len(stream.bad_utf8)
        yield ImportProblem(
            label,
            None,
            f"{n} invalid UTF-8 byte{'s' if n > 1 else ''} (the first near byte {stream.bad_utf8[0]}) "
            "shown as U+FFFD; the rest of the file was imported",
            note=True,
        )


def json_items(stream: JsonStream, list_keys: tuple[str, ...] = ()) -> Iterator[Any]:
    """The items of a list root, of a `{key: [...]}` wrapper (the first of `list_keys` found), or a single
    object root. Lists are streamed with recovery: an element that cannot be read comes as a Skipped."""
    first = stream.peek()
    if first == "[":
        yield from stream.iter_array(recover=True)
        return
    if first != "{" or not list_keys:
        root = stream.value()
        stream.expect_end()
        if isinstance(root, dict):
            yield root
            return
        raise JsonError(f"the file holds a JSON {type(root).__name__}, expected a list of conversations")
    rest: dict[str, Any] = {}
    streamed = False
    for key, value in stream.members(list_keys):
        if isinstance(value, Iterator):
            if streamed:
                rest[key] = list(value)
            else:
                streamed = True
                yield from value
        else:
            rest[key] = value
    stream.expect_end()
    if not streamed:
        yield rest


def skipped_problem(item: Skipped, label: str, what: str) -> ImportProblem:
    """The problem for an element of a list that could not be read (and was passed over)."""
    return ImportProblem(label, f"{what} {item.index}", item.describe())
