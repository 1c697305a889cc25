"""Write tests/cache_store/data/validation_parity.jsonl: tool calls with the reference's verdict.

    python -m tests.cache_store.make_validation_parity --reference DIR [--adcode PATH]

Two parts: hand-picked edge cases for every rule of the notes §4, each with the verdict read off
the reference's validators by hand (`HAND`), and seeded random calls (`random_calls`, mutations
of valid calls). DIR is a checkout of github.com/small-xiangcheng/TravelBench (commit 445a29d);
its validators are *run* (imported from DIR, nothing is copied) to label the random calls and to
check every hand-written verdict; the script stops if any hand-written verdict disagrees.
The labelling mirrors the reference's agent loop: arguments that are not JSON become
`{"raw_arguments": text}`, an unknown tool or any exception is an error, and a validation
message is an error. Arguments that parse to a non-object are left out (the reference fails
the whole agent turn there, not the tool call).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "data" / "validation_parity.jsonl"
ADCODE = HERE.parents[1] / ".." / "shared" / "data" / "travelbench" / "adcode.txt"
T = "2025-10-24 10:00"  # + 15 days = 2025-11-08
E, OK = True, False
P1, P2 = "39.9042,116.4074", "31.2304,121.4737"

# (tool, arguments: dict | raw text, error?, why[, task time])
HAND: list[tuple] = [
    # generic: unknown tool, unparseable arguments, required / unknown parameters
    ("travel_search_hotels", {"city": "北京市"}, E, "unknown tool"),
    ("weather_current_conditions", '{"location": "北京市"', E, "unparseable -> raw_arguments"),
    ("weather_current_conditions", "", E, "empty arguments"),
    ("web_search", "{'query': 'x'}", E, "python-style quotes do not parse"),
    ("weather_current_conditions", {}, E, "missing required"),
    ("weather_current_conditions", {"location": "北京市", "unit": "c"}, E, "unknown parameter"),
    ("weather_current_conditions", {"location": 3}, OK, "types are not checked"),
    ("weather_current_conditions", {"location": None}, OK, "null location is not checked"),
    ("weather_current_conditions", {"location": "x", "time": "now"}, E, "unknown 'time'"),
    ("web_search", {"query": ["a", "b"]}, OK, "types are not checked"),
    ("web_search", {"query": "x", "lang": "zh"}, E, "unknown parameter"),
    ("web_search", {}, E, "missing required"),
    # travel_search_flights
    ("travel_search_flights", {"origin": "北京市", "destination": "上海市", "date": "2025-10-25"},
     OK, "valid"),
    *[("travel_search_flights", {"origin": "北京市", "destination": "上海市",
                                 "date": "2025-10-25", "days": d}, v, f"days {d!r}")
      for d, v in [(0, OK), (15, OK), (16, E), (-1, E), (15.5, E), (0.5, OK), ("3", E),
                   (None, E), (True, OK), (False, OK), ([1], E)]],
    ("travel_search_flights", ('{"origin": "北京市", "destination": "上海市", "date": '
                               '"2025-10-25", "days": NaN}'), OK, "NaN compares false"),
    ("travel_search_flights", {"origin": "", "destination": "上海市", "date": "2025-10-25"},
     E, "empty origin"),
    ("travel_search_flights", {"origin": "北京市", "destination": None, "date": "2025-10-25"},
     E, "null destination"),
    ("travel_search_flights", {"origin": 0, "destination": "上海市", "date": "2025-10-25"},
     E, "falsy origin"),
    ("travel_search_flights", {"origin": "Beijing", "destination": "火星", "date": "2025-10-25"},
     OK, "flights do not resolve names"),
    ("travel_search_flights", {"origin": ["北京"], "destination": "上海", "date": "2025-10-25"},
     OK, "non-empty list origin is not checked"),
    *[("travel_search_flights", {"origin": "北京市", "destination": "上海市", "date": d}, v,
       f"date {d!r}") for d, v in [
        ("2025-11-08", OK), ("2025-11-09", E), ("2020-01-01", OK), ("2025/10/25", E),
        ("2025-10-25 10:00", E), ("2025-1-5", OK), ("20251025", E), (20251025, E), (None, E),
        ("2025-02-30", E), ("", E)]],
    ("travel_search_flights", {"origin": "北京市", "destination": "上海市", "date": "2025-11-08"},
     OK, "+15 days late in the day", "2025-10-24 23:59"),
    ("travel_search_flights", {"origin": "北京市", "destination": "上海市", "date": "2025-10-25"},
     E, "unparseable task time fails the date check", ""),
    ("travel_search_flights", {"origin": "北京市", "destination": "上海市"}, E, "missing date"),
    ("travel_search_flights", {"origin": "北京市", "destination": "上海市", "date": "2025-10-25",
                               "adults": 2}, E, "unknown parameter"),
    # travel_search_trains: place names resolve against adcode.txt
    ("travel_search_trains", {"origin": "北京市", "destination": "上海市", "date": "2025-10-25"},
     OK, "valid, exact names"),
    *[("travel_search_trains", {"origin": o, "destination": "上海市", "date": "2025-10-25"}, v,
       f"origin {o!r}") for o, v in [
        ("海淀区", OK), ("朝阳区", E), ("北京市朝阳区", OK), ("长春市朝阳区", OK), ("北京", E),
        ("Beijing", E), ("  上海市 ", OK), ("", E), (None, E), (110000, E), ("苏州市", OK),
        ("苏州", E), ("区", E), ("市辖区", E), ("北京市市辖区", OK), ("中华人民共和国", OK),
        ("江苏省苏州市姑苏区", OK), (" ", E), (["北京市"], E)]],
    *[("travel_search_trains", {"origin": "北京市", "destination": d, "date": "2025-10-25"}, v,
       f"destination {d!r}") for d, v in [("鼓楼区", E), ("姑苏区", OK), ("浦东新区", OK),
                                          ("火星市", E)]],
    *[("travel_search_trains", {"origin": "北京市", "destination": "上海市",
                                "date": "2025-10-25", "days": d}, v, f"days {d!r}")
      for d, v in [(16, E), (-1, E), (15, OK), (0, OK), (None, E), ("1", E)]],
    *[("travel_search_trains", {"origin": "北京市", "destination": "上海市", "date": d}, v,
       f"date {d!r}") for d, v in [("2025-11-09", E), ("2025-11-08", OK), ("2024-12-31", OK),
                                   ("10/25/2025", E)]],
    # weather_forecast_days
    ("weather_forecast_days", {"location": "北京市", "date": "2025-10-25"}, OK, "valid"),
    *[("weather_forecast_days", {"location": "北京市", "date": "2025-10-25", "days": d}, v,
       f"days {d!r}") for d, v in [(0, E), (1, OK), (15, OK), (16, E), (None, OK), ("3", E),
                                   (True, OK), (False, E), (7.5, OK), (-1, E)]],
    *[("weather_forecast_days", {"location": "北京市", "date": d}, v, f"date {d!r}")
      for d, v in [(None, OK), ("2025-11-08", OK), ("2025-11-09", E), ("bad", E),
                   (20251025, E), ("2025-10-01", OK)]],
    ("weather_forecast_days", {"location": "北京市"}, E, "missing date"),
    ("weather_forecast_days", {"date": "2025-10-25"}, E, "missing location"),
    ("weather_forecast_days", {"location": "Atlantis", "date": "2025-10-25"}, OK,
     "location is not resolved"),
    # map_compute_routes
    ("map_compute_routes", {"origin": P1, "destination": P2}, OK, "valid"),
    *[("map_compute_routes", {"origin": o, "destination": P2}, v, f"origin {o!r}")
      for o, v in [("39.9;116.4", E), ("39.9,116.4,0", E), ("a,b", OK), (" 39.9,116.4 ", OK),
                   (39.9, E), (None, E), (",", OK), ("", E)]],
    *[("map_compute_routes", {"origin": P1, "destination": P2, "departure_time": dt,
                              "arrival_time": at}, v, f"departure {dt!r} arrival {at!r}")
      for dt, at, v in [("08:00", "10:00", E), ("08:00", "", OK), ("x", None, OK),
                        (1, 2, E), (0, "10:00", OK)]],
    *[("map_compute_routes", {"origin": P1, "destination": P2, "intermediates": i}, v,
       f"intermediates {i!r}") for i, v in [
        (["30,120"], OK), (["30;120"], E), ([], OK), (None, OK), ("30,120", E), ([30], E),
        ({"30,120": 1}, OK), (["30,120", "31,121,5"], E)]],
    *[("map_compute_routes", {"origin": P1, "destination": P2, "modes": m}, v, f"modes {m!r}")
      for m, v in [(["driving", "transit"], OK), (["flying"], E), ([], OK), (None, E),
                   ("driving", E), (["DRIVING"], E), ([["driving"]], E),
                   (["truck", "motorcycle", "bicycling", "walking"], OK)]],
    *[("map_compute_routes", {"origin": P1, "destination": P2, "traffic_aware": ta}, v,
       f"traffic_aware {ta!r}") for ta, v in [
        (True, OK), (False, OK), (None, OK), (1, OK), (0, OK), (1.0, OK), (2, E), ("yes", E),
        ("true", E), ("", OK), ([], OK), ([1], E)]],
    *[("map_compute_routes", {"origin": P1, "destination": P2, "preference": p}, v,
       f"preference {p!r}") for p, v in [
        ("avoid_tolls", OK), ("fastest", OK), (5, OK), (None, OK), (["avoid_tolls"], E),
        ({}, OK), ({"a": 1}, E)]],
    ("map_compute_routes", {"origin": P1}, E, "missing destination"),
    # map_search_places
    ("map_search_places", {"query": "火锅"}, OK, "valid, defaults"),
    *[("map_search_places", {"query": "火锅", "radius": r}, v, f"radius {r!r}")
      for r, v in [(99, E), (100, OK), (20000, OK), (20001, E), (None, E), ("5000", E),
                   (True, E), (5000.5, OK), (99.9, E)]],
    *[("map_search_places", {"query": "火锅", "min_rating": m}, v, f"min_rating {m!r}")
      for m, v in [(-0.1, E), (0, OK), (10, OK), (10.5, E), (None, OK), ("4", E), (True, OK)]],
    *[("map_search_places", {"query": "酒店", **kw}, v, why) for kw, v, why in [
        ({"price_min": 10}, E, "price without category"),
        ({"price_min": None}, OK, "null price is not a price"),
        ({"price_max": 100, "price_category": "price"}, OK, "price with category"),
        ({"price_min": -1, "price_category": "price"}, E, "negative price"),
        ({"price_max": -1, "price_category": "price"}, E, "negative max price"),
        ({"price_min": 100, "price_max": 50, "price_category": "average_cost"}, E, "min > max"),
        ({"price_min": 50, "price_max": 50, "price_category": "average_cost"}, OK, "min == max"),
        ({"price_min": "10", "price_category": "price"}, E, "string price"),
        ({"price_min": 10, "price_category": ""}, E, "empty category"),
        ({"price_min": 10, "price_category": "bogus"}, OK, "category enum is not checked"),
        ({"price_category": "price"}, OK, "category alone"),
        ({"sort_by": "price:a"}, E, "price sort without category"),
        ({"sort_by": "price:d", "price_category": "average_cost"}, OK, "price sort"),
        ({"sort_by": "cheapest"}, OK, "sort enum is not checked"),
        ({"sort_by": None}, OK, "null sort"),
        ({"sort_by": ["price:a"]}, OK, "list sort is not checked"),
    ]],
    *[("map_search_places", {"query": "火锅", "limit": n}, v, f"limit {n!r}")
      for n, v in [(0, E), (1, OK), (None, E), ("5", E), (0.5, E), (1.5, OK), (-3, E)]],
    *[("map_search_places", {"query": "火锅", "center": c}, v, f"center {c!r}")
      for c, v in [(P1, OK), ("39.9, 116.4", OK), ("a,b", E), ("39.9;116.4", E),
                   ("39.9,116.4,1", E), (5, E), ("", OK), (None, OK), ("1e1,nan", OK)]],
    ("map_search_places", {"query": "火锅", "center": "", "region": "朝阳区"}, E,
     "no center: region checked"),
    ("map_search_places", {"query": "火锅", "center": P1, "region": "朝阳区"}, OK,
     "center given: region not checked"),
    ("map_search_places", {"query": "火锅", "center": None, "region": "海淀区"}, OK,
     "null center, unique suffix"),
    *[("map_search_places", {"query": "火锅", "region": r}, v, f"region {r!r}")
      for r, v in [("北京市", OK), ("朝阳区", E), ("火星", E), ("", OK), (None, OK),
                   (110000, E), ("杭州", E), ("杭州市", OK), ("Beijing", E), ("鼓楼区", E),
                   ("南京市鼓楼区", OK), (0, OK)]],
    ("map_search_places", {"center": P1}, E, "missing query"),
    # map_search_along_route
    ("map_search_along_route", {"query": "加油站", "origin": P1, "destination": P2}, OK, "valid"),
    *[("map_search_along_route", {"query": "加油站", "origin": P1, "destination": P2, **kw}, v,
       why) for kw, v, why in [
        ({"limit": 0}, E, "limit 0"), ({"limit": 1}, OK, "limit 1"), ({"limit": None}, E,
                                                                       "null limit"),
        ({"origin": "39.9;116.4"}, E, "origin format"), ({"origin": " a , b "}, OK,
                                                         "parts not numeric-checked"),
        ({"origin": 1}, E, "numeric origin"), ({"destination": "1,2,3"}, E, "three parts"),
        ({"transport_mode": "flying"}, OK, "mode enum not checked"),
        ({"buffer_radius": -5}, OK, "buffer not checked"),
        ({"buffer_radius": "x"}, OK, "buffer type not checked"),
        ({"origin": None}, E, "null origin"),
    ]],
    ("map_search_along_route", {"query": "加油站", "origin": P1}, E, "missing destination"),
    # map_search_central_places
    ("map_search_central_places", {"query": "咖啡", "origins": [P1, P2]}, OK, "valid"),
    *[("map_search_central_places", {"query": "咖啡", "origins": o}, v, f"origins {o!r}")
      for o, v in [([P1], E), ([], E), (None, E), (P1, E), ([P1, "a,b"], E),
                   ([P1, "39.8;116.3"], E), ([" 39.9 , 116.4 ", P2], OK), (5, E),
                   ({P1: 1, P2: 2}, OK), (["1e1,2", "nan,inf"], OK), ([P1, P2, P1], OK),
                   ([P1, 5], E)]],
    *[("map_search_central_places", {"query": "咖啡", "origins": [P1, P2], **kw}, v, why)
      for kw, v, why in [
        ({"radius": 99}, E, "radius 99"), ({"radius": 100}, OK, "radius 100"),
        ({"radius": 20000}, OK, "radius 20000"), ({"radius": 20001}, E, "radius 20001"),
        ({"radius": None}, E, "null radius"), ({"min_rating": 11}, E, "rating 11"),
        ({"min_rating": 0}, OK, "rating 0"), ({"price_min": 5}, E, "price without category"),
        ({"sort_by": "price:a"}, OK, "no price-sort rule here"),
        ({"price_min": 5, "price_max": 1, "price_category": "price"}, E, "min > max"),
        ({"limit": 0}, E, "limit 0"), ({"limit": 1}, OK, "limit 1"),
        ({"sort_by": "nearest"}, OK, "sort enum not checked"),
    ]],
    ("map_search_central_places", {"query": "咖啡"}, E, "missing origins"),
    # map_search_ranking_list
    ("map_search_ranking_list", {"query": "景点", "region": "北京市"}, OK, "valid"),
    *[("map_search_ranking_list", {"query": "景点", "region": "北京市", key: n}, v,
       f"{key} {n!r}") for key, n, v in [
        ("max_lists", 0, E), ("max_lists", 1, OK), ("max_lists", 10, OK), ("max_lists", 11, E),
        ("max_lists", None, E), ("max_lists", "5", E), ("max_items", 0, E),
        ("max_items", 1, OK), ("max_items", 20, OK), ("max_items", 21, E),
        ("max_items", None, E), ("max_items", 2.5, OK)]],
    ("map_search_ranking_list", {"query": "景点", "region": "火星"}, OK, "region not resolved"),
    ("map_search_ranking_list", {"query": "景点", "region": None}, OK, "null region"),
    ("map_search_ranking_list", {"query": "景点"}, E, "missing region"),
]


# -- seeded random calls ----------------------------------------------------------------------
BASE: dict[str, dict[str, Any]] = {
    "travel_search_flights": {"origin": "北京市", "destination": "上海市", "date": "2025-10-26"},
    "travel_search_trains": {"origin": "北京市", "destination": "上海市", "date": "2025-10-26"},
    "weather_current_conditions": {"location": "杭州市"},
    "weather_forecast_days": {"location": "杭州市", "date": "2025-10-26"},
    "map_compute_routes": {"origin": P1, "destination": P2},
    "map_search_places": {"query": "火锅"},
    "map_search_along_route": {"query": "加油站", "origin": P1, "destination": P2},
    "map_search_central_places": {"query": "咖啡", "origins": [P1, P2]},
    "map_search_ranking_list": {"query": "景点", "region": "北京市"},
    "web_search": {"query": "故宫开放时间"},
}
PARAMS: dict[str, list[str]] = {
    "travel_search_flights": ["origin", "destination", "date", "days"],
    "travel_search_trains": ["origin", "destination", "date", "days"],
    "weather_current_conditions": ["location"],
    "weather_forecast_days": ["location", "date", "days"],
    "map_compute_routes": ["origin", "destination", "intermediates", "modes", "departure_time",
                           "arrival_time", "traffic_aware", "preference"],
    "map_search_places": ["query", "center", "radius", "region", "sort_by", "min_rating",
                          "price_min", "price_max", "price_category", "limit"],
    "map_search_along_route": ["query", "origin", "destination", "transport_mode",
                               "buffer_radius", "limit"],
    "map_search_central_places": ["query", "origins", "radius", "sort_by", "min_rating",
                                  "price_min", "price_max", "price_category", "limit"],
    "map_search_ranking_list": ["query", "region", "max_lists", "max_items"],
    "web_search": ["query"],
}
TIMES = ["2025-10-24 10:00", "2025-12-25 23:30", "2026-02-28 08:15"]
NUMBERS = [-1, 0, 0.5, 1, 2, 3, 5, 9.9, 10, 10.1, 11, 15, 16, 20, 21, 99, 100, 5000, 20000,
           20001, 1e9, True, False]
JUNK = [None, "", "abc", "3", [], [1], {}, {"a": 1}]


def _places(rng: random.Random, names: list[str]) -> str:
    kind = rng.random()
    name = rng.choice(names)
    if kind < 0.35:
        return name
    if kind < 0.7:  # a suffix: unique, ambiguous or (rarely) nothing
        return name[rng.randrange(len(name)):]
    if kind < 0.8:
        return name[:rng.randrange(1, len(name) + 1)]
    return rng.choice(["朝阳区", "鼓楼区", "北京", "Beijing", "火星市", " 上海市 ", "市辖区",
                       "新区", "浦东新区", "海淀区"])


def _value(rng: random.Random, key: str, time: str, names: list[str]) -> Any:
    r = rng.random()
    if r < 0.12:
        return rng.choice(JUNK)
    if key in ("origin", "destination", "region", "location"):
        if rng.random() < 0.4 and key in ("origin", "destination"):
            return rng.choice([P1, P2, "30.1,120.2", "30.1;120.2", "1,2,3", " 31 , 121 ", "a,b"])
        return _places(rng, names)
    if key == "center":
        return rng.choice([P1, "30.1, 120.2", "a,b", "30;120", "1,2,3", "nan,1"])
    if key == "origins":
        pool = [P1, P2, "30.1,120.2", "a,b", "30;120", " 31 , 121 ", 5]
        return [rng.choice(pool) for _ in range(rng.randrange(0, 4))]
    if key == "intermediates":
        return [rng.choice([P1, "30;120", "a,b", 7]) for _ in range(rng.randrange(0, 3))]
    if key == "date":
        day = int(time[8:10])
        month, year = time[5:7], time[:4]
        if rng.random() < 0.2:
            return rng.choice(["2025/10/30", "tomorrow", "2025-13-01", "2025-10-30T00:00", 20251030])
        from datetime import date, timedelta
        d = date(int(year), int(month), day) + timedelta(days=rng.randrange(-30, 20))
        return d.isoformat()
    if key == "modes":
        return [rng.choice(["driving", "walking", "transit", "flying", "bus"])
                for _ in range(rng.randrange(0, 3))]
    if key == "traffic_aware":
        return rng.choice([True, False, 0, 1, 2, "yes", 1.0, None])
    if key in ("departure_time", "arrival_time"):
        return rng.choice(["2025-10-24T08:00", "", "now", 0, 7])
    if key in ("preference", "sort_by", "transport_mode", "price_category"):
        return rng.choice(["avoid_tolls", "price:a", "price:d", "distance", "balanced",
                           "average_cost", "price", "driving", "bogus", ""])
    if key == "query":
        return rng.choice(["火锅", "", "museum", 42])
    return rng.choice(NUMBERS)


def random_calls(n: int, seed: int, names: list[str]) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = []
    tools = list(BASE)
    while len(out) < n:
        tool = rng.choice(tools)
        time = rng.choice(TIMES)
        args = dict(BASE[tool])
        for _ in range(rng.randrange(1, 4)):
            r = rng.random()
            if r < 0.08 and args:
                del args[rng.choice(list(args))]
            elif r < 0.12:
                args[rng.choice(["foo", "city", "page", "days"])] = 1
            else:
                key = rng.choice(PARAMS[tool])
                args[key] = _value(rng, key, time, names)
        text = json.dumps(args, ensure_ascii=False)
        if rng.random() < 0.03:
            text = text[:-rng.randrange(1, 4)]  # truncated: unparseable
        if rng.random() < 0.02:
            tool = tool.replace("search", "find")  # unknown tool
        out.append({"tool": tool, "arguments": text, "time": time, "why": "random"})
    return out


# -- the oracle: the reference's validators, imported from a checkout -------------------------
def reference_oracle(ref_dir: Path) -> Any:
    if not (ref_dir / "travelbench" / "tools" / "get_adcode.py").is_file():
        raise SystemExit(f"{ref_dir}: not a TravelBench checkout (no travelbench/tools/)")
    os.environ["SANDBOX_CACHE_DIR"] = tempfile.mkdtemp(prefix="tb-oracle-")
    sys.path.insert(0, str(ref_dir))
    import travelbench.tools as tb  # the reference checkout: run, not copied

    tools = {t.name: t for t in tb.sandbox_tool_registry.get_tools()} or {
        m.name: m for m in vars(tb).values() if hasattr(m, "_validate_parameters")}

    def verdict(tool: str, arguments: str, time: str) -> bool | None:
        try:
            args = json.loads(arguments)
        except json.JSONDecodeError:
            args = {"raw_arguments": arguments}
        if not isinstance(args, dict):
            return None

        def bind(_registry: Any, name: str, time: str, **kwargs: Any) -> dict:
            return kwargs  # execute_tool(name, time, **kwargs): 'name'/'time' keys collide

        try:
            if tool not in tools:
                raise LookupError(tool)
            kwargs = bind(None, tool, time, **args)
            params = json.dumps(kwargs, sort_keys=True, ensure_ascii=False)
            return bool(tools[tool]._validate_parameters(time, params))
        except Exception:  # noqa: BLE001 - an exception is a tool error there
            return True

    return verdict


def build(ref_dir: Path, adcode: Path, n_random: int, seed: int) -> list[dict[str, Any]]:
    verdict = reference_oracle(ref_dir)
    rows: list[dict[str, Any]] = []
    for case in HAND:
        tool, args, expect, why = case[:4]
        time = case[4] if len(case) > 4 else T
        text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        got = verdict(tool, text, time)
        if got is not expect:
            raise SystemExit(f"hand-written verdict {expect} disagrees with the reference "
                             f"({got}): {tool} {text} [{why}]")
        rows.append({"tool": tool, "arguments": text, "time": time, "error": expect,
                     "why": why, "source": "hand"})
    names = [line.split("\t")[0] for line in adcode.read_text(encoding="utf-8").splitlines()[1:]]
    for call in random_calls(n_random, seed, names):
        got = verdict(call["tool"], call["arguments"], call["time"])
        if got is None:
            continue
        rows.append({**call, "error": got, "source": f"random seed={seed}"})
    for i, row in enumerate(rows):
        row["id"] = i
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reference", type=Path, required=True,
                    help="checkout of small-xiangcheng/TravelBench (its validators are run)")
    ap.add_argument("--adcode", type=Path, default=ADCODE)
    ap.add_argument("--random", type=int, default=300)
    ap.add_argument("--seed", type=int, default=20251024)
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args()
    rows = build(a.reference, a.adcode, a.random, a.seed)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    with a.out.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    n_err = sum(r["error"] for r in rows)
    print(f"{a.out}: {len(rows)} calls ({n_err} errors), "
          f"{sum(r['source'] == 'hand' for r in rows)} hand-picked")


if __name__ == "__main__":
    main()
