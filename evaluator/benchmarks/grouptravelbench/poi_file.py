"""The reference's POI table as a file: finding it, checking it, loading it once per process.

`all_poi_by_city.json` is one JSON object: city -> list of places, each
`{"name": str, "poi_type": "attractions" | "food" | "hotels" | ..., "custom_category": str,
"opening_hours": null | {"always_open": bool, "rules": [{"date_range": {"start": "MM-DD",
"end": "MM-DD"} | null, "weekdays": [1..7], "time_windows": [{"open": "HH:MM",
"close": "HH:MM"}]}]}}`. A value of another type would make the reference's scorers fail
(or silently mis-score), so `check_poi_file` reports every one as `file:line: field `path`:
problem`, the line being where the place's object starts (found by a second, position-keeping
pass over the text, only when there is something to report).
"""

from __future__ import annotations

import bisect
import hashlib
import re
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

import msgspec

from bench_data.types import LoadIssue

from .options import POI_FILE, POI_NONE
from .poi import PoiTable

_MONTH_DAY = re.compile(r"^(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$")
_CLOCK = re.compile(r"^([01]\d|2[0-4]):[0-5]\d$")
MAX_ISSUES = 200


class PoiTableError(ValueError):
    """The POI table cannot be used (the message names the file, line and field)."""


def beside(task_file: Path | str) -> Path:
    """Where the reference keeps the table, relative to a task file's directory."""
    return Path(task_file).parent.joinpath(*POI_FILE)


def resolve(poi_table: str, task_file: Path | str | None) -> Path | None:
    """The POI table a run uses: the option's path, else the one beside the task file when it
    exists; None for "none" or when there is none."""
    if poi_table == POI_NONE:
        return None
    if poi_table:
        return Path(poi_table).expanduser()
    if task_file is None:
        return None
    found = beside(task_file)
    return found if found.is_file() else None


def _lines(text: bytes) -> list[int]:
    return [m.start() for m in re.finditer(rb"\n", text)]


def _line_of(newlines: list[int], offset: int) -> int:
    return bisect.bisect_left(newlines, offset) + 1


_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[{}\[\]]')


def _place_offsets(text: bytes) -> Iterator[int]:
    """Byte offsets of the places' objects (objects directly inside a city's list), in
    order."""
    stack: list[bytes] = []
    for m in _TOKEN.finditer(text):
        tok = m.group()
        if tok in (b"{", b"["):
            if tok == b"{" and len(stack) == 2 and stack[1] == b"[":
                yield m.start()
            stack.append(tok)
        elif tok in (b"}", b"]") and stack:
            stack.pop()


def _place_problems(place: Any) -> Iterator[tuple[str, str]]:
    """(field, problem) of one place (field relative to the place)."""
    if not isinstance(place, dict):
        yield "", f"a place must be an object, got {type(place).__name__}"
        return
    for key in ("name", "poi_type", "custom_category"):
        if key in place and not isinstance(place[key], str):
            yield key, f"must be a string, got {type(place[key]).__name__}"
    if not place.get("name"):
        yield "name", "missing or empty (the place can never be matched)"
    hours = place.get("opening_hours")
    if hours is None:
        return
    if not isinstance(hours, dict):
        yield "opening_hours", f"must be an object or null, got {type(hours).__name__}"
        return
    if "always_open" in hours and not isinstance(hours["always_open"], bool):
        yield "opening_hours.always_open", "must be true or false"
    rules = hours.get("rules", [])
    if not isinstance(rules, list):
        yield "opening_hours.rules", "must be a list"
        return
    for i, rule in enumerate(rules):
        yield from (
            (f"opening_hours.rules[{i}]{('.' + f) if f else ''}", p)
            for f, p in _rule_problems(rule))


def _rule_problems(rule: Any) -> Iterator[tuple[str, str]]:
    if not isinstance(rule, dict):
        yield "", "must be an object"
        return
    span = rule.get("date_range")
    if span is not None:
        if not isinstance(span, dict):
            yield "date_range", "must be an object or null"
        else:
            for key in ("start", "end"):
                if key in span and not (isinstance(span[key], str)
                                        and _MONTH_DAY.match(span[key])):
                    yield f"date_range.{key}", f"must be \"MM-DD\", got {span[key]!r}"
    days = rule.get("weekdays", [])
    if not isinstance(days, list) or not all(
            isinstance(d, int) and not isinstance(d, bool) and 1 <= d <= 7 for d in days):
        yield "weekdays", f"must be a list of 1..7 (Monday = 1), got {days!r}"
    windows = rule.get("time_windows", [])
    if not isinstance(windows, list):
        yield "time_windows", "must be a list"
        return
    for j, window in enumerate(windows):
        if not isinstance(window, dict):
            yield f"time_windows[{j}]", "must be an object"
            continue
        for key in ("open", "close"):
            value = window.get(key)
            if not (isinstance(value, str) and _CLOCK.match(value)):
                yield f"time_windows[{j}].{key}", f"must be \"HH:MM\", got {value!r}"


def check_poi_file(path: Path) -> tuple[Any, list[LoadIssue]]:
    """(the decoded table or None, every issue) of a POI table file."""
    where = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return None, [LoadIssue(where, 0, "", f"cannot be read: {exc.strerror or exc}")]
    try:
        data = msgspec.json.decode(raw)
    except msgspec.DecodeError as exc:
        m = re.search(r"byte (\d+)", str(exc))
        line = _line_of(_lines(raw), int(m.group(1))) if m else raw.count(b"\n") + 1
        return None, [LoadIssue(where, line, "", f"not valid JSON: {exc}")]
    if not isinstance(data, dict):
        return None, [LoadIssue(where, 1, "", "expected one object of city -> list of places, "
                                            f"got {type(data).__name__}")]
    found: list[tuple[str, int | None, str, str]] = []  # (city, place index, field, problem)
    for city, places in data.items():
        if not isinstance(places, list):
            kind = type(places).__name__
            found.append((city, None, "", f"must be a list of places, got {kind}"))
            continue
        for i, place in enumerate(places):
            found.extend((city, i, f, p) for f, p in _place_problems(place))
            if len(found) >= MAX_ISSUES:
                break
    if not found:
        return data, []
    newlines = _lines(raw)
    offsets = list(_place_offsets(raw))
    index: dict[tuple[str, int], int] = {}
    k = 0
    for city, places in data.items():
        for i in range(len(places) if isinstance(places, list) else 0):
            if isinstance(places[i], dict) and k < len(offsets):
                index[(city, i)] = offsets[k]
                k += 1
    issues = []
    for city, i, field, problem in found:
        offset = index.get((city, i)) if i is not None else None
        line = _line_of(newlines, offset) if offset is not None else 1
        label = city if i is None else f"{city}[{i}]" + (f".{field}" if field else "")
        issues.append(LoadIssue(where, line, label, problem))
    return data, issues


@lru_cache(maxsize=2)
def _load(path: str, mtime_ns: int, size: int) -> PoiTable:
    data, issues = check_poi_file(Path(path))
    if issues:
        more = f" (and {len(issues) - 1} more; run `agentsweep data check {path}`)" \
            if len(issues) > 1 else ""
        raise PoiTableError(f"POI table {issues[0]}{more}")
    return PoiTable(data)


def load_poi_table(path: Path) -> PoiTable:
    """The table at `path`, checked, loaded once per process (PoiTableError naming the first
    problem's file, line and field)."""
    try:
        st = path.stat()
    except OSError:
        raise PoiTableError(f"POI table {path}: not found") from None
    return _load(str(path.resolve()), st.st_mtime_ns, st.st_size)


def path_tag(path: Path | None) -> str:
    """A short label of the table a judgement used (for its version and record)."""
    if path is None:
        return "none"
    return hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:8]


def is_poi_file(path: Path) -> bool:
    """A file `agentsweep data check` reads as a POI table."""
    return path.name == POI_FILE[1] or path.parent.name == POI_FILE[0] and \
        path.suffix == ".json"
