"""Administrative-division names for TravelBench's place-name checks (notes §4).

The reference resolves `travel_search_trains` origin/destination and `map_search_places.region`
against a table of (name, adcode, citycode) rows, TravelBench's `adcode.txt`. A row's *full
name* is its own name prefixed by its parents' full names, a parent being found from the code
(province `xx0000`, prefecture `xxyy00`, else the county's prefecture or province when present).
Placeholder rows named "...市辖区" add nothing to their children's names; their own full name is
the parent's full name plus "市辖区". A query (stripped) resolves when it equals a full name, or
else when it is the suffix of exactly one full name; no match or several is a failure.

`load_regions(path)` parses a file once per process (cached by path, size and mtime) into a
dict of full names plus a suffix index (the full names reversed and sorted: the names ending
with a query are one range of it, found by bisection), so a lookup is a dict probe and two
bisections; building the index is a sort, a few milliseconds for TravelBench's table.
`regions_for` picks the table for a run (the `sandbox.adcode_table` setting) and describes the
choice for the manifest.
"""

from __future__ import annotations

import bisect
import hashlib
import os
import threading
from pathlib import Path
from typing import NamedTuple

PLACEHOLDER = "市辖区"
REGION_TOOLS = frozenset({"travel_search_trains", "map_search_places"})
"""Tools whose reference validators resolve place names against the table."""
SAMPLE_TABLE = Path(__file__).resolve().parent / "sample_adcode.txt"
"""A small table written for the built-in sample's English city names (not TravelBench's)."""


class AdcodeTableError(ValueError):
    """The table file is missing or malformed (message names the file and line)."""


class Resolution(NamedTuple):
    status: str                  # "exact" | "suffix" | "none" | "ambiguous"
    adcode: int | None
    candidates: tuple[str, ...]  # up to 5 matching full names, shortest first

    @property
    def ok(self) -> bool:
        return self.adcode is not None


class RegionTable:
    """Full names -> adcodes with a suffix index; immutable, shared by all episodes."""

    def __init__(self, rows: list[tuple[str, str]], *, path: str = "", sha256: str = "") -> None:
        self.path, self.sha256 = path, sha256
        self.full: dict[str, int] = _full_names(rows, path)
        # each full name reversed, sorted: the names ending with q are the run of entries
        # that start with q reversed
        self._reversed = sorted(name[::-1] for name in self.full)

    def ending_with(self, suffix: str) -> list[str]:
        """Every full name that ends with `suffix` (a non-empty string)."""
        key = suffix[::-1]
        rev = self._reversed
        lo = bisect.bisect_left(rev, key)
        hi = bisect.bisect_left(rev, key + "\U0010ffff", lo)  # past every extension of key
        return [r[::-1] for r in rev[lo:hi]]

    def __len__(self) -> int:
        return len(self.full)

    def lookup(self, query: str) -> Resolution:
        """Resolve an already stripped name the way the reference does."""
        code = self.full.get(query)
        if code is not None:
            return Resolution("exact", code, (query,))
        names = list(self.full) if query == "" else self.ending_with(query)
        if not names:
            return Resolution("none", None, ())
        shown = tuple(sorted(names, key=lambda n: (len(n), n))[:5])
        if len(names) == 1:
            return Resolution("suffix", self.full[names[0]], shown)
        return Resolution("ambiguous", None, shown)


def parse_rows(text: str, path: str = "<text>") -> list[tuple[str, str]]:
    """(name, adcode) rows of a tab-separated table; the first line is a header."""
    rows: list[tuple[str, str]] = []
    for line_no, line in enumerate(text.splitlines()[1:], start=2):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 3:
            raise AdcodeTableError(f"{path}:{line_no}: expected 3 tab-separated columns "
                                   f"(name, adcode, citycode), got {len(parts)}")
        name, code = parts[0], parts[1]
        if len(code) != 6 or not code.isdigit():
            raise AdcodeTableError(f"{path}:{line_no}: adcode {code!r} is not 6 digits")
        rows.append((name, code))
    if not text.strip():
        raise AdcodeTableError(f"{path}: empty administrative-division table")
    return rows


def _full_names(rows: list[tuple[str, str]], path: str) -> dict[str, int]:
    names = {code: name for name, code in rows}  # a repeated code keeps its last name
    memo: dict[tuple[str, bool], str] = {}

    def parent(code: str) -> str | None:
        if code.endswith("0000"):
            return None
        prov = code[:2] + "0000"
        if code.endswith("00"):
            return prov if prov in names else None
        pref = code[:4] + "00"
        if pref in names:
            return pref
        return prov if prov in names else None

    def full(code: str, keep_placeholder: bool) -> str:
        key = (code, keep_placeholder)
        if key in memo:
            return memo[key]
        up = parent(code)
        prefix = full(up, False) if up else ""
        own = names[code]
        if own.endswith(PLACEHOLDER):
            if not keep_placeholder:
                memo[key] = prefix
                return prefix
            if up and own.startswith(names[up]):
                own = own[len(names[up]):]
        memo[key] = prefix + own
        return memo[key]

    out: dict[str, int] = {}
    for _, code in rows:
        name = full(code, True)
        if not name:
            continue
        if out.get(name, int(code)) != int(code):
            raise AdcodeTableError(f"{path}: full name {name!r} has two adcodes "
                                   f"({out[name]} and {code})")
        out[name] = int(code)
    return out


_CACHE: dict[tuple[str, int, int], RegionTable] = {}
_LOCK = threading.Lock()


def load_regions(path: str | Path) -> RegionTable:
    """The table at `path`, parsed once per process (re-read if the file changes)."""
    p = str(Path(path).expanduser().resolve())
    try:
        st = os.stat(p)
    except OSError as exc:
        raise AdcodeTableError(f"administrative-division table {p} cannot be read: "
                               f"{exc.strerror}") from None
    key = (p, st.st_size, st.st_mtime_ns)
    with _LOCK:
        table = _CACHE.get(key)
        if table is None:
            data = Path(p).read_bytes()
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise AdcodeTableError(f"{p}: not UTF-8 ({exc})") from None
            table = RegionTable(parse_rows(text, p), path=p,
                                sha256=hashlib.sha256(data).hexdigest())
            _CACHE[key] = table
        return table


def regions_for(setting: str, tool_names: list[str], *, data_root: str | Path | None = None,
                builtin_sample: bool = False) -> tuple[RegionTable | None, dict[str, object]]:
    """The table a run validates place names with, and a description for the manifest.

    setting: `sandbox.adcode_table` ("" = `<data_root>/adcode.txt`, else the built-in sample's
    table when `builtin_sample`; "off" = no place-name check). No table is loaded when no tool
    resolves place names, or when neither a setting nor a data root is given (a caller that is
    not a run, e.g. a benchmark); raises AdcodeTableError when a needed table cannot be read.
    """
    if setting == "off":
        return None, {"adcode_checks": False, "adcode_source": "off (sandbox.adcode_table)"}
    if not REGION_TOOLS.intersection(tool_names):
        return None, {"adcode_checks": False, "adcode_source": "not needed"}
    if setting:
        path, source = Path(setting), "sandbox.adcode_table"
    elif data_root is not None and (Path(data_root) / "adcode.txt").is_file():
        path, source = Path(data_root) / "adcode.txt", "dataset"
    elif builtin_sample:
        path, source = SAMPLE_TABLE, "built-in sample table"
    elif data_root is not None:
        path, source = Path(data_root) / "adcode.txt", "dataset"
    else:
        return None, {"adcode_checks": False, "adcode_source": "not given"}
    try:
        table = load_regions(path)
    except AdcodeTableError as exc:
        raise AdcodeTableError(
            f"{exc} (needed to validate place names of {', '.join(sorted(REGION_TOOLS))}); "
            "set sandbox.adcode_table = PATH to TravelBench's adcode.txt, or \"off\" to skip "
            "that check") from None
    return table, {"adcode_checks": True, "adcode_source": source, "adcode_table": table.path,
                   "adcode_sha256": table.sha256, "adcode_names": len(table)}
