"""Shared decoding helpers: msgspec errors turned into `LoadIssue`s naming file, line and field.

Two file shapes are read by the loaders:
- JSON Lines (one record per line): each line is decoded straight into its msgspec type;
- a JSON array file (VitaBench, tool schemas): the array is walked element by element with the
  stdlib scanner so that every element keeps the line it starts on, then converted with msgspec.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from bench_data.types import LoadIssue

T = TypeVar("T")

_AT_PATH = re.compile(r"^(?P<msg>.*?) - at `(?P<path>[^`]*)`$", re.DOTALL)
_MISSING = re.compile(r"^Object missing required field `(?P<name>[^`]*)`")
_BYTE = re.compile(r"\(byte (?P<byte>\d+)\)")


def field_from_path(path: str) -> str:
    """`$.time` -> `time`; `$.a[0].b` -> `a[0].b`; `$` -> ``."""
    path = path.removeprefix("$")
    return path.removeprefix(".")


def _join(prefix: str, name: str) -> str:
    if not prefix:
        return name
    if not name:
        return prefix
    return f"{prefix}{name}" if name.startswith("[") else f"{prefix}.{name}"


def validation_issue(path: str, line: int, exc: msgspec.ValidationError) -> LoadIssue:
    """A msgspec ValidationError as a LoadIssue whose field is a readable JSON path."""
    text = str(exc)
    field = ""
    m = _AT_PATH.match(text)
    if m:
        text, field = m.group("msg"), field_from_path(m.group("path"))
    missing = _MISSING.match(text)
    if missing:
        field = _join(field, missing.group("name"))
        text = "missing required field"
    return LoadIssue(path=path, line=line, field=field, message=text)


def _column(raw: bytes, byte_offset: int) -> int:
    """1-based character column of a byte offset inside one line."""
    return len(raw[:byte_offset].decode("utf-8", errors="replace")) + 1


def decode_error_issue(path: str, line: int, raw: bytes, exc: msgspec.DecodeError) -> LoadIssue:
    """Malformed JSON on one line, with the column where the parser stopped."""
    text = str(exc)
    m = _BYTE.search(text)
    if m:
        col = _column(raw, int(m.group("byte")))
        text = f"{_BYTE.sub('', text).rstrip()} at column {col}"
    return LoadIssue(path=path, line=line, field="", message=f"invalid JSON: {text}")


def first_occurrence(first_line: dict[str, int], task_id: str, where: str, line: int,
                     field: str) -> LoadIssue | None:
    """None (and `task_id` remembered at `line`) the first time an id is seen in a file; the
    duplicate's LoadIssue, naming the line of the first one, every later time."""
    seen = first_line.get(task_id)
    if seen is not None:
        return LoadIssue(where, line, field, f"duplicate task id {task_id!r} (first on line {seen})")
    first_line[task_id] = line
    return None


def iter_jsonl(path: Path, record_type: type[T]) -> Iterator[tuple[int, T | LoadIssue]]:
    """Yield (1-based line, decoded record or issue) for every non-blank line of a JSONL file."""
    decoder = msgspec.json.Decoder(record_type)
    where = str(path)
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            raw = raw.rstrip(b"\r\n")
            if not raw.strip():
                continue
            try:
                raw.decode("utf-8")  # msgspec skips unknown field names without checking them
                yield lineno, decoder.decode(raw)
            except msgspec.ValidationError as exc:
                yield lineno, validation_issue(where, lineno, exc)
            except msgspec.DecodeError as exc:
                yield lineno, decode_error_issue(where, lineno, raw, exc)
            except UnicodeDecodeError as exc:  # invalid UTF-8 inside a JSON string
                col = _column(raw, exc.start)
                yield lineno, LoadIssue(where, lineno, "", f"not UTF-8 at column {col} "
                                        f"({exc.reason})")
            except RecursionError:
                yield lineno, LoadIssue(where, lineno, "", "invalid JSON: nested too deeply")


def iter_json_array(path: Path) -> Iterator[tuple[int, Any | LoadIssue]]:
    """Yield (1-based start line, parsed element or issue) for each element of a JSON array file.

    A file that is not a JSON array, or that breaks off, yields one issue and stops.
    """
    where = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        yield 1, LoadIssue(where, 1, "", f"not UTF-8 text: {exc}")
        return
    decoder = json.JSONDecoder()
    ws = re.compile(r"[ \t\n\r]*")

    def line_col(pos: int) -> tuple[int, int]:
        line = text.count("\n", 0, pos) + 1
        return line, pos - (text.rfind("\n", 0, pos) + 1) + 1

    pos = ws.match(text, 0).end()  # type: ignore[union-attr]
    if not text.startswith("[", pos):
        line, col = line_col(pos)
        yield line, LoadIssue(where, line, "", f"expected a JSON array at column {col}")
        return
    pos = ws.match(text, pos + 1).end()  # type: ignore[union-attr]
    if text.startswith("]", pos):
        return
    while True:
        start_line = line_col(pos)[0]
        try:
            obj, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            yield exc.lineno, LoadIssue(
                where, exc.lineno, "", f"invalid JSON: {exc.msg} at column {exc.colno}"
            )
            return
        except RecursionError:
            yield start_line, LoadIssue(where, start_line, "", "invalid JSON: nested too deeply")
            return
        yield start_line, obj
        pos = ws.match(text, pos).end()  # type: ignore[union-attr]
        if text.startswith(",", pos):
            pos = ws.match(text, pos + 1).end()  # type: ignore[union-attr]
            continue
        if text.startswith("]", pos):
            rest = ws.match(text, pos + 1).end()  # type: ignore[union-attr]
            if rest != len(text):
                line, col = line_col(rest)
                yield line, LoadIssue(where, line, "", f"trailing data at column {col}")
            return
        line, col = line_col(pos)
        yield line, LoadIssue(where, line, "", f"invalid JSON: expected ',' or ']' at column {col}")
        return


def convert_element(
    path: str, line: int, obj: Any, record_type: type[T], prefix: str = ""
) -> T | LoadIssue:
    """msgspec.convert with strict types; a failure becomes a LoadIssue (field prefixed)."""
    try:
        return msgspec.convert(obj, record_type, strict=True)
    except msgspec.ValidationError as exc:
        issue = validation_issue(path, line, exc)
        return LoadIssue(issue.path, issue.line, _join(prefix, issue.field), issue.message)
