"""Argument validation: generic JSON-schema checks plus TravelBench's data-independent rules.

Modes: "reference" runs what the reference code checks (required, unknown parameter, the
per-tool rules of the notes §4, and type errors that would make the reference raise);
"strict" adds JSON-schema type and enum checks on every parameter. Administrative-division
resolution (trains origin/destination, places region) needs data we do not have: not checked.
Returns None or (category, message); the message is the `{"error": ...}` JSON the agent sees.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

Failure = tuple[str, str]
_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "number": (int, float), "integer": (int,), "boolean": (bool,),
    "array": (list,), "object": (dict,),
}


def _fail(category: str, message: str) -> Failure:
    return category, json.dumps({"error": message}, ensure_ascii=False)


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


def _num(args: dict, key: str, name: str) -> float | None:
    """A numeric argument for a range rule; a non-number makes the reference raise."""
    v = args.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise _Bad("wrong_type", f"参数 {key} 必须是数字 ({name})")
    return v


class _Bad(Exception):
    def __init__(self, category: str, message: str) -> None:
        self.category, self.message = category, message


def _range(args: dict, key: str, lo: float | None, hi: float | None, default: Any = None) -> None:
    v = _num(args, key, key)
    v = default if v is None else v
    if v is None:
        return
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise _Bad("out_of_range", f"参数 {key} 必须在 {lo} 到 {hi} 之间, 当前为 {v}")


def _date(args: dict, task_time: str) -> None:
    v = args.get("date")
    if v is None:
        return
    if not isinstance(v, str):
        raise _Bad("wrong_type", "参数 date 必须是字符串 YYYY-MM-DD")
    try:
        d = datetime.strptime(v, "%Y-%m-%d").date()
    except ValueError:
        raise _Bad("out_of_range", f"日期格式错误: {v}, 应为 YYYY-MM-DD") from None
    try:
        now = datetime.fromisoformat(task_time.replace(" ", "T")).date()
    except ValueError:
        return  # no usable task time: the reference would fail too; do not blame the agent
    if d > now + timedelta(days=15):
        raise _Bad("out_of_range", f"日期 {v} 超出可查询范围 (最晚 {now + timedelta(days=15)})")


def _latlon(value: Any, key: str, floats: bool) -> None:
    if not isinstance(value, str) or len(value.split(",")) != 2:
        raise _Bad("out_of_range", f"参数 {key} 必须是 \"latitude,longitude\" 格式: {value!r}")
    if floats:
        try:
            float(value.split(",")[0]), float(value.split(",")[1])
        except ValueError:
            raise _Bad("out_of_range", f"参数 {key} 坐标不是数字: {value!r}") from None


def _prices(args: dict, sort_needs_category: bool) -> None:
    has = args.get("price_min") is not None or args.get("price_max") is not None
    if sort_needs_category and args.get("sort_by") in ("price:a", "price:d"):
        has = True
    if has and not args.get("price_category"):
        raise _Bad("missing_required", "使用价格筛选或价格排序时必须指定 price_category")
    lo, hi = _num(args, "price_min", "price"), _num(args, "price_max", "price")
    if (lo is not None and lo < 0) or (hi is not None and hi < 0):
        raise _Bad("out_of_range", "价格必须 >= 0")
    if lo is not None and hi is not None and lo > hi:
        raise _Bad("out_of_range", "price_min 不能大于 price_max")


def _tool_rules(tool: str, a: dict, task_time: str) -> None:
    if tool in ("travel_search_flights", "travel_search_trains"):
        _range(a, "days", 0, 15)
        if tool == "travel_search_flights" and (not a.get("origin") or not a.get("destination")):
            raise _Bad("out_of_range", "出发地和目的地不能为空")
        _date(a, task_time)
    elif tool == "weather_forecast_days":
        _range(a, "days", 1, 15)
        _date(a, task_time)
    elif tool == "map_compute_routes":
        if a.get("departure_time") and a.get("arrival_time"):
            raise _Bad("out_of_range", "departure_time 与 arrival_time 不可同时使用")
        for key in ("origin", "destination"):
            _latlon(a.get(key), key, floats=False)
        for i, p in enumerate(a.get("intermediates") or []):
            _latlon(p, f"intermediates[{i}]", floats=False)
        allowed = {"driving", "walking", "bicycling", "transit", "motorcycle", "truck"}
        for m in a.get("modes") or []:
            if m not in allowed:
                raise _Bad("bad_enum", f"不支持的出行方式: {m}")
        ta = a.get("traffic_aware")
        if ta is not None and ta not in (True, False, 0, 1):
            raise _Bad("wrong_type", "参数 traffic_aware 必须是布尔值")
    elif tool in ("map_search_places", "map_search_central_places"):
        central = tool == "map_search_central_places"
        _prices(a, sort_needs_category=not central)
        _range(a, "radius", 100, 20000, default=10000 if central else 5000)
        _range(a, "min_rating", 0, 10)
        _range(a, "limit", 1, None)
        if central:
            origins = a.get("origins")
            if not isinstance(origins, list) or len(origins) < 2:
                raise _Bad("out_of_range", "origins 至少需要两个坐标点")
            for i, p in enumerate(origins):
                _latlon(p, f"origins[{i}]", floats=True)
        elif a.get("center") is not None:
            _latlon(a["center"], "center", floats=True)
    elif tool == "map_search_along_route":
        _range(a, "limit", 1, None)
        for key in ("origin", "destination"):
            _latlon(a.get(key), key, floats=False)
    elif tool == "map_search_ranking_list":
        _range(a, "max_lists", 1, 10)
        _range(a, "max_items", 1, 20)


def validate(tool: str, args: dict[str, Any], parameters: dict, task_time: str,
             mode: str = "strict") -> Failure | None:
    """Validate one call's arguments against its schema (`parameters`) and the tool's rules."""
    props: dict = parameters.get("properties", {})
    for key in args:
        if key not in props:
            return _fail("unknown_parameter", f"未知参数: {key}")
    for key in parameters.get("required", []):
        if key not in args:
            return _fail("missing_required", f"缺少必填参数: {key}")
    if mode == "strict":
        for key, value in args.items():
            bad = _check_schema(key, value, props[key])
            if bad:
                return bad
    try:
        _tool_rules(tool, args, task_time)
    except _Bad as bad:
        return _fail(bad.category, bad.message)
    except TypeError as exc:  # e.g. a list compared with a number: the reference raises too
        return _fail("wrong_type", f"参数类型错误: {exc}")
    return None
