"""The searches over column arrays answer as the SQL reference does, on random calls."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from evaluator.benchmarks.tripbench import searches, searches_sql
from evaluator.benchmarks.tripbench.tools import SPECS
from evaluator.benchmarks.tripbench.world import World


def _random_args(rng, tool: str, world: World) -> dict[str, Any]:
    cities = [r["name"] for r in world.query("SELECT name FROM cities ORDER BY id")]
    a: dict[str, Any] = {"city": rng.choice(cities), "page": rng.choice((1, 1, 2, 3)),
                         "page_size": rng.choice((1, 3, 10, 20))}
    if rng.random() < 0.3:
        a["distance_threshold"] = rng.choice((1, 3, 5, 10))
    if rng.random() < 0.2:
        c = world.city_by_name(a["city"])
        a["latitude"], a["longitude"] = c["lat"] + rng.uniform(-0.05, 0.05), c["lon"]
    if rng.random() < 0.5:
        a["sort_order"] = rng.choice(("asc", "desc"))
    if tool == "search_restaurants":
        a["sort_key"] = rng.choice(("rating", "price", "distance"))
        for key, values in (("categories", (["Hotpot"], ["cuisine"], ["noodle", "dim"])),
                            ("price_max", (60, 100)), ("price_min", (40,)),
                            ("stars", (3.5, 4.2)), ("review_count", (50, 300)),
                            ("service_rating", (7.5, 8.5)), ("reservable", (True, False)),
                            ("restaurant_name", ("Lotus", "a", " house ", "%", "s_k"))):
            if rng.random() < 0.25:
                a[key] = rng.choice(values)
    elif tool == "search_hotels":
        a.update({"check_in_date": "2025-10-02", "check_out_date": "2025-10-04",
                  "sort_key": rng.choice(("rating", "price", "distance", "star"))})
        for key, values in (("price_max", (300, 600)), ("price_min", (200,)),
                            ("room_types", (["King"], ["twin", "suite"])),
                            ("has_breakfast", (True, False)),
                            ("cancel_policy", ("free_24h", "free_until_checkin")),
                            ("hotel_type", (["upscale"], ["premium", "economy"])),
                            ("stars", (3, 4)), ("rating", (4.0,)), ("review_count", (100,)),
                            ("good_remarks_rate", (90,)), ("product_rating", (8.0,)),
                            ("is_pet_friendly", (True, False)), ("brand", ("hilton", "Ibis")),
                            ("hotel_name", ("Inn",))):
            if rng.random() < 0.2:
                a[key] = rng.choice(values)
    else:
        a["sort_key"] = rng.choice(("heat", "rating", "comment_count", "sight_level", "price",
                                    "distance"))
        for key, values in (("categories", (["park"], ["museum", "temple"])),
                            ("rating", (4.0,)), ("sight_level", (3,)),
                            ("comment_count", (200,)), ("free_only", (True,)),
                            ("attraction_name", ("Park",))):
            if rng.random() < 0.25:
                a[key] = rng.choice(values)
    return a


@pytest.mark.parametrize("tool", ["search_attractions", "search_hotels", "search_restaurants"])
def test_column_searches_answer_as_the_sql_reference(world: World, tool: str) -> None:
    """The searches over column arrays give the SQL reference's answers (same rows, order,
    totals, prices and distances) on 300 random calls each."""
    rng = random.Random(f"equal/{tool}")
    nonempty = 0
    for _ in range(300):
        args = SPECS[tool].bind(_random_args(rng, tool, world))
        got = getattr(searches, tool)(world, **args)
        want = getattr(searches_sql, tool)(world, **args)
        assert json.loads(json.dumps(got)) == json.loads(json.dumps(want)), args
        nonempty += bool(got["results"])
    assert nonempty > 60
