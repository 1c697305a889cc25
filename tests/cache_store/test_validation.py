"""Validation categories: generic schema checks and TravelBench's tool rules."""

from __future__ import annotations

import json

import pytest

from evaluator.benchmarks.travelbench.validation import validate

from .conftest import TIME, mini_schemas

FNS = {t["function"]["name"]: t["function"] for t in mini_schemas()}
needs_real = pytest.mark.skipif(len(FNS) < 10, reason="TravelBench tool schemas not present")


def check(tool: str, args: dict, mode: str = "strict") -> str | None:
    bad = validate(tool, args, FNS[tool]["parameters"], TIME, mode)
    if bad is not None:
        assert "error" in json.loads(bad[1])
    return bad[0] if bad else None


@needs_real
@pytest.mark.parametrize(("tool", "args", "category"), [
    ("weather_current_conditions", {}, "missing_required"),
    ("weather_current_conditions", {"location": "x", "foo": 1}, "unknown_parameter"),
    ("weather_current_conditions", {"location": 3}, "wrong_type"),
    ("travel_search_flights", {"origin": "a", "destination": "b", "date": "2025-10-25", "days": 16},
     "out_of_range"),
    ("travel_search_flights", {"origin": "a", "destination": "b", "date": "2025-11-09"}, "out_of_range"),
    ("travel_search_flights", {"origin": "a", "destination": "b", "date": "2025/10/25"}, "out_of_range"),
    ("travel_search_flights", {"origin": "", "destination": "b", "date": "2025-10-25"},
     "missing_required"),
    ("travel_search_flights", {"origin": "a", "destination": "b", "date": "2025-10-25", "days": "3"},
     "wrong_type"),
    ("weather_forecast_days", {"location": "x", "date": "2025-10-25", "days": 0}, "out_of_range"),
    ("map_compute_routes", {"origin": "1,2", "destination": "3,4", "departure_time": "a",
                            "arrival_time": "b"}, "out_of_range"),
    ("map_compute_routes", {"origin": "1;2", "destination": "3,4"}, "out_of_range"),
    ("map_compute_routes", {"origin": "1,2", "destination": "3,4", "modes": ["flying"]}, "bad_enum"),
    ("map_compute_routes", {"origin": "1,2", "destination": "3,4", "traffic_aware": "yes"},
     "wrong_type"),
    ("map_search_places", {"query": "q", "price_min": 10}, "missing_required"),
    ("map_search_places", {"query": "q", "sort_by": "price:a"}, "missing_required"),
    ("map_search_places", {"query": "q", "radius": 50}, "out_of_range"),
    ("map_search_places", {"query": "q", "center": "a,b"}, "out_of_range"),
    ("map_search_places", {"query": "q", "price_category": "price", "price_min": 9, "price_max": 1},
     "out_of_range"),
    ("map_search_places", {"query": "q", "sort_by": "cheapest"}, "bad_enum"),
    ("map_search_central_places", {"query": "q", "origins": ["1,2"]}, "out_of_range"),
    ("map_search_along_route", {"query": "q", "origin": "1,2", "destination": "3,4", "limit": 0},
     "out_of_range"),
    ("map_search_ranking_list", {"query": "q", "region": "r", "max_items": 21}, "out_of_range"),
])
def test_categories(tool: str, args: dict, category: str) -> None:
    assert check(tool, args) == category


@needs_real
def test_valid_calls_pass() -> None:
    assert check("travel_search_flights", {"origin": "北京市", "destination": "上海市",
                                           "date": "2025-11-08", "days": 2}) is None
    assert check("travel_search_flights", {"origin": "a", "destination": "b",
                                           "date": "2020-01-01"}) is None  # past dates allowed
    assert check("map_search_central_places", {"query": "q", "origins": ["1,2", "3.5,4"]}) is None
    assert check("map_compute_routes", {"origin": "1,2", "destination": "3,4",
                                        "preference": "avoid_tolls", "traffic_aware": True}) is None


@needs_real
def test_reference_mode_skips_schema_types_and_enums() -> None:
    assert check("weather_current_conditions", {"location": 3}, "reference") is None
    assert check("map_search_places", {"query": "q", "sort_by": "cheapest"}, "reference") is None
    # tool rules still apply in reference mode
    assert check("map_search_places", {"query": "q", "radius": 50}, "reference") == "out_of_range"
