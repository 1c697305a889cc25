"""Rebuild the built-in travel sample's tool cache: `travel_sample/cache/<tool>_cache.json`.

    python -m bench_data.samples.build_sample_cache [--check]

The cache uses the TravelBench release layout and key normalisation exactly (see
docs/data.md): params = json.dumps(args, sort_keys=True, ensure_ascii=False); intermediate =
json.dumps({"params": params, "time": task_time}, sort_keys=True, ensure_ascii=False); stored
key = json.dumps(sorted(json.loads(intermediate).items()), separators=(",", ":"),
ensure_ascii=False). Values are the fictional response strings of `sample_responses`.
CALLS lists, per task time, the calls a sensible agent makes for the sample tasks (several
argument variants each), then unrelated calls that give the simulator retrieval examples.
--check rebuilds in memory and exits 1 if the files on disk differ.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from bench_data.samples.sample_responses import respond

SAMPLE_DIR = Path(__file__).resolve().parent / "travel_sample"
CACHE_DIR = SAMPLE_DIR / "cache"
TOOLS = (
    "travel_search_flights", "travel_search_trains", "weather_current_conditions",
    "weather_forecast_days", "map_compute_routes", "map_search_places",
    "map_search_along_route", "map_search_central_places", "map_search_ranking_list",
    "web_search",
)

Call = tuple[str, dict[str, Any]]

# task time -> calls the sample tasks are expected to make (variants included)
TASK_CALLS: dict[str, list[Call]] = {
    "2025-11-14 09:00": [  # st-001 Hangzhou weather tomorrow
        ("weather_forecast_days", {"location": "Hangzhou", "date": "2025-11-15"}),
        ("weather_forecast_days", {"location": "Hangzhou", "date": "2025-11-15", "days": 1}),
        ("weather_forecast_days", {"location": "Hangzhou", "date": "2025-11-14", "days": 1}),
        ("weather_forecast_days", {"location": "West Lake, Hangzhou", "date": "2025-11-15"}),
        ("weather_current_conditions", {"location": "Hangzhou"}),
    ],
    "2025-11-20 18:30": [  # st-002 Shanghai -> Chengdu flights on Saturday
        ("travel_search_flights", {"origin": "Shanghai", "destination": "Chengdu",
                                   "date": "2025-11-22"}),
        ("travel_search_flights", {"origin": "Shanghai", "destination": "Chengdu",
                                   "date": "2025-11-22", "days": 0}),
        ("travel_search_flights", {"origin": "Shanghai", "destination": "Chengdu",
                                   "date": "2025-11-21", "days": 2}),
    ],
    "2025-12-02 12:10": [  # st-003 noodles near Xi'an position
        ("map_search_places", {"query": "noodles", "center": "34.2610,108.9423"}),
        ("map_search_places", {"query": "noodles", "center": "34.2610,108.9423",
                               "radius": 1000}),
        ("map_search_places", {"query": "noodles", "center": "34.2610,108.9423",
                               "radius": 1000, "sort_by": "rating:d"}),
        ("map_search_places", {"query": "noodle restaurant", "center": "34.2610,108.9423",
                               "radius": 1500, "sort_by": "rating:d"}),
        ("map_search_places", {"query": "noodles", "center": "34.26100,108.94230",
                               "radius": 1000, "min_rating": 4}),
    ],
    "2025-10-30 07:45": [  # st-004 Nanjing South station: drive vs metro
        ("map_compute_routes", {"origin": "32.0415,118.7840", "destination": "31.9688,118.7977"}),
        ("map_compute_routes", {"origin": "32.0415,118.7840", "destination": "31.9688,118.7977",
                                "modes": ["driving", "transit"]}),
        ("map_compute_routes", {"origin": "32.0415,118.7840", "destination": "31.9688,118.7977",
                                "modes": ["driving"], "traffic_aware": True}),
        ("map_compute_routes", {"origin": "32.0415,118.7840", "destination": "31.9688,118.7977",
                                "modes": ["transit"]}),
        ("map_compute_routes", {"origin": "32.04150,118.78400",
                                "destination": "31.96880,118.79770",
                                "modes": ["driving", "transit"]}),
    ],
    "2025-11-08 15:00": [  # st-005 Beijing -> Xi'an trains next Friday
        ("travel_search_trains", {"origin": "Beijing", "destination": "Xi'an",
                                  "date": "2025-11-14"}),
        ("travel_search_trains", {"origin": "Beijing", "destination": "Xi'an",
                                  "date": "2025-11-14", "days": 0}),
    ],
    "2025-11-21 20:00": [  # mt-001 weekend in Suzhou
        ("travel_search_trains", {"origin": "Shanghai", "destination": "Suzhou",
                                  "date": "2025-11-22"}),
        ("travel_search_trains", {"origin": "Suzhou", "destination": "Shanghai",
                                  "date": "2025-11-23"}),
        ("weather_forecast_days", {"location": "Suzhou", "date": "2025-11-22", "days": 1}),
        ("weather_forecast_days", {"location": "Suzhou", "date": "2025-11-22"}),
        ("map_search_ranking_list", {"query": "gardens", "region": "Suzhou"}),
        ("map_search_ranking_list", {"query": "classical gardens", "region": "Suzhou"}),
        ("map_search_places", {"query": "tea house", "region": "Suzhou"}),
        ("map_search_places", {"query": "vegetarian restaurant", "region": "Suzhou"}),
    ],
    "2025-12-05 10:00": [  # mt-002 central hotpot in Chengdu
        ("map_search_central_places", {"query": "hotpot", "origins": [
            "30.6570,104.0660", "30.6960,104.0320", "30.5790,104.0650", "30.6420,104.1240"]}),
        ("map_search_central_places", {"query": "hotpot", "origins": [
            "30.6570,104.0660", "30.6960,104.0320", "30.5790,104.0650", "30.6420,104.1240"],
            "sort_by": "min_max_distance"}),
        ("map_search_central_places", {"query": "hotpot", "origins": [
            "30.6570,104.0660", "30.6960,104.0320", "30.5790,104.0650", "30.6420,104.1240"],
            "price_category": "average_cost", "price_max": 120}),
    ],
    "2025-11-03 06:30": [  # mt-003 EV drive Kunming -> Dali
        ("map_search_along_route", {"query": "EV charging station", "origin": "25.0389,102.7183",
                                    "destination": "25.6065,100.2676"}),
        ("map_search_along_route", {"query": "charging station", "origin": "25.0389,102.7183",
                                    "destination": "25.6065,100.2676"}),
        ("map_compute_routes", {"origin": "25.0389,102.7183", "destination": "25.6065,100.2676"}),
        ("map_compute_routes", {"origin": "25.0389,102.7183", "destination": "25.6065,100.2676",
                                "modes": ["driving"]}),
        ("weather_forecast_days", {"location": "Dali", "date": "2025-11-03"}),
        ("weather_current_conditions", {"location": "Dali"}),
    ],
    "2025-11-27 13:00": [  # mt-004 Guilin hotel next week
        ("map_search_places", {"query": "hotel", "region": "Guilin"}),
        ("map_search_places", {"query": "hotel", "region": "Guilin", "price_category": "price",
                               "price_max": 400}),
        ("map_search_places", {"query": "hotel", "region": "Guilin", "price_category": "price",
                               "price_max": 400, "sort_by": "rating:d"}),
        ("web_search", {"query": "Guilin Li River cruise ticket price"}),
        ("web_search", {"query": "Li River boat trip Guilin"}),
        ("travel_search_trains", {"origin": "Guangzhou", "destination": "Guilin",
                                  "date": "2025-12-01"}),
    ],
}

_CITIES = ["Beijing", "Shanghai", "Hangzhou", "Nanjing", "Chengdu", "Xi'an", "Guangzhou",
           "Shenzhen", "Wuhan", "Xiamen", "Qingdao", "Kunming"]
_PAIRS = [("Beijing", "Shanghai"), ("Guangzhou", "Chengdu"), ("Shenzhen", "Wuhan"),
          ("Hangzhou", "Xiamen"), ("Qingdao", "Beijing"), ("Kunming", "Guangzhou")]


def retrieval_calls() -> dict[str, list[Call]]:
    """Unrelated calls at other task times, so every tool has retrieval examples."""
    out: dict[str, list[Call]] = {}
    start = date(2025, 10, 6)
    for i, city in enumerate(_CITIES):
        day = start + timedelta(days=5 * i)
        time = f"{day.isoformat()} {8 + i % 10:02d}:{(i * 15) % 60:02d}"
        origin, dest = _PAIRS[i % len(_PAIRS)]
        travel_date = (day + timedelta(days=1 + i % 6)).isoformat()
        lat, lon = {"Beijing": (39.9042, 116.4074), "Shanghai": (31.2304, 121.4737),
                    "Hangzhou": (30.2741, 120.1551), "Nanjing": (32.0603, 118.7969),
                    "Chengdu": (30.5728, 104.0668), "Xi'an": (34.3416, 108.9398),
                    "Guangzhou": (23.1291, 113.2644), "Shenzhen": (22.5431, 114.0579),
                    "Wuhan": (30.5928, 114.3055), "Xiamen": (24.4798, 118.0894),
                    "Qingdao": (36.0671, 120.3826), "Kunming": (25.0389, 102.7183)}[city]
        here = f"{lat:.4f},{lon:.4f}"
        there = f"{lat + 0.031:.4f},{lon - 0.027:.4f}"
        calls: list[Call] = [
            ("weather_current_conditions", {"location": city}),
            ("weather_forecast_days", {"location": city, "date": travel_date, "days": 2}),
            ("travel_search_flights", {"origin": origin, "destination": dest,
                                       "date": travel_date}),
            ("travel_search_trains", {"origin": dest, "destination": origin,
                                      "date": travel_date, "days": i % 2}),
            ("map_search_places", {"query": ["coffee", "museum", "pharmacy", "hotel"][i % 4],
                                   "center": here, "radius": 2000}),
            ("map_compute_routes", {"origin": here, "destination": there,
                                    "modes": [["walking"], ["transit"], ["driving", "bicycling"]][
                                        i % 3]}),
        ]
        if i % 2 == 0:
            calls.append(("map_search_along_route", {"query": "petrol station", "origin": here,
                                                     "destination": there}))
            calls.append(("map_search_ranking_list", {"query": ["food", "hotpot", "theme park"][
                i % 3], "region": city, "max_lists": 2}))
        else:
            calls.append(("map_search_central_places", {"query": "restaurant",
                                                        "origins": [here, there]}))
            calls.append(("web_search", {"query": f"{city} museum opening hours"}))
        out[time] = calls
    return out


def cache_key(args: dict[str, Any], task_time: str) -> str:
    """The stored key of one call, exactly as TravelBench's cache manager normalises it."""
    params = json.dumps(args, sort_keys=True, ensure_ascii=False)
    intermediate = json.dumps({"params": params, "time": task_time}, sort_keys=True,
                              ensure_ascii=False)
    return json.dumps(sorted(json.loads(intermediate).items()), separators=(",", ":"),
                      ensure_ascii=False)


def _check_call(tool: str, args: dict[str, Any], task_time: str) -> None:
    """Keep the cache to calls the reference validation accepts (dates within 15 days)."""
    if tool not in TOOLS:
        raise ValueError(f"unknown tool {tool}")
    if "date" in args:
        limit = date.fromisoformat(task_time[:10]) + timedelta(days=15)
        if date.fromisoformat(args["date"]) > limit:
            raise ValueError(f"{tool} {args} is past task time {task_time} + 15 days")


def build_entries() -> dict[str, dict[str, str]]:
    caches: dict[str, dict[str, str]] = {tool: {} for tool in TOOLS}
    for calls_by_time in (TASK_CALLS, retrieval_calls()):
        for task_time, calls in calls_by_time.items():
            for tool, args in calls:
                _check_call(tool, args, task_time)
                caches[tool][cache_key(args, task_time)] = respond(tool, task_time, args)
    return caches


def render(cache: dict[str, str]) -> str:
    return json.dumps(cache, ensure_ascii=False, indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="verify instead of writing")
    args = parser.parse_args(argv)
    caches = build_entries()
    stale = []
    if not args.check:
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
    for tool, cache in caches.items():
        path = CACHE_DIR / f"{tool}_cache.json"
        text = render(cache)
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path))
        else:
            path.write_text(text, encoding="utf-8")
    total = sum(len(c) for c in caches.values())
    if stale:
        print("out of date:\n  " + "\n  ".join(stale), file=sys.stderr)
        return 1
    print(f"{'checked' if args.check else 'wrote'} {total} entries for {len(caches)} tools "
          f"in {CACHE_DIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
