"""Argument validation for GroupTravelBench's 10 tools: which calls count as tool errors.

The reference (GroupTravelbench@dd5dacc, `group_travelbench/tools/<tool>.py`, each tool's
`_validate_parameters`) checks every call before it reaches the cache, in this order:

1. generic schema checks, against the tool's `input_schema` (here: the `parameters` the sandbox
   passes, i.e. this package's `grouptravelbench_tools.json`): no unknown argument, every required
   argument present, every value of its declared JSON type. Types are Python `isinstance`
   checks as there: `integer` is `int` (so `true` passes and `2.0` fails), `number` is
   `int | float`; an `anyOf` property takes `null` only when one branch is `null`; a property
   without a type takes anything.
2. the tool's own rules (`_RULES` below; each helper's docstring names the reference check it
   mirrors): non-blank strings, city names, `YYYY-MM-DD` dates, `HH:MM` times, value sets,
   numeric ranges and "longitude,latitude" coordinates.

Nothing else is checked (no task-time window for dates, no enum on `search_poi.region`, no
coordinate check for a `location`/endpoint whose first three characters are not all digits).
City names are resolved with the administrative-division table (`adcode.txt`, the same format
and full-name rules as TravelBench's, `travelbench/adcode.py`); with `regions=None` that one
check is skipped and everything else runs.

`validate` has the sandbox's `Validator` signature and returns None or (error category, the
`{"error": ...}` JSON text the agent sees); `check` gives the reference's own contract ("" when
valid, else the error text); `validator(request)` is the per-run factory.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from cache_store.types import Validator
from evaluator.benchmarks.base import BenchmarkError, EnvironmentRequest
from evaluator.benchmarks.travelbench.adcode import AdcodeTableError, RegionTable, load_regions

Failure = tuple[str, str]

# `re.match` with `$`, as the reference: a trailing newline passes the pattern (the date then
# fails strptime; "12:30\n" is a valid time there, since int() strips it).
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}$")
_CLOCK = re.compile(r"\d{2}:\d{2}$")
_PLACE_SUFFIXES = ("市", "省", "区", "县", "州", "盟", "旗", "地区")
_PY_TYPES: dict[str, Any] = {
    "string": str, "integer": int, "number": (int, float), "boolean": bool,
    "array": list, "object": dict, "null": type(None),
}

FLIGHT_SORTS = ("depart_time", "price", "duration")
TRAIN_SORTS = ("depart_time", "depart_time_desc", "duration", "price")
TRAIN_TYPES = ("high_speed", "high_speed_and_emu", "regular")
POI_SORTS = ("relevance", "distance", "rating", "price_low", "price_high")
ROUTE_MODES = ("transit", "driving", "walking", "bicycling")
ALONG_ROUTE_MODES = ("driving", "walking", "bicycling")


class _Bad(Exception):
    def __init__(self, category: str, message: str) -> None:
        super().__init__(message)
        self.category, self.message = category, message


def _fail(category: str, message: str) -> Failure:
    return category, json.dumps({"error": message}, ensure_ascii=False)


# -- 1. generic schema checks ----------------------------------------------------------------
def _is_type(value: Any, typ: Any) -> bool:
    """The reference's `_check_type`: an unknown (or absent) type name accepts anything."""
    expected = _PY_TYPES.get(typ) if isinstance(typ, str) else None
    return expected is None or isinstance(value, expected)


def _type_error(key: str, value: Any, spec: dict) -> str:
    """Mirrors the type loop: `anyOf` (null allowed only via a null branch), else `type`."""
    got = type(value).__name__
    if isinstance(spec.get("anyOf"), list):
        kinds = [o.get("type") if isinstance(o, dict) else None for o in spec["anyOf"]]
        if value is None:
            return "" if "null" in kinds else f"'{key}' must not be null"
        others = [k for k in kinds if k != "null"]
        if any(_is_type(value, k) for k in others):
            return ""
        return f"'{key}' has the wrong type: expected {' or '.join(map(str, others))}, got {got}"
    typ = spec.get("type")
    if typ and not _is_type(value, typ):
        return f"'{key}' has the wrong type: expected {typ}, got {got}"
    return ""


def _schema_failure(args: dict[str, Any], parameters: dict) -> Failure | None:
    """Unknown arguments, then missing required ones, then JSON types (the reference's order)."""
    props = parameters.get("properties") or {}
    for key in args:
        if key not in props:
            return _fail("unknown_parameter", f"unknown argument '{key}'; this tool accepts: "
                                              f"{', '.join(props)}")
    for key in parameters.get("required") or []:
        if key not in args:
            return _fail("missing_required", f"missing required argument '{key}'")
    for key, value in args.items():
        spec = props[key] if isinstance(props[key], dict) else {}
        message = _type_error(key, value, spec)
        if message:
            return _fail("wrong_type", message)
    return None


# -- 2. the per-tool rules -------------------------------------------------------------------
def _nonblank(a: dict, key: str) -> None:
    """Mirrors `if not value or not value.strip()` on a present string argument."""
    if key in a and (not a[key] or not a[key].strip()):
        raise _Bad("missing_required", f"'{key}' must not be empty")


def known_place(regions: RegionTable, name: str) -> bool:
    """Mirrors `get_adcode.validate_city_name`: the stripped name, or the name plus one of the
    common suffixes (市 省 区 县 州 盟 旗 地区), equals or ends some full division name."""
    name = name.strip()
    if not name:
        return False
    return any(regions.lookup(name + suffix).status != "none"
               for suffix in ("", *_PLACE_SUFFIXES))


def _city(a: dict, key: str, regions: RegionTable | None) -> None:
    """Mirrors the required-city pattern (weather `location`, flights/trains `origin` and
    `destination`, search_poi `city`): when present, non-blank, then a known division name."""
    _nonblank(a, key)
    if key in a and regions is not None and not known_place(regions, a[key]):
        raise _Bad("out_of_range", f"'{key}': unknown city or district name {a[key]!r}")


def _optional_city(a: dict, key: str, regions: RegionTable | None) -> None:
    """Mirrors the route tools' `city` check: when not null and not blank, a known name."""
    value = a.get(key)
    if value is not None and value.strip() and regions is not None \
            and not known_place(regions, value):
        raise _Bad("out_of_range", f"'{key}': unknown city or district name {value!r}")


def _date(a: dict, key: str) -> None:
    """Mirrors DATE_PATTERN (`^\\d{4}-\\d{2}-\\d{2}$`) then `strptime(..., "%Y-%m-%d")` on a
    present, non-null date; no check against the task's date."""
    value = a.get(key)
    if value is None:
        return
    if not _DATE.match(value):
        raise _Bad("out_of_range", f"'{key}' must be a date in YYYY-MM-DD format, got {value!r}")
    try:
        datetime.strptime(value, "%Y-%m-%d")
    except ValueError:
        raise _Bad("out_of_range", f"'{key}' is not a real calendar date: {value!r}") from None


def _clock(a: dict, key: str) -> None:
    """Mirrors `_validate_time_format` on a non-null time: TIME_PATTERN (`^\\d{2}:\\d{2}$`),
    then hour 0-23 and minute 0-59."""
    value = a.get(key)
    if value is None:
        return
    if not _CLOCK.match(value):
        raise _Bad("out_of_range", f"'{key}' must be a time in HH:MM format, got {value!r}")
    hour, minute = (int(part) for part in value.split(":"))
    if not 0 <= hour <= 23 or not 0 <= minute <= 59:
        raise _Bad("out_of_range", f"'{key}' is not a valid time of day: {value!r}")


def _time_window(a: dict) -> None:
    """Mirrors `depart_time_start > depart_time_end` (a string comparison) when both are set."""
    start, end = a.get("depart_time_start"), a.get("depart_time_end")
    if start is not None and end is not None and start > end:
        raise _Bad("out_of_range", "'depart_time_start' must not be later than "
                                   "'depart_time_end'")


def _choice(a: dict, key: str, allowed: tuple[str, ...]) -> None:
    """Mirrors the `valid_*_values` / `valid_modes` lists on a present, non-null value."""
    value = a.get(key)
    if value is not None and value not in allowed:
        raise _Bad("bad_enum", f"'{key}' must be one of {', '.join(allowed)}; got {value!r}")


def _bounds(a: dict, key: str, lo: float, hi: float | None = None, *,
            exclusive: bool = False) -> None:
    """Mirrors the range checks on a present, non-null number (`v < lo or v > hi`; with
    `exclusive`, `v <= lo`)."""
    value = a.get(key)
    if value is None:
        return
    if (value <= lo if exclusive else value < lo) or (hi is not None and value > hi):
        if exclusive:
            span = f"greater than {lo}"
        else:
            span = f"between {lo} and {hi}" if hi is not None else f"at least {lo}"
        raise _Bad("out_of_range", f"'{key}' must be {span}, got {value}")


def _coordinate(text: str, key: str) -> None:
    """Mirrors `_validate_coordinate` / `_validate_location_coordinate`: exactly two
    comma-separated parts, both float()-able, longitude (first) in [-180, 180], latitude in
    [-90, 90]."""
    parts = text.split(",")
    if len(parts) != 2:
        raise _Bad("out_of_range", f"'{key}' must be \"longitude,latitude\", got {text!r}")
    try:
        lon, lat = float(parts[0].strip()), float(parts[1].strip())
    except ValueError:
        raise _Bad("out_of_range", f"'{key}': coordinates must be numbers, got {text!r}") \
            from None
    if not -180 <= lon <= 180:
        raise _Bad("out_of_range", f"'{key}': longitude must be within -180..180, got {lon}")
    if not -90 <= lat <= 90:
        raise _Bad("out_of_range", f"'{key}': latitude must be within -90..90, got {lat}")


def _endpoint(a: dict, key: str) -> None:
    """Mirrors the route tools' origin/destination and search_poi's `location`: when present
    and non-null, non-blank; the stripped value is checked as a coordinate only when its first
    three characters are digits (otherwise it is a place name and not checked)."""
    value = a.get(key)
    if value is None:
        return
    if not value or not value.strip():
        raise _Bad("missing_required", f"'{key}' must not be empty")
    value = value.strip()
    if len(value) >= 3 and value[:3].isdigit():
        _coordinate(value, key)


def _geo(a: dict, regions: RegionTable | None) -> None:
    _nonblank(a, "address")


def _weather(a: dict, regions: RegionTable | None) -> None:
    _city(a, "location", regions)
    _date(a, "date")
    _bounds(a, "days", 0, 4)  # at most 5 days in all (days + 1)


def _flights(a: dict, regions: RegionTable | None) -> None:
    _city(a, "origin", regions)
    _city(a, "destination", regions)
    _date(a, "date")
    _clock(a, "depart_time_start")
    _clock(a, "depart_time_end")
    _time_window(a)
    _choice(a, "sort_by", FLIGHT_SORTS)


def _trains(a: dict, regions: RegionTable | None) -> None:
    _city(a, "origin", regions)
    _city(a, "destination", regions)
    _date(a, "date")
    _clock(a, "depart_time_start")
    _clock(a, "depart_time_end")
    _time_window(a)
    _choice(a, "sort_by", TRAIN_SORTS)
    _choice(a, "train_type_filter", TRAIN_TYPES)


def _web(a: dict, regions: RegionTable | None) -> None:
    _nonblank(a, "query")


def _poi(a: dict, regions: RegionTable | None) -> None:
    _nonblank(a, "keywords")
    _city(a, "city", regions)
    _choice(a, "sort_by", POI_SORTS)
    _bounds(a, "page_size", 1, 20)
    _bounds(a, "page", 1)
    _bounds(a, "radius_km", 0, exclusive=True)
    _bounds(a, "price_min", 0)
    _bounds(a, "price_max", 0)
    low, high = a.get("price_min"), a.get("price_max")
    if low is not None and high is not None and low > high:
        raise _Bad("out_of_range", "'price_min' must not be greater than 'price_max'")
    _endpoint(a, "location")


def _poi_detail(a: dict, regions: RegionTable | None) -> None:
    _nonblank(a, "id")


def _plan_route(a: dict, regions: RegionTable | None) -> None:
    _endpoint(a, "origin")
    _endpoint(a, "destination")
    _choice(a, "mode", ROUTE_MODES)
    _date(a, "date")
    _clock(a, "time")
    _optional_city(a, "city", regions)
    if a.get("mode", "transit") == "transit" and not a.get("city"):
        raise _Bad("missing_required", "'city' is required when mode is transit (the default)")


def _compare_routes(a: dict, regions: RegionTable | None) -> None:
    _endpoint(a, "origin")
    _endpoint(a, "destination")
    _optional_city(a, "city", regions)


def _along_route(a: dict, regions: RegionTable | None) -> None:
    _endpoint(a, "origin")
    _endpoint(a, "destination")
    _nonblank(a, "keywords")
    _choice(a, "mode", ALONG_ROUTE_MODES)
    _bounds(a, "route_range", 1, 3000)
    _bounds(a, "route_index", 1)
    _bounds(a, "poi_limit", 1, 50)
    _optional_city(a, "city", regions)


_RULES = {
    "maps_geo": _geo, "maps_weather": _weather, "travel_search_flights": _flights,
    "travel_search_trains": _trains, "web_search": _web, "search_poi": _poi,
    "get_poi_detail": _poi_detail, "plan_route": _plan_route,
    "compare_routes": _compare_routes, "search_along_route": _along_route,
}


def validate(tool: str, args: dict[str, Any], parameters: dict, task_time: str = "",
             regions: RegionTable | None = None) -> Failure | None:
    """The sandbox's `Validator`: None when the call is valid, else (category, error JSON).

    `task_time` is unused (the reference checks no date against the task's time); a tool
    without rules here gets the generic schema checks only.
    """
    bad = _schema_failure(args, parameters)
    if bad is not None:
        return bad
    rule = _RULES.get(tool)
    if rule is None:
        return None
    try:
        rule(args, regions)
    except _Bad as exc:
        return _fail(exc.category, exc.message)
    except Exception as exc:  # noqa: BLE001 - only reachable with a schema unlike the reference's
        return _fail("wrong_type", f"invalid argument value ({type(exc).__name__}: {exc})")
    return None


def check(tool: str, args: dict[str, Any], parameters: dict,
          regions: RegionTable | None = None) -> str:
    """The reference's contract: "" when the call is valid, else the `{"error": ...}` text."""
    bad = validate(tool, args, parameters, "", regions)
    return "" if bad is None else bad[1]


def place_table(setting: str, data_root: str | Path | None
                ) -> tuple[RegionTable | None, dict[str, Any]]:
    """The division table city names are checked against (`sandbox.adcode_table`: "off" = no
    check, a path = that table, "" = `<data_root>/adcode.txt` when present, else no check)."""
    if setting == "off":
        return None, {"adcode_checks": False, "adcode_source": "off (sandbox.adcode_table)"}
    if setting:
        path, source = Path(setting), "sandbox.adcode_table"
    elif data_root is not None and (Path(data_root) / "adcode.txt").is_file():
        path, source = Path(data_root) / "adcode.txt", "dataset"
    else:
        return None, {"adcode_checks": False,
                      "adcode_source": "no adcode.txt next to the data: city names unchecked"}
    try:
        table = load_regions(path)
    except AdcodeTableError as exc:
        raise BenchmarkError(f"sandbox: {exc} (needed to check GroupTravelBench city names; "
                             "set sandbox.adcode_table = PATH, or \"off\" to skip that check)"
                             ) from None
    return table, {"adcode_checks": True, "adcode_source": source, "adcode_table": table.path,
                   "adcode_sha256": table.sha256, "adcode_names": len(table)}


def validator(request: EnvironmentRequest) -> tuple[Validator, dict[str, Any]]:
    """Per-run factory for `CachedSandbox`: the reference's rules with the run's division
    table, and their description for the manifest. `sandbox.validation` is not read: the
    reference's checks already include the schema types, so "strict" would add nothing."""
    ts = request.taskset
    regions, info = place_table(request.config.sandbox.adcode_table,
                                ts.files[0].parent if ts.files else None)
    return partial(validate, regions=regions), {"validation": "grouptravelbench-reference",
                                                **info}
