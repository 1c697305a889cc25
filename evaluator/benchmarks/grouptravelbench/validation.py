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

The texts are the run's prompt set's (`tool_errors.py`): each failed check is a catalogue key
with its fields (and the argument it concerns, for a text worded per argument). With
`reference=True` (`options.rendering = "reference"`) two more of the reference's ways apply: an
argument named like a parameter of its dispatcher (`self`, `name`) fails before the tool is
reached (`reserved_argument`), and the checks read the arguments in sorted order, as the
reference's tools read them back from `json.dumps(..., sort_keys=True)` (which unknown argument
or wrong type is reported first). Which calls are errors depends on neither.

`validate` has the sandbox's `Validator` signature and returns None or (error category, the
text the agent sees); `check` gives the reference's own contract ("" when valid, else the error
text); the per-run factory is `environment.validator`.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from cache_store.keys import params_json
from evaluator.benchmarks.travelbench.adcode import RegionTable

from .tool_errors import CATEGORY, RESERVED, ErrorCatalogue, builtin

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
    """A failed check: its catalogue key, the argument it concerns and the text's fields."""

    def __init__(self, check: str, argument: str = "", /, **fields: Any) -> None:
        super().__init__(check)
        self.key, self.argument, self.fields = check, argument, fields


def _quoted(names: Any) -> str:
    return ", ".join(f"'{n}'" for n in sorted(names))


def _value(a: dict, key: str) -> dict[str, Any]:
    """The fields of a check on one argument's value."""
    return {"key": key, "value": a.get(key), "value_repr": repr(a.get(key))}


# -- 1. generic schema checks ----------------------------------------------------------------
def _is_type(value: Any, typ: Any) -> bool:
    """The reference's `_check_type`: an unknown (or absent) type name accepts anything."""
    expected = _PY_TYPES.get(typ) if isinstance(typ, str) else None
    return expected is None or isinstance(value, expected)


def _type_check(key: str, value: Any, spec: dict) -> None:
    """Mirrors the type loop: `anyOf` (null allowed only via a null branch), else `type`."""
    got = type(value).__name__
    if isinstance(spec.get("anyOf"), list):
        kinds = [o.get("type") if isinstance(o, dict) else None for o in spec["anyOf"]]
        if value is None:
            if "null" not in kinds:
                raise _Bad("null_not_allowed", key, key=key)
            return
        others = [k for k in kinds if k != "null"]
        if not any(_is_type(value, k) for k in others):
            raise _Bad("wrong_type_any", key, key=key, expected=" or ".join(map(str, others)),
                       expected_repr=repr(others), got=got)
        return
    typ = spec.get("type")
    if typ and not _is_type(value, typ):
        raise _Bad("wrong_type", key, key=key, expected=typ, got=got)


def _names(key: str, args: dict[str, Any], props: dict) -> dict[str, Any]:
    """The fields of an unknown (or reserved) argument `key`."""
    return {"key": key, "accepted": ", ".join(props), "accepted_repr": repr(list(props)),
            "accepted_quoted": _quoted(props),
            "unknown_quoted": _quoted(k for k in args if k not in props)}


def _schema_check(args: dict[str, Any], parameters: dict) -> None:
    """Unknown arguments, then missing required ones, then JSON types (the reference's order)."""
    props = parameters.get("properties") or {}
    for key in args:
        if key not in props:
            raise _Bad("unknown_parameter", key, **_names(key, args, props))
    required = parameters.get("required") or []
    missing = [k for k in required if k not in args]
    if missing:
        raise _Bad("missing_required", missing[0], key=missing[0],
                   missing_quoted=_quoted(set(missing)))
    for key, value in args.items():
        _type_check(key, value, props[key] if isinstance(props[key], dict) else {})


# -- 2. the per-tool rules -------------------------------------------------------------------
def _nonblank(a: dict, key: str) -> None:
    """Mirrors `if not value or not value.strip()` on a present string argument."""
    if key in a and (not a[key] or not a[key].strip()):
        raise _Bad("empty", key, key=key)


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
        raise _Bad("city_unknown", key, **_value(a, key))


def _optional_city(a: dict, key: str, regions: RegionTable | None) -> None:
    """Mirrors the route tools' `city` check: when not null and not blank, a known name."""
    value = a.get(key)
    if value is not None and value.strip() and regions is not None \
            and not known_place(regions, value):
        raise _Bad("city_unknown", key, **_value(a, key))


def _date(a: dict, key: str) -> None:
    """Mirrors DATE_PATTERN (`^\\d{4}-\\d{2}-\\d{2}$`) then `strptime(..., "%Y-%m-%d")` on a
    present, non-null date; no check against the task's date."""
    value = a.get(key)
    if value is None:
        return
    if not _DATE.match(value):
        raise _Bad("date_format", key, **_value(a, key))
    try:
        datetime.strptime(value, "%Y-%m-%d")
    except ValueError:
        raise _Bad("date_invalid", key, **_value(a, key)) from None


def _clock(a: dict, key: str) -> None:
    """Mirrors `_validate_time_format` on a non-null time: TIME_PATTERN (`^\\d{2}:\\d{2}$`),
    then hour 0-23, then minute 0-59."""
    value = a.get(key)
    if value is None:
        return
    if not _CLOCK.match(value):
        raise _Bad("time_format", key, **_value(a, key))
    hour, minute = (int(part) for part in value.split(":"))
    if not 0 <= hour <= 23:
        raise _Bad("time_hour", key, **_value(a, key))
    if not 0 <= minute <= 59:
        raise _Bad("time_minute", key, **_value(a, key))


def _time_window(a: dict) -> None:
    """Mirrors `depart_time_start > depart_time_end` (a string comparison) when both are set."""
    start, end = a.get("depart_time_start"), a.get("depart_time_end")
    if start is not None and end is not None and start > end:
        raise _Bad("time_window")


def _choice(a: dict, key: str, allowed: tuple[str, ...]) -> None:
    """Mirrors the `valid_*_values` / `valid_modes` lists on a present, non-null value."""
    value = a.get(key)
    if value is not None and value not in allowed:
        raise _Bad("choice", key, allowed=", ".join(allowed), allowed_repr=repr(list(allowed)),
                   **_value(a, key))


def _bounds(a: dict, key: str, lo: float, hi: float | None = None, *,
            exclusive: bool = False) -> None:
    """Mirrors the range checks on a present, non-null number (`v < lo or v > hi`; with
    `exclusive`, `v <= lo`): `range_low` / `range_high` for a two-sided range, `minimum` or
    `above` for a one-sided one."""
    value = a.get(key)
    if value is None:
        return
    fields = {"key": key, "low": lo, "value": value}
    if exclusive:
        if value <= lo:
            raise _Bad("above", key, **fields)
    elif hi is None:
        if value < lo:
            raise _Bad("minimum", key, **fields)
    elif value < lo or value > hi:
        raise _Bad("range_low" if value < lo else "range_high", key, high=hi, **fields)


def _coordinate(text: str, key: str) -> None:
    """Mirrors `_validate_coordinate` / `_validate_location_coordinate`: exactly two
    comma-separated parts, both float()-able, longitude (first) in [-180, 180], latitude in
    [-90, 90]."""
    fields = {"key": key, "value": text, "value_repr": repr(text)}
    parts = text.split(",")
    if len(parts) != 2:
        raise _Bad("coordinate_format", key, **fields)
    try:
        lon, lat = float(parts[0].strip()), float(parts[1].strip())
    except ValueError:
        raise _Bad("coordinate_numbers", key, **fields) from None
    if not -180 <= lon <= 180:
        raise _Bad("longitude_range", key, lon=lon, **fields)
    if not -90 <= lat <= 90:
        raise _Bad("latitude_range", key, lat=lat, **fields)


def _endpoint(a: dict, key: str) -> None:
    """Mirrors the route tools' origin/destination and search_poi's `location`: when present
    and non-null, non-blank; the stripped value is checked as a coordinate only when its first
    three characters are digits (otherwise it is a place name and not checked)."""
    value = a.get(key)
    if value is None:
        return
    if not value or not value.strip():
        raise _Bad("empty", key, key=key)
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
        raise _Bad("price_order")
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
        raise _Bad("transit_city")


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
             regions: RegionTable | None = None, texts: ErrorCatalogue | None = None,
             reference: bool = False) -> Failure | None:
    """The sandbox's `Validator`: None when the call is valid, else (category, the text the
    agent reads, from `texts`: default the built-in catalogue).

    `task_time` is unused (the reference checks no date against the task's time); a tool
    without rules here gets the generic schema checks only. `reference`: the reference's
    dispatcher collisions and argument order (module doc).
    """
    texts = texts or builtin()
    props = parameters.get("properties") or {}
    try:
        if reference:
            for key in args:
                if key in RESERVED:
                    raise _Bad("reserved_argument", key, **_names(key, args, props))
            args = json.loads(params_json(args))
        _schema_check(args, parameters)
        rule = _RULES.get(tool)
        if rule is not None:
            rule(args, regions)
    except _Bad as bad:
        return CATEGORY[bad.key], texts.text(tool, bad.key, argument=bad.argument, **bad.fields)
    except Exception as exc:  # noqa: BLE001 - only reachable with a schema unlike the reference's
        return CATEGORY["invalid_value"], texts.text(tool, "invalid_value", error=exc,
                                                    type=type(exc).__name__)
    return None


def check(tool: str, args: dict[str, Any], parameters: dict,
          regions: RegionTable | None = None) -> str:
    """The reference's contract: "" when the call is valid, else the error text."""
    bad = validate(tool, args, parameters, "", regions)
    return "" if bad is None else bad[1]
