"""Argument validation: which tool calls count as tool errors (TravelBench notes §4).

Modes:
- "reference" (default): exactly the calls the reference counts as errors. Its validators run on
  Python values, so this module evaluates the same expressions on the same values: a missing
  optional argument takes the reference's default, an explicit `null` does not (so `days: null`
  fails where a comparison meets None), and any expression that would raise in the reference
  (a string compared with a number, `.strip()` on a number, an unhashable `traffic_aware`)
  is an error too. What the reference does not check (enums, most JSON types, `preference`,
  `buffer_radius`, `transport_mode`, the ranking list's region) stays unchecked.
- "strict": the JSON-schema checks (types, `null` where the schema does not allow it, enums,
  minimum/maximum, array items) first, then every reference rule: a superset of "reference".

Place names (trains origin/destination, places region) are resolved with a `RegionTable`
(`adcode.py`); with `regions=None` that one lookup is skipped, everything else runs.
`validate` returns None or (category, message); the message is the `{"error": ...}` JSON text
the agent sees.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any, Literal

from .adcode import RegionTable

Failure = tuple[str, str]
Mode = Literal["reference", "strict"]
MODES: tuple[str, ...] = ("reference", "strict")

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "number": (int, float), "integer": (int,), "boolean": (bool,),
    "array": (list,), "object": (dict,),
}
_ROUTE_MODES = frozenset({"driving", "walking", "bicycling", "transit", "motorcycle", "truck"})
_TRAFFIC_KEYS = frozenset({False, True})  # the reference indexes a {False:…, True:…} table


class _Bad(Exception):
    def __init__(self, category: str, message: str) -> None:
        super().__init__(message)
        self.category, self.message = category, message


def _fail(category: str, message: str) -> Failure:
    return category, json.dumps({"error": message}, ensure_ascii=False)


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


def _check_schema(name: str, value: Any, schema: dict) -> Failure | None:
    if not _type_ok(value, schema.get("type")):
        return _fail("wrong_type", f"参数 {name} 类型错误: 需要 {schema.get('type')}, "
                                   f"得到 {type(value).__name__}")
    if "enum" in schema and value not in schema["enum"]:
        return _fail("bad_enum", f"参数 {name} 取值 {value!r} 不在允许范围 {schema['enum']}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        lo, hi = schema.get("minimum"), schema.get("maximum")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            return _fail("out_of_range", f"参数 {name} 超出范围 [{lo}, {hi}]: {value}")
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            bad = _check_schema(f"{name}[{i}]", item, schema["items"])
            if bad:
                return bad
    return None


# -- the reference's per-tool rules, on Python values ---------------------------------------
def _between(a: dict, key: str, default: Any, lo: float, hi: float | None) -> None:
    """`v < lo or v > hi` with v = a.get(key, default): None/str/list raise TypeError."""
    v = a.get(key, default)
    if v < lo or (hi is not None and v > hi):
        span = f"{lo} 到 {hi} 之间" if hi is not None else f"不小于 {lo}"
        raise _Bad("out_of_range", f"参数 {key} 应{span}, 当前为 {v}")


def _date(value: Any, task_time: str) -> None:
    try:
        day = datetime.strptime(value, "%Y-%m-%d")  # a non-string raises TypeError
    except ValueError:
        raise _Bad("out_of_range", f"日期格式应为 YYYY-MM-DD: {value!r}") from None
    try:
        last = datetime.fromisoformat(task_time.replace(" ", "T")) + timedelta(days=15)
    except Exception:  # noqa: BLE001 - the reference reports any failure here as an error
        raise _Bad("out_of_range", f"无法根据当前时间 {task_time!r} 检查日期") from None
    if day.date() > last.date():
        raise _Bad("out_of_range", f"日期 {value} 晚于可查询的最后一天 {last.date()}")


def _place(value: Any, key: str, regions: RegionTable | None) -> None:
    if not value:
        raise _Bad("missing_required", f"参数 {key} 不能为空")
    name = value.strip()  # a non-string raises AttributeError
    if regions is None:
        return
    found = regions.lookup(name)
    if found.status == "none":
        raise _Bad("out_of_range", f"参数 {key}: 无法识别的行政区名称 {value!r}")
    if found.status == "ambiguous":
        raise _Bad("out_of_range", f"参数 {key}: 行政区名称 {value!r} 有多个匹配 "
                                   f"({', '.join(found.candidates)} 等), 请使用完整名称")


def _pair(value: Any, key: str, floats: bool) -> None:
    """'lat,lon': after strip, exactly two comma-separated parts (floats where asked)."""
    parts = value.strip().split(",")  # a non-string raises AttributeError
    if len(parts) != 2:
        raise _Bad("out_of_range", f"参数 {key} 应为 \"latitude,longitude\": {value!r}")
    if floats:
        try:
            float(parts[0].strip()), float(parts[1].strip())
        except ValueError:
            raise _Bad("out_of_range", f"参数 {key} 的坐标不是数字: {value!r}") from None


def _prices(a: dict, sort_rule: bool) -> None:
    lo, hi, category = a.get("price_min"), a.get("price_max"), a.get("price_category")
    if (lo is not None or hi is not None) and not category:
        raise _Bad("missing_required", "使用 price_min/price_max 时必须指定 price_category")
    if sort_rule and a.get("sort_by", "weight") in ("price:a", "price:d") and not category:
        raise _Bad("missing_required", "按价格排序时必须指定 price_category")


def _price_ranges(a: dict) -> None:
    rating = a.get("min_rating")
    if rating is not None and (rating < 0 or rating > 10):
        raise _Bad("out_of_range", f"参数 min_rating 应在 0 到 10 之间, 当前为 {rating}")
    lo, hi = a.get("price_min"), a.get("price_max")
    if (lo is not None and lo < 0) or (hi is not None and hi < 0):
        raise _Bad("out_of_range", "价格不能为负数")
    if lo is not None and hi is not None and lo > hi:
        raise _Bad("out_of_range", f"price_min ({lo}) 不能大于 price_max ({hi})")


def _flights(a: dict, t: str, regions: RegionTable | None) -> None:
    _between(a, "days", 0, 0, 15)
    if not a["origin"] or not a["destination"]:
        raise _Bad("missing_required", "出发地和目的地不能为空")
    _date(a["date"], t)


def _trains(a: dict, t: str, regions: RegionTable | None) -> None:
    _between(a, "days", 0, 0, 15)
    _place(a["origin"], "origin", regions)
    _place(a["destination"], "destination", regions)
    _date(a["date"], t)


def _forecast(a: dict, t: str, regions: RegionTable | None) -> None:
    if a.get("days") is not None:
        _between(a, "days", None, 1, 15)
    if a.get("date") is not None:
        _date(a["date"], t)


def _routes(a: dict, t: str, regions: RegionTable | None) -> None:
    if a.get("departure_time", "") and a.get("arrival_time", ""):
        raise _Bad("out_of_range", "departure_time 与 arrival_time 不能同时使用")
    _pair(a["origin"], "origin", False)
    _pair(a["destination"], "destination", False)
    stops = a.get("intermediates", [])
    if stops:
        for i, stop in enumerate(stops):  # a string iterates its characters, as there
            _pair(stop, f"intermediates[{i}]", False)
    for mode in a.get("modes", ["driving"]):  # null raises TypeError
        if mode not in _ROUTE_MODES:
            raise _Bad("bad_enum", f"不支持的出行方式: {mode}")
    if (a.get("traffic_aware", False) or False) not in _TRAFFIC_KEYS:
        raise _Bad("wrong_type", f"参数 traffic_aware 应为布尔值: {a['traffic_aware']!r}")
    hash(a.get("preference", "") or "")  # an invalid preference falls back; unhashable raises


def _places(a: dict, t: str, regions: RegionTable | None) -> None:
    _prices(a, sort_rule=True)
    _between(a, "radius", 5000, 100, 20000)
    _price_ranges(a)
    _between(a, "limit", 10, 1, None)
    center = a.get("center", "")
    if center:
        try:
            lat, lon = center.split(",")
            float(lat.strip()), float(lon.strip())
        except Exception:  # noqa: BLE001 - any failure is a format error there
            raise _Bad("out_of_range", f"参数 center 应为 \"latitude,longitude\": {center!r}") \
                from None
    elif a.get("region", ""):
        _place(a["region"], "region", regions)


def _along_route(a: dict, t: str, regions: RegionTable | None) -> None:
    _between(a, "limit", 10, 1, None)
    for key in ("origin", "destination"):
        try:
            _lat, _lon = a[key].split(",")  # exactly two parts (no strip before split)
        except Exception:  # noqa: BLE001 - any failure is a format error there
            raise _Bad("out_of_range", f"参数 {key} 应为 \"latitude,longitude\": {a[key]!r}") \
                from None


def _central(a: dict, t: str, regions: RegionTable | None) -> None:
    _prices(a, sort_rule=False)
    _between(a, "radius", 10000, 100, 20000)
    _price_ranges(a)
    _between(a, "limit", 10, 1, None)
    origins = a["origins"]
    if not origins or len(origins) < 2:  # len() of a number raises TypeError
        raise _Bad("out_of_range", "origins 至少需要 2 个坐标点")
    for i, point in enumerate(origins):
        _pair(point, f"origins[{i}]", True)


def _ranking(a: dict, t: str, regions: RegionTable | None) -> None:
    _between(a, "max_lists", 5, 1, 10)
    _between(a, "max_items", 3, 1, 20)


_RULES = {
    "travel_search_flights": _flights, "travel_search_trains": _trains,
    "weather_forecast_days": _forecast, "map_compute_routes": _routes,
    "map_search_places": _places, "map_search_along_route": _along_route,
    "map_search_central_places": _central, "map_search_ranking_list": _ranking,
}


def validate(tool: str, args: dict[str, Any], parameters: dict, task_time: str,
             mode: str = "reference", regions: RegionTable | None = None) -> Failure | None:
    """Validate one call's arguments against its schema (`parameters`) and the tool's rules."""
    if mode not in MODES:
        raise ValueError(f"validation mode {mode!r}: expected one of {', '.join(MODES)}")
    props: dict = parameters.get("properties", {})
    missing = [k for k in parameters.get("required", []) if k not in args]
    if missing:
        return _fail("missing_required", f"缺少必填参数: {', '.join(missing)}")
    unknown = [k for k in args if k not in props]
    if unknown:
        return _fail("unknown_parameter", f"未知参数: {', '.join(unknown)}; "
                                          f"有效参数: {', '.join(props)}")
    if mode == "strict":
        for key, value in args.items():
            bad = _check_schema(key, value, props[key])
            if bad:
                return bad
    rule = _RULES.get(tool)
    if rule is None:
        return None
    try:
        rule(args, task_time, regions)
    except _Bad as bad:
        return _fail(bad.category, bad.message)
    except Exception as exc:  # noqa: BLE001 - the reference raises here: an error there too
        return _fail("wrong_type", f"参数类型错误: {type(exc).__name__}: {exc}")
    return None
