"""GroupTravelBench's tool schemas (grouptravelbench_tools.json in its package) and argument
validation (evaluator/benchmarks/grouptravelbench/validation.py), checked against the interface
facts of the reference (GroupTravelbench@dd5dacc, group_travelbench/tools/*.py)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from bench_data.tools import check_tool_schemas
from evaluator.benchmarks.base import BenchmarkError
from evaluator.benchmarks.grouptravelbench.environment import place_table, validator
from evaluator.benchmarks.grouptravelbench.validation import check, known_place, validate
from evaluator.benchmarks.travelbench.adcode import RegionTable

TOOLS_JSON = (Path(__file__).resolve().parents[3] / "evaluator" / "benchmarks" / "grouptravelbench"
              / "grouptravelbench_tools.json")
TOOL_NAMES = ["maps_geo", "maps_weather", "travel_search_flights", "travel_search_trains",
              "web_search", "search_poi", "get_poi_detail", "plan_route", "compare_routes",
              "search_along_route"]

# The reference's input_schema per tool: property -> type ("T?" = anyOf [T, null], default
# null), in the reference's property order; then its required list and non-null defaults.
INTERFACE: dict[str, tuple[dict[str, str], list[str], dict[str, object]]] = {
    "maps_geo": ({"address": "string", "city": "string?"}, ["address"], {}),
    "maps_weather": ({"location": "string", "date": "string", "days": "integer"},
                     ["location", "date"], {"days": 0}),
    "travel_search_flights": (
        {"origin": "string", "destination": "string", "date": "string",
         "depart_time_start": "string?", "depart_time_end": "string?", "sort_by": "string?",
         "airport": "string?"}, ["origin", "destination", "date"], {}),
    "travel_search_trains": (
        {"origin": "string", "destination": "string", "date": "string",
         "depart_time_start": "string?", "depart_time_end": "string?", "sort_by": "string?",
         "train_type_filter": "string?"}, ["origin", "destination", "date"], {}),
    "web_search": ({"query": "string"}, ["query"], {}),
    "search_poi": (
        {"keywords": "string", "city": "string", "region": "string?", "location": "string?",
         "radius_km": "number?", "price_min": "number?", "price_max": "number?",
         "sort_by": "string?", "page": "integer", "page_size": "integer"},
        ["keywords", "city"], {"page": 1, "page_size": 10}),
    "get_poi_detail": ({"id": "string"}, ["id"], {}),
    "plan_route": (
        {"origin": "string", "destination": "string", "mode": "string", "city": "string?",
         "date": "string?", "time": "string?"}, ["origin", "destination"], {"mode": "transit"}),
    "compare_routes": ({"origin": "string", "destination": "string", "city": "string?"},
                       ["origin", "destination"], {}),
    "search_along_route": (
        {"origin": "string", "destination": "string", "keywords": "string", "mode": "string",
         "city": "string?", "route_range": "integer", "route_index": "integer",
         "poi_limit": "integer"}, ["origin", "destination", "keywords"],
        {"mode": "driving", "route_range": 500, "route_index": 1, "poi_limit": 20}),
}


def _load() -> list[dict]:
    tools, issues = check_tool_schemas(TOOLS_JSON)
    assert issues == []
    return tools


SCHEMAS = {t["function"]["name"]: t["function"]["parameters"] for t in _load()}
REGIONS = RegionTable([("北京市", "110000"), ("朝阳区", "110105"), ("上海市", "310000"),
                       ("浦东新区", "310115"), ("广东省", "440000"), ("广州市", "440100"),
                       ("天河区", "440106"), ("陕西省", "610000"), ("西安市", "610100")])


# -- the schema file -------------------------------------------------------------------------
def test_schema_file_loads_in_reference_order():
    tools = _load()
    assert [t["function"]["name"] for t in tools] == TOOL_NAMES
    assert all(t["type"] == "function" for t in tools)
    assert all(len(t["function"]["description"]) > 20 for t in tools)


def _type_of(spec: dict) -> str:
    if "anyOf" in spec:
        kinds = [o["type"] for o in spec["anyOf"]]
        assert len(kinds) == 2 and kinds[1] == "null" and spec["default"] is None
        return kinds[0] + "?"
    return spec["type"]


@pytest.mark.parametrize("name", TOOL_NAMES)
def test_schema_matches_reference_interface(name):
    props, required, defaults = INTERFACE[name]
    params = SCHEMAS[name]
    assert params["type"] == "object"
    assert params["required"] == required
    assert list(params["properties"]) == list(props)
    assert {k: _type_of(v) for k, v in params["properties"].items()} == props
    assert {k: v["default"] for k, v in params["properties"].items()
            if v.get("default") is not None} == defaults
    for spec in params["properties"].values():
        assert spec["description"].strip()
        assert "enum" not in spec and "minimum" not in spec  # the reference declares neither


def test_descriptions_state_units_and_formats():
    text = json.dumps(SCHEMAS, ensure_ascii=False)
    for fact in ("YYYY-MM-DD", "HH:MM", "kilometres", "metres", "yuan", "longitude,latitude",
                 "at most 20", "at most 3000", "at most 50"):
        assert fact in text


# -- validation: one valid call per tool -----------------------------------------------------
VALID: dict[str, dict] = {
    "maps_geo": {"address": "天安门广场", "city": None},
    "maps_weather": {"location": "西安", "date": "2025-05-01", "days": 4},
    "travel_search_flights": {"origin": "北京市", "destination": "上海", "date": "2025-05-01",
                              "depart_time_start": "08:00", "depart_time_end": "12:30",
                              "sort_by": "price", "airport": "虹桥"},
    "travel_search_trains": {"origin": "广州市", "destination": "西安市", "date": "2025-02-28",
                             "depart_time_start": "06:00", "depart_time_end": "23:59",
                             "sort_by": "depart_time_desc",
                             "train_type_filter": "high_speed_and_emu"},
    "web_search": {"query": "西安 兵马俑 门票"},
    "search_poi": {"keywords": "火锅", "city": "广州", "region": "天河区",
                   "location": "113.33,23.13", "radius_km": 2.5, "price_min": 0,
                   "price_max": 200, "sort_by": "rating", "page": 2, "page_size": 20},
    "get_poi_detail": {"id": "B0FFG0ABCD"},
    "plan_route": {"origin": "116.39,39.90", "destination": "颐和园", "mode": "transit",
                   "city": "北京", "date": "2025-05-01", "time": "09:30"},
    "compare_routes": {"origin": "钟楼", "destination": "108.96,34.22", "city": "西安"},
    "search_along_route": {"origin": "广州市", "destination": "113.0,23.0", "keywords": "加油站",
                           "mode": "driving", "city": "广州", "route_range": 3000,
                           "route_index": 1, "poi_limit": 50},
}

MINIMAL: dict[str, dict] = {
    "maps_geo": {"address": "x"}, "maps_weather": {"location": "北京", "date": "2025-01-01"},
    "travel_search_flights": {"origin": "北京", "destination": "上海", "date": "2025-01-01"},
    "travel_search_trains": {"origin": "北京", "destination": "上海", "date": "2025-01-01"},
    "web_search": {"query": "q"}, "search_poi": {"keywords": "酒店", "city": "上海"},
    "get_poi_detail": {"id": "1"},
    "plan_route": {"origin": "a", "destination": "b", "city": "北京"},
    "compare_routes": {"origin": "a", "destination": "b"},
    "search_along_route": {"origin": "a", "destination": "b", "keywords": "餐厅"},
}


@pytest.mark.parametrize("name", TOOL_NAMES)
@pytest.mark.parametrize("calls", [VALID, MINIMAL], ids=["full", "minimal"])
def test_valid_call_passes(name, calls):
    assert validate(name, calls[name], SCHEMAS[name], "2025-04-30 10:00", REGIONS) is None
    assert check(name, calls[name], SCHEMAS[name], REGIONS) == ""


# Edge cases the reference accepts (its exact expressions), so they must pass here too.
ACCEPTED = [
    ("maps_geo", {"city": "火星城"}),                       # maps_geo's city is not looked up
    ("maps_weather", {"days": 0}),
    ("maps_weather", {"date": "2031-12-31"}),              # no window around the task's time
    ("maps_weather", {"days": True}),                     # isinstance(True, int)
    ("maps_weather", {"location": " 北京 "}),              # stripped before the lookup
    ("maps_weather", {"location": "朝阳"}),                # + "区" ends 北京市朝阳区
    ("travel_search_flights", {"depart_time_start": None, "sort_by": None}),
    ("travel_search_flights", {"depart_time_start": "12:00", "depart_time_end": "12:00"}),
    # `$` matches before a trailing newline and int() strips it: the reference accepts this
    ("travel_search_flights", {"depart_time_start": "12:30\n", "depart_time_end": "13:00"}),
    ("search_poi", {"radius_km": 0.1, "price_min": 5, "price_max": 5}),
    ("search_poi", {"region": "火星区"}),                  # region is not looked up
    ("search_poi", {"location": "朝阳大悦城"}),             # a place name: not checked
    ("search_poi", {"location": "39.9,116.4"}),            # "39." is not 3 digits: not checked
    ("search_poi", {"price_min": 100, "price_max": None}),
    ("plan_route", {"mode": "driving", "city": None}),     # city only needed for transit
    ("plan_route", {"city": "  "}),                        # truthy; blank city not looked up
    ("plan_route", {"date": None, "time": None}),
    ("compare_routes", {"city": ""}),
    ("search_along_route", {"route_range": 1, "poi_limit": 1, "route_index": 99}),
]


@pytest.mark.parametrize(("name", "change"), ACCEPTED)
def test_reference_accepts(name, change):
    assert validate(name, {**VALID[name], **change}, SCHEMAS[name], "", REGIONS) is None


# -- validation: every rule's violation ------------------------------------------------------
DROP = object()
# (tool, change to the valid call (DROP = remove the key), expected error category)
REJECTED = [
    # generic: unknown / missing / type, on every tool
    *[(n, {"extra_arg": 1}, "unknown_parameter") for n in TOOL_NAMES],
    *[(n, {INTERFACE[n][1][-1]: DROP}, "missing_required") for n in TOOL_NAMES],
    *[(n, {INTERFACE[n][1][0]: 123}, "wrong_type") for n in TOOL_NAMES],
    ("maps_geo", {"city": 5}, "wrong_type"),
    ("maps_weather", {"days": 2.0}, "wrong_type"),         # a float is not an integer
    ("maps_weather", {"days": None}, "wrong_type"),        # not nullable
    ("search_poi", {"radius_km": "5"}, "wrong_type"),
    ("search_poi", {"page": "2"}, "wrong_type"),
    ("plan_route", {"mode": None}, "wrong_type"),
    ("search_along_route", {"route_range": 500.5}, "wrong_type"),
    # maps_geo
    ("maps_geo", {"address": "  "}, "missing_required"),
    # maps_weather
    ("maps_weather", {"location": ""}, "missing_required"),
    ("maps_weather", {"location": "火星城"}, "out_of_range"),
    ("maps_weather", {"date": "2025/05/01"}, "out_of_range"),
    ("maps_weather", {"date": "2025-02-30"}, "out_of_range"),
    ("maps_weather", {"date": "2025-05-01\n"}, "out_of_range"),
    ("maps_weather", {"days": -1}, "out_of_range"),
    ("maps_weather", {"days": 5}, "out_of_range"),
    # travel_search_flights
    ("travel_search_flights", {"origin": " "}, "missing_required"),
    ("travel_search_flights", {"destination": ""}, "missing_required"),
    ("travel_search_flights", {"origin": "火星城"}, "out_of_range"),
    ("travel_search_flights", {"destination": "北京上海"}, "out_of_range"),
    ("travel_search_flights", {"date": "25-05-01"}, "out_of_range"),
    ("travel_search_flights", {"date": "2025-13-01"}, "out_of_range"),
    ("travel_search_flights", {"depart_time_start": "8:00"}, "out_of_range"),
    ("travel_search_flights", {"depart_time_start": "24:00"}, "out_of_range"),
    ("travel_search_flights", {"depart_time_end": "12:60"}, "out_of_range"),
    ("travel_search_flights", {"depart_time_start": "13:00", "depart_time_end": "12:00"},
     "out_of_range"),
    ("travel_search_flights", {"sort_by": "depart_time_desc"}, "bad_enum"),
    ("travel_search_flights", {"airport": 1}, "wrong_type"),
    # travel_search_trains
    ("travel_search_trains", {"origin": ""}, "missing_required"),
    ("travel_search_trains", {"destination": " "}, "missing_required"),
    ("travel_search_trains", {"origin": "火星城"}, "out_of_range"),
    ("travel_search_trains", {"destination": "火星城"}, "out_of_range"),
    ("travel_search_trains", {"date": "2025-5-1"}, "out_of_range"),
    ("travel_search_trains", {"date": "2025-02-29"}, "out_of_range"),
    ("travel_search_trains", {"depart_time_start": "0600"}, "out_of_range"),
    ("travel_search_trains", {"depart_time_end": "25:00"}, "out_of_range"),
    ("travel_search_trains", {"depart_time_start": "22:00", "depart_time_end": "06:00"},
     "out_of_range"),
    ("travel_search_trains", {"sort_by": "cheapest"}, "bad_enum"),
    ("travel_search_trains", {"train_type_filter": "G"}, "bad_enum"),
    # web_search
    ("web_search", {"query": ""}, "missing_required"),
    # search_poi
    ("search_poi", {"keywords": " "}, "missing_required"),
    ("search_poi", {"city": ""}, "missing_required"),
    ("search_poi", {"city": "火星城"}, "out_of_range"),
    ("search_poi", {"sort_by": "popularity"}, "bad_enum"),
    ("search_poi", {"page_size": 0}, "out_of_range"),
    ("search_poi", {"page_size": 21}, "out_of_range"),
    ("search_poi", {"page": 0}, "out_of_range"),
    ("search_poi", {"radius_km": 0}, "out_of_range"),
    ("search_poi", {"radius_km": -1.5}, "out_of_range"),
    ("search_poi", {"price_min": -1}, "out_of_range"),
    ("search_poi", {"price_max": -0.5, "price_min": None}, "out_of_range"),
    ("search_poi", {"price_min": 300, "price_max": 200}, "out_of_range"),
    ("search_poi", {"location": "  "}, "missing_required"),
    ("search_poi", {"location": "113.3,23.1,5"}, "out_of_range"),
    ("search_poi", {"location": "113.3;23.1"}, "out_of_range"),
    ("search_poi", {"location": "113.3,abc"}, "out_of_range"),
    ("search_poi", {"location": "190.0,23.1"}, "out_of_range"),
    ("search_poi", {"location": "113.3,91"}, "out_of_range"),
    # get_poi_detail
    ("get_poi_detail", {"id": "   "}, "missing_required"),
    # plan_route
    ("plan_route", {"origin": ""}, "missing_required"),
    ("plan_route", {"destination": " "}, "missing_required"),
    ("plan_route", {"origin": "116.39 39.90"}, "out_of_range"),
    ("plan_route", {"destination": "116.39,x"}, "out_of_range"),
    ("plan_route", {"origin": "181,39.9"}, "out_of_range"),
    ("plan_route", {"destination": "116.39,-90.5"}, "out_of_range"),
    ("plan_route", {"mode": "cycling"}, "bad_enum"),
    ("plan_route", {"date": "20250501"}, "out_of_range"),
    ("plan_route", {"date": "2025-04-31"}, "out_of_range"),
    ("plan_route", {"time": "9:30"}, "out_of_range"),
    ("plan_route", {"time": "09:75"}, "out_of_range"),
    ("plan_route", {"city": "火星城"}, "out_of_range"),
    ("plan_route", {"city": None}, "missing_required"),         # transit needs a city
    ("plan_route", {"city": DROP, "mode": DROP}, "missing_required"),  # default transit
    ("plan_route", {"city": ""}, "missing_required"),
    # compare_routes
    ("compare_routes", {"origin": " "}, "missing_required"),
    ("compare_routes", {"destination": ""}, "missing_required"),
    ("compare_routes", {"origin": "108.9,34.2,1"}, "out_of_range"),
    ("compare_routes", {"destination": "108.96,95"}, "out_of_range"),
    ("compare_routes", {"city": "火星城"}, "out_of_range"),
    # search_along_route
    ("search_along_route", {"origin": ""}, "missing_required"),
    ("search_along_route", {"destination": " "}, "missing_required"),
    ("search_along_route", {"origin": "113.0"}, "out_of_range"),
    ("search_along_route", {"destination": "200.0,23.0"}, "out_of_range"),
    ("search_along_route", {"keywords": ""}, "missing_required"),
    ("search_along_route", {"mode": "transit"}, "bad_enum"),
    ("search_along_route", {"route_range": 0}, "out_of_range"),
    ("search_along_route", {"route_range": 3001}, "out_of_range"),
    ("search_along_route", {"route_index": 0}, "out_of_range"),
    ("search_along_route", {"poi_limit": 0}, "out_of_range"),
    ("search_along_route", {"poi_limit": 51}, "out_of_range"),
    ("search_along_route", {"city": "火星城"}, "out_of_range"),
]


def _case(name: str, change: dict) -> dict:
    """The valid call with `change` applied (DROP removes the key)."""
    out = {**VALID[name], **change}
    return {k: v for k, v in out.items() if v is not DROP}


@pytest.mark.parametrize(("name", "change", "category"), REJECTED,
                         ids=[f"{n}-{'-'.join(c)}" for n, c, _ in REJECTED])
def test_rule_violation_is_an_error(name, change, category):
    args = _case(name, change)
    bad = validate(name, args, SCHEMAS[name], "2025-04-30 10:00", REGIONS)
    assert bad is not None, args
    assert bad[0] == category, bad
    assert json.loads(bad[1])["error"]
    assert check(name, args, SCHEMAS[name], REGIONS) == bad[1]


def test_place_names_follow_the_reference_lookup():
    for name in ("北京市", "北京", "朝阳区", "朝阳", "北京市朝阳区", "广东", "天河", "京市"):
        assert known_place(REGIONS, name), name
    for name in ("", "  ", "火星", "北京上海", "东京"):
        assert not known_place(REGIONS, name), name


def test_without_a_table_city_names_are_not_checked():
    args = {**VALID["travel_search_trains"], "origin": "火星城"}
    assert validate("travel_search_trains", args, SCHEMAS["travel_search_trains"], "") is None
    bad = validate("travel_search_trains", {**args, "origin": ""},
                   SCHEMAS["travel_search_trains"], "")
    assert bad is not None and bad[0] == "missing_required"


# -- the per-run factory ---------------------------------------------------------------------
def _request(setting: str, files: list[Path]) -> SimpleNamespace:
    return SimpleNamespace(config=SimpleNamespace(sandbox=SimpleNamespace(
        adcode_table=setting, validation="reference"), options={}),
        taskset=SimpleNamespace(files=files), prompts=None)


TABLE = "name\tadcode\tcitycode\n北京市\t110000\t010\n朝阳区\t110105\t010\n"


def test_factory_uses_the_table_next_to_the_data(tmp_path):
    (tmp_path / "adcode.txt").write_text(TABLE, encoding="utf-8")
    fn, info = validator(_request("", [tmp_path / "test.jsonl"]))
    assert info["adcode_checks"] and info["adcode_source"] == "dataset"
    schema = SCHEMAS["maps_weather"]
    assert fn("maps_weather", {"location": "朝阳", "date": "2025-01-01"}, schema, "") is None
    bad = fn("maps_weather", {"location": "上海", "date": "2025-01-01"}, schema, "")
    assert bad is not None and bad[0] == "out_of_range"


def test_factory_without_table_or_off(tmp_path):
    fn, info = validator(_request("", [tmp_path / "test.jsonl"]))
    assert info["adcode_checks"] is False
    assert fn("maps_weather", {"location": "上海", "date": "2025-01-01"},
              SCHEMAS["maps_weather"], "") is None
    (tmp_path / "adcode.txt").write_text(TABLE, encoding="utf-8")
    _, info = validator(_request("off", [tmp_path / "test.jsonl"]))
    assert info["adcode_checks"] is False
    assert place_table("", None)[0] is None


def test_factory_explicit_table_must_exist(tmp_path):
    with pytest.raises(BenchmarkError, match="adcode_table"):
        validator(_request(str(tmp_path / "missing.txt"), []))
