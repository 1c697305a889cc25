"""Argument validation: which tool calls count as tool errors (TravelBench notes §4), and the
text the agent reads about one (`tool_errors.py`: the prompt set's catalogue).

Modes:
- "reference" (default): exactly the calls the reference counts as errors. Its validators run on
  Python values, so this module evaluates the same expressions on the same values in the same
  order: a missing optional argument takes the reference's default, an explicit `null` does not
  (so `days: null` fails where a comparison meets None), and any expression that raises in the
  reference (a string compared with a number, `.strip()` on a number, an unknown
  `traffic_aware` key) raises here too and becomes the `execution_error` text with the
  exception's own message, as the reference's agent loop reports it. What the reference does
  not check (enums, most JSON types, `preference`, `buffer_radius`, `transport_mode`, the
  ranking list's region) stays unchecked.
- "strict": the JSON-schema checks (types, `null` where the schema does not allow it, enums,
  minimum/maximum, array items) first, then every reference rule: a superset of "reference".

Place names (trains origin/destination, places region) are resolved with a `RegionTable`
(`adcode.py`); with `regions=None` that one lookup is skipped, everything else runs.
`validate` returns None or (category, the text the agent reads). Each text gets every field its
catalogue key has (`tool_errors.FIELDS`): the reference's renderings of the values (sorted,
quoted name lists; values as an f-string writes them) and this project's (names in the
schema's order, `repr` of a value), so both catalogues are data. With `reference=True` (the
reference's rendering) two more of the reference's ways apply, which change no verdict: the
checks read the arguments back from their sorted JSON, and an argument named `self`, `name` or
`time` collides with its dispatcher's parameters and fails before any check.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any, Literal

from cache_store.keys import params_json

from .adcode import RegionTable
from .tool_errors import ToolErrorTexts, builtin

Failure = tuple[str, str]
Mode = Literal["reference", "strict"]
MODES: tuple[str, ...] = ("reference", "strict")

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "number": (int, float), "integer": (int,), "boolean": (bool,),
    "array": (list,), "object": (dict,),
}
# membership is tested on dicts, as the reference does (the same exception for an unhashable)
_ROUTE_MODES = dict.fromkeys(("driving", "walking", "bicycling", "transit", "motorcycle",
                              "truck"), True)
_PREFERENCES = dict.fromkeys(("", "prefer_highways", "avoid_highways", "avoid_tolls",
                              "prefer_main_roads", "avoid_highways+avoid_tolls"), True)
_STRATEGIES = {False: _PREFERENCES, True: _PREFERENCES}
RESERVED = ("self", "name", "time")
"""Argument names that collide with the reference's dispatcher `execute_tool(self, name, time,
**arguments)`: such a call fails there before its tool is reached."""


class _Bad(Exception):
    """A refused call: its category, its catalogue key and the values for the text."""

    def __init__(self, category: str, key: str, **values: Any) -> None:
        super().__init__(key)
        self.category, self.key, self.values = category, key, values


# -- strict: JSON-schema checks -------------------------------------------------------------
def _type_ok(value: Any, typ: str | list | None) -> bool:
    if typ is None:
        return True
    if isinstance(typ, list):
        return any(_type_ok(value, t) for t in typ)
    if typ == "null":
        return value is None
    if isinstance(value, bool) and typ in ("number", "integer"):
        return False
    if typ == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES.get(typ, (object,)))


def _check_schema(name: str, value: Any, schema: dict) -> None:
    if not _type_ok(value, schema.get("type")):
        raise _Bad("wrong_type", "schema_type", name=name, expected=schema.get("type"),
                   got=type(value).__name__)
    if "enum" in schema and value not in schema["enum"]:
        raise _Bad("bad_enum", "schema_enum", name=name, value=repr(value),
                   allowed=schema["enum"])
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        lo, hi = schema.get("minimum"), schema.get("maximum")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise _Bad("out_of_range", "schema_range", name=name, low=lo, high=hi, value=value)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            _check_schema(f"{name}[{i}]", item, schema["items"])


# -- the reference's per-tool rules, on Python values ---------------------------------------
def _range(a: dict, key: str, default: Any, lo: int, hi: int, what: str) -> None:
    """`v < lo or v > hi` with v = a.get(key, default); None/str/list raise TypeError."""
    v = a.get(key, default)
    if v < lo or v > hi:
        raise _Bad("out_of_range", what, **{key: v}, low=lo, high=hi)


def _coord(value: Any, **names: Any) -> dict[str, Any]:
    """The fields of a text about one coordinate: as written and as `repr`."""
    return {**names, "coord": value, "coord_repr": repr(value)}


def _at_least_one(a: dict, key: str, default: Any) -> None:
    v = a.get(key, default)
    if v < 1:
        raise _Bad("out_of_range", "limit_below_one", **{key: v})


def _date(value: Any, task_time: str) -> None:
    try:
        day = datetime.strptime(value, "%Y-%m-%d")  # a non-string raises TypeError
    except ValueError:
        raise _Bad("out_of_range", "date_format", date=value, date_repr=repr(value)) from None
    try:
        now = datetime.fromisoformat(task_time.replace(" ", "T") if " " in task_time
                                     else task_time)
        last = now + timedelta(days=15)
        if day.date() > last.date():
            raise _Bad("out_of_range", "date_too_late", date=value,
                       today=now.strftime("%Y-%m-%d"), last_day=last.strftime("%Y-%m-%d"))
    except _Bad:
        raise
    except Exception as exc:  # noqa: BLE001 - the reference reports any failure here
        raise _Bad("out_of_range", "date_check_failed", error=str(exc),
                   time_repr=repr(task_time)) from None


def _region(value: Any, key: str, regions: RegionTable | None, texts: ToolErrorTexts,
            tool: str, empty_is_error: bool) -> tuple[str, str]:
    """The reference's place-name resolution: ("", "") when it resolves (or is skipped), else
    (category, the failure's text, unwrapped). A non-string raises AttributeError, as there."""
    names = {"key": key, "region": value, "region_repr": repr(value)}
    if not value:
        if not empty_is_error:
            return "", ""
        return "missing_required", texts.text(tool, "region_empty", **names)
    name = value.strip()
    if regions is None:
        return "", ""
    found = regions.lookup(name)
    if found.ok:
        return "", ""
    if found.status == "none":
        return "out_of_range", texts.text(tool, "region_unknown", **names)
    if found.status == "ambiguous" and found.candidates:
        shown = ", ".join(f"{n}({regions.full[n]})" for n in found.candidates)
        return "out_of_range", texts.text(tool, "region_ambiguous", **names, candidates=shown,
                                          candidate_names=", ".join(found.candidates))
    return "out_of_range", texts.text(tool, "region_failed", note=found.status)


def _pair(value: Any) -> list[str]:
    """The reference's coordinate parse: strip, split on commas, exactly two parts (ValueError
    otherwise; a non-string raises AttributeError)."""
    parts = value.strip().split(",")
    if len(parts) != 2:
        raise ValueError(value)
    return parts


def _price_dependencies(a: dict, sort_rule: bool) -> None:
    lo, hi, category = a.get("price_min"), a.get("price_max"), a.get("price_category")
    if (lo is not None or hi is not None) and not category:
        raise _Bad("missing_required", "price_category_required")
    if sort_rule and a.get("sort_by", "weight") in ["price:a", "price:d"] and not category:
        raise _Bad("missing_required", "price_sort_needs_category")


def _price_ranges(a: dict, radius_default: int) -> None:
    _range(a, "radius", radius_default, 100, 20000, "radius_out_of_range")
    rating = a.get("min_rating")
    if rating is not None and (rating < 0 or rating > 10):
        raise _Bad("out_of_range", "min_rating_out_of_range", min_rating=rating)
    lo, hi = a.get("price_min"), a.get("price_max")
    if lo is not None and lo < 0:
        raise _Bad("out_of_range", "price_min_negative", price_min=lo)
    if hi is not None and hi < 0:
        raise _Bad("out_of_range", "price_max_negative", price_max=hi)
    if lo is not None and hi is not None and lo > hi:
        raise _Bad("out_of_range", "price_order", price_min=lo, price_max=hi)
    _at_least_one(a, "limit", 10)


def _flights(a: dict, t: str, regions: RegionTable | None, texts: ToolErrorTexts) -> None:
    origin, destination, date = a["origin"], a["destination"], a["date"]
    _range(a, "days", 0, 0, 15, "days_out_of_range")
    if not origin or not destination:
        raise _Bad("missing_required", "endpoints_empty")
    _date(date, t)


def _trains(a: dict, t: str, regions: RegionTable | None, texts: ToolErrorTexts) -> None:
    origin, destination, date = a["origin"], a["destination"], a["date"]
    _range(a, "days", 0, 0, 15, "days_out_of_range")
    tool = "travel_search_trains"
    for key, value in (("origin", origin), ("destination", destination)):
        category, error = _region(value, key, regions, texts, tool, True)
        if error:
            raise _Bad(category, f"{key}_unresolved", error=error)
    _date(date, t)


def _forecast(a: dict, t: str, regions: RegionTable | None, texts: ToolErrorTexts) -> None:
    if a.get("days") is not None:
        _range(a, "days", None, 1, 15, "days_out_of_range")
    if a.get("date") is not None:
        _date(a["date"], t)


def _routes(a: dict, t: str, regions: RegionTable | None, texts: ToolErrorTexts) -> None:
    origin, destination = a["origin"], a["destination"]
    stops, modes = a.get("intermediates", []), a.get("modes", ["driving"])
    if a.get("departure_time", "") and a.get("arrival_time", ""):
        raise _Bad("out_of_range", "times_exclusive")
    for key, value in (("origin", origin), ("destination", destination)):
        try:
            _pair(value)
        except ValueError:
            raise _Bad("out_of_range", f"{key}_format", **{key: value},
                       **{f"{key}_repr": repr(value)}) from None
    if stops:
        for i, stop in enumerate(stops):  # a string iterates its characters, as there
            try:
                _pair(stop)
            except ValueError:
                raise _Bad("out_of_range", "waypoint_format", **_coord(stop, n=i + 1, index=i)
                           ) from None
    for mode in modes:  # null raises TypeError
        if mode not in _ROUTE_MODES:
            raise _Bad("bad_enum", "mode_unsupported", mode=mode)
    traffic = a.get("traffic_aware", False) or False
    preference = a.get("preference", "") or ""
    try:
        strategies = _STRATEGIES[traffic]  # an unhashable raises TypeError, as there
    except KeyError as exc:  # there too: the message is the key's repr
        raise _Bad("wrong_type", "traffic_aware_invalid", error=str(exc),
                   value_repr=repr(a["traffic_aware"])) from None
    strategies.get(preference)  # an invalid preference falls back; an unhashable raises


def _places(a: dict, t: str, regions: RegionTable | None, texts: ToolErrorTexts) -> None:
    _price_dependencies(a, sort_rule=True)
    center, region = a.get("center", ""), a.get("region", "")
    _price_ranges(a, 5000)
    if bool(center):
        try:
            lat, lon = center.split(",")
            float(lat.strip()), float(lon.strip())
        except Exception:  # noqa: BLE001 - any failure is a format error there
            raise _Bad("out_of_range", "center_format", center=center,
                       center_repr=repr(center)) from None
    elif region:
        category, error = _region(region, "region", regions, texts, "map_search_places", False)
        if error:
            raise _Bad(category, "region_unresolved", error=error)


def _along_route(a: dict, t: str, regions: RegionTable | None, texts: ToolErrorTexts) -> None:
    origin, destination = a["origin"], a["destination"]
    _at_least_one(a, "limit", 10)
    for key, value in (("origin", origin), ("destination", destination)):
        try:
            lat, lon = value.split(",")  # exactly two parts (no strip before the split)
            lat.strip(), lon.strip()
        except Exception:  # noqa: BLE001 - any failure is a format error there
            raise _Bad("out_of_range", f"{key}_format", **{key: value},
                       **{f"{key}_repr": repr(value)}) from None


def _central(a: dict, t: str, regions: RegionTable | None, texts: ToolErrorTexts) -> None:
    _price_dependencies(a, sort_rule=False)
    origins = a["origins"]
    _price_ranges(a, 10000)
    if not origins or len(origins) < 2:  # len() of a number raises TypeError
        raise _Bad("out_of_range", "origins_too_few")
    for i, point in enumerate(origins):
        try:
            lat, lon = _pair(point)
        except ValueError:
            raise _Bad("out_of_range", "origin_point_format", **_coord(point, n=i + 1, index=i)
                       ) from None
        try:
            float(lat.strip()), float(lon.strip())
        except ValueError:  # the same text there; its own here
            raise _Bad("out_of_range", "origin_point_not_numeric",
                       **_coord(point, n=i + 1, index=i)) from None


def _ranking(a: dict, t: str, regions: RegionTable | None, texts: ToolErrorTexts) -> None:
    _range(a, "max_lists", 5, 1, 10, "max_lists_out_of_range")
    _range(a, "max_items", 3, 1, 20, "max_items_out_of_range")


_RULES = {
    "travel_search_flights": _flights, "travel_search_trains": _trains,
    "weather_forecast_days": _forecast, "map_compute_routes": _routes,
    "map_search_places": _places, "map_search_along_route": _along_route,
    "map_search_central_places": _central, "map_search_ranking_list": _ranking,
}
_UNQUOTED_LISTS = frozenset({"web_search"})
"""Tools whose reference lists argument names without quotes in its messages."""


def _names(tool: str, names: Any) -> str:
    if tool in _UNQUOTED_LISTS:
        return ", ".join(sorted(names))
    return ", ".join(f"'{p}'" for p in sorted(names))


def _lists(tool: str, **lists: list[str]) -> dict[str, str]:
    """Each list as the reference words it (`name`) and in its own order (`name_names`)."""
    out = {}
    for name, items in lists.items():
        out[name], out[f"{name}_names"] = _names(tool, items), ", ".join(items)
    return out


def validate(tool: str, args: dict[str, Any], parameters: dict, task_time: str,
             mode: str = "reference", regions: RegionTable | None = None,
             texts: ToolErrorTexts | None = None, reference: bool = False) -> Failure | None:
    """Validate one call's arguments against its schema (`parameters`) and the tool's rules;
    None, or (category, the text the agent reads: `texts`, default the built-in catalogue).
    `reference`: the reference's argument order and dispatcher collisions (module doc)."""
    if mode not in MODES:
        raise ValueError(f"validation mode {mode!r}: expected one of {', '.join(MODES)}")
    texts = texts or builtin()
    props: dict = parameters.get("properties", {})
    unknown = [k for k in args if k not in props]
    if reference:
        for key in args:
            if key in RESERVED:
                return "unknown_parameter", texts.text(
                    tool, "reserved_argument", key=key, **_lists(tool, unknown=unknown,
                                                                  valid=list(props)))
    try:
        if reference:  # the reference's checks read the arguments back from sorted JSON
            args = json.loads(params_json(args))
        missing = [k for k in parameters.get("required", []) if k not in args]
        if missing:
            raise _Bad("missing_required", "missing_parameters", **_lists(tool, missing=missing))
        if unknown:
            raise _Bad("unknown_parameter", "unknown_parameters",
                       **_lists(tool, unknown=unknown, valid=list(props)))
        if mode == "strict":
            for key, value in args.items():
                _check_schema(key, value, props[key])
        rule = _RULES.get(tool)
        if rule is not None:
            rule(args, task_time, regions, texts)
    except _Bad as bad:
        return bad.category, texts.text(tool, bad.key, **bad.values)
    except Exception as exc:  # noqa: BLE001 - the reference raises here: an error there too
        return "wrong_type", texts.text(tool, "execution_error", error=str(exc),
                                        type=type(exc).__name__)
    return None
