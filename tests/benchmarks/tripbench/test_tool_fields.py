"""The tools' fields of the paper's other rubrics (reviews, ratings, rooms, reservations,
platforms, punctuality) and their text answers, the paper's rendering."""

from __future__ import annotations

from typing import Any

from evaluator.benchmarks.tripbench.tools import execute
from evaluator.benchmarks.tripbench.world import World, names

from .test_tools import STAY, err, ok

# -- the fields of the paper's other rubrics (B.2) ------------------------------------------


def test_hotel_filters_on_reviews_ratings_and_rooms(world: World) -> None:
    every = ok(world, "search_hotels", city="Shanghai", **STAY, page_size=50)["results"]
    assert all({"review_count", "good_rate", "product_rating", "environment_rating",
                "service_rating"} <= set(h) for h in every)
    for args, keep in (({"review_count": 200}, lambda h: h["review_count"] >= 200),
                       ({"good_remarks_rate": "93"}, lambda h: h["good_rate"] >= 93),
                       ({"service_rating": 8.5}, lambda h: h["service_rating"] >= 8.5),
                       ({"environment_rating": 8}, lambda h: h["environment_rating"] >= 8)):
        got = ok(world, "search_hotels", city="Shanghai", **STAY, page_size=50, **args)
        assert sorted(h["id"] for h in got["results"]) == sorted(
            h["id"] for h in every if keep(h)), args
    flexible = ok(world, "search_hotels", city="Shanghai", **STAY, page_size=50,
                  cancel_policy="free_24h")["results"]
    for h in every:
        rooms = world.query("SELECT cancel_policy FROM hotel_rooms WHERE hotel_id = ?",
                            (h["id"],))
        ok_room = any(r["cancel_policy"] in ("free_until_checkin", "free_24h") for r in rooms)
        assert (h["id"] in {x["id"] for x in flexible}) == ok_room
    breakfast = ok(world, "search_hotels", city="Shanghai", **STAY, page_size=50,
                   has_breakfast=True)["results"]
    assert all("breakfast" in h["facilities"] for h in breakfast)
    hotel = world.one("SELECT hotel_id FROM hotel_rooms WHERE breakfast = 2 LIMIT 1")["hotel_id"]
    rooms = world.query("SELECT * FROM hotel_rooms WHERE hotel_id = ?", (hotel,))
    two = ok(world, "get_hotel_detail_with_products", hotel_id=hotel, **STAY,
             min_breakfast_per_room=2)["products"]
    assert two and all(p["breakfast_per_room"] >= 2 for p in two)
    assert len(two) == sum(r["breakfast"] >= 2 for r in rooms)
    windowless = ok(world, "get_hotel_detail_with_products", hotel_id=hotel, **STAY,
                    has_window=False)["products"]
    assert len(windowless) == sum(not r["has_window"] for r in rooms)
    strict = ok(world, "get_hotel_detail_with_products", hotel_id=hotel, **STAY,
                cancel_policy="free_until_checkin")["products"]
    assert all(p["cancel_policy"] == "free_until_checkin" for p in strict)
    assert all(p["cancellation"].startswith(("free", "non")) for p in two)


def test_restaurant_filters_on_reviews_subratings_and_reservations(world: World) -> None:
    every = ok(world, "search_restaurants", city="Shanghai", page_size=50)["results"]
    for args, keep in (({"review_count": 150}, lambda r: r["review_count"] >= 150),
                       ({"product_rating": 8.5}, lambda r: r["product_rating"] >= 8.5),
                       ({"reservable": "true"}, lambda r: r["reservable"]),
                       ({"reservable": False}, lambda r: not r["reservable"])):
        got = ok(world, "search_restaurants", city="Shanghai", page_size=50, **args)
        assert sorted(r["id"] for r in got["results"]) == sorted(
            r["id"] for r in every if keep(r)), args
    assert all(r["reservable"] or not r["must_reserve"] for r in every)


def test_punctuality_and_booking_platforms(world: World) -> None:
    f = world.flight("F0000001")
    detail = ok(world, "get_flight_detail_with_products", flight_id="F0000001", date=f["date"])
    assert (detail["flight"]["on_time_rate"], detail["flight"]["avg_delay_min"]) == (
        f["on_time_rate"], f["avg_delay_min"])
    platforms = {p["platform"] for p in detail["products"]}
    assert platforms and platforms <= set(names.FLIGHT_PLATFORMS)
    one = min(platforms)
    only = ok(world, "get_flight_detail_with_products", flight_id="F0000001", date=f["date"],
              source_platform=one.lower())["products"]
    assert only and {p["platform"] for p in only} == {one}
    err(world, "get_flight_detail_with_products", {"flight_id": "F0000001", "date": f["date"],
                                                   "source_platform": "12306"}, "bad_enum")
    t = world.train("T0000001")
    seats = ok(world, "get_train_detail_with_products", train_id="T0000001",
               date_str=t["date"], source_platform="12306")["products"]
    assert all(p["platform"] == "12306" for p in seats)


# -- the paper's text rendering ------------------------------------------------------------


def test_text_answers_follow_the_papers_lines(world: World) -> None:
    def text(tool: str, **args: Any) -> str:
        out = execute(world, tool, args, "text")
        assert not out.is_error, out.content
        return out.content

    t = world.train("T0000001")
    src, dst = world.city(t["from_city"])["name"], world.city(t["to_city"])["name"]
    trains = text("search_trains", departure_city=src, arrival_city=dst, date_str=t["date"])
    first, *rows = trains.splitlines()
    assert first.startswith("Showing 1-") and first.endswith(" results.")
    assert rows and all(r.startswith("Train_id: T") and " → " in r and "minimum price: " in r
                        for r in rows)
    assert f"Train_id: T0000001 | {t['number']} | {t['dep_time']}-{t['arr_time']}" in trains
    assert text("search_flights", departure_city=src, arrival_city=dst,
                date="2030-01-01").startswith("No matching flights found.")
    assert text("get_route_estimate", origin_lat=31.555366, origin_lng=120.302786,
                destination_lat=31.512471, destination_lng=120.281905) == \
        "distance: 5.16 km, estimated travel time: 20 min"
    assert text("get_date_after", date_str="2025-10-24", days=3) == "2025-10-27"
    hotels = text("search_hotels", city="Shanghai", **STAY, page_size=3).splitlines()
    assert hotels[0].startswith("Showing 1-3 of ") and hotels[1].startswith("Hotel_id: H")
    assert "| type: " in hotels[1] and "review_count: " in hotels[1]
    free = world.one("SELECT id FROM attractions WHERE id NOT IN (SELECT attraction_id FROM "
                     "attraction_products) LIMIT 1")["id"]
    detail = text("get_attraction_detail_with_products", poi_id=free)
    assert detail.startswith(f"POI ID: {free} | ") and "ticket price: Free" in detail
    menu = world.one("SELECT restaurant_id FROM restaurant_products LIMIT 1")["restaurant_id"]
    assert "| product_id: RP" in text("get_restaurant_detail_with_products",
                                      restaurant_id=menu)
    bad = execute(world, "get_hotel_coordinates", {"hotel_id": "H0"}, "text")
    assert bad.category == "not_found" and bad.content == "Error: no hotel with id 'H0'"


def test_every_call_shape_renders_as_text(world: World) -> None:
    from perf.tripbench_world import sample_calls

    for name, args in sample_calls(world, 6):
        out = execute(world, name, args, "text")
        assert out.category in (None, "not_found", "out_of_range"), (name, args, out.content)
        assert out.content and not out.content.startswith("{"), (name, out.content[:80])
