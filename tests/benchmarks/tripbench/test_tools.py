"""The 18 tools on the small world: answers, filters, sorting, pagination and every error."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cache_store.types import ERROR_CATEGORIES
from evaluator.benchmarks.tripbench.tools import TOOL_NAMES, call, execute, tool_schemas
from evaluator.benchmarks.tripbench.world import World, open_world
from evaluator.benchmarks.tripbench.world.geo import route_estimate

STAY = {"check_in_date": "2025-10-02", "check_out_date": "2025-10-04"}
PAPER_TOOLS = (
    "search_attractions", "get_attraction_detail_with_products", "get_attraction_coordinates",
    "search_hotels", "get_hotel_detail_with_products", "get_hotel_coordinates",
    "search_flights", "get_flight_detail_with_products", "get_airport_coordinates",
    "search_trains", "get_train_detail_with_products", "get_station_coordinates",
    "search_restaurants", "get_restaurant_detail_with_products", "get_restaurant_coordinates",
    "get_route_estimate", "get_city_center_coords", "get_date_after")


def ok(world: World, name: str, **args: Any) -> dict[str, Any]:
    result = execute(world, name, args)
    assert result.category is None, result.content
    return json.loads(result.content)


def err(world: World, name: str, args: Any, category: str, match: str = "") -> str:
    result = execute(world, name, args)
    assert result.category == category, result.content
    message = json.loads(result.content)["error"]
    assert match.lower() in message.lower()
    return message


def test_the_papers_18_tools_and_their_schemas() -> None:
    assert TOOL_NAMES == PAPER_TOOLS
    schemas = tool_schemas()
    assert [s["function"]["name"] for s in schemas] == list(PAPER_TOOLS)
    for s in schemas:
        params = s["function"]["parameters"]
        assert s["type"] == "function" and params["type"] == "object"
        assert set(params["required"]) <= set(params["properties"])
        for prop in params["properties"].values():
            assert prop["type"] in ("string", "number", "integer", "boolean", "array")
            assert prop["description"]
    assert tool_schemas() is not schemas                         # fresh copies
    hotel = schemas[3]["function"]["parameters"]
    assert hotel["required"] == ["city", "check_in_date", "check_out_date"]
    assert hotel["properties"]["hotel_type"]["items"]["enum"][:4] == [
        "economy", "midscale", "upscale", "luxury"]
    flights = schemas[6]["function"]["parameters"]["properties"]
    assert flights["sort_key"]["enum"] == ["time", "price", "duration"]
    assert flights["page_size"]["maximum"] == 50


# -- attractions ---------------------------------------------------------------------------

def test_search_attractions_filters_sort_and_pages(world: World) -> None:
    everything = ok(world, "search_attractions", city="Hangzhou", page_size=50)
    n = world.one("SELECT COUNT(*) AS n FROM attractions WHERE city_id = 'C0002'")["n"]
    assert everything["total"] == n == len(everything["results"])
    heats = [r["heat_score"] for r in everything["results"]]
    assert heats == sorted(heats, reverse=True)                  # default: most popular first
    page2 = ok(world, "search_attractions", city="hangzhou", page=2, page_size="3")
    assert page2["showing"] == f"4-6 of {n}"
    assert [r["id"] for r in page2["results"]] == [r["id"] for r in everything["results"][3:6]]
    cheap = ok(world, "search_attractions", city="Hangzhou", sort_key="price",
               page_size=50)["results"]
    assert [r["min_price"] for r in cheap] == sorted(r["min_price"] for r in cheap)
    free = ok(world, "search_attractions", city="Hangzhou", free_only="true")["results"]
    assert free and all(r["min_price"] == 0 for r in free)
    cat = everything["results"][0]["category"]
    by_cat = ok(world, "search_attractions", city="Hangzhou", categories=[cat.upper()],
                page_size=50)["results"]
    assert by_cat and all(r["category"] == cat for r in by_cat)
    good = ok(world, "search_attractions", city="Hangzhou", rating=4.5, sight_level=4,
              comment_count=10)["results"]
    assert good and all(r["comment_score"] >= 4.5 and r["sight_level"] >= 4 for r in good)
    near = ok(world, "search_attractions", city="Hangzhou", distance_threshold=8,
              sort_key="distance", page_size=50)["results"]
    dists = [r["distance_km"] for r in near]
    assert dists == sorted(dists) and all(d <= 8 for d in dists)
    assert len(near) == sum(r["distance_km"] <= 8 for r in everything["results"])
    named = everything["results"][0]["name"]
    assert ok(world, "search_attractions", city="Hangzhou",
              attraction_name=named.split()[-1].lower())["total"] >= 1
    none = ok(world, "search_attractions", city="Hangzhou", attraction_name="zzzz")
    assert none["total"] == 0 and none["results"] == [] and "No matching" in none["message"]
    past = ok(world, "search_attractions", city="Hangzhou", page=99)
    assert past["results"] == [] and past["total"] == n and "past the end" in past["message"]


def test_distance_from_a_given_point(world: World) -> None:
    a = world.attraction("A000001")
    out = ok(world, "search_attractions", city="Shanghai", latitude=a["lat"],
             longitude=a["lon"], sort_key="distance", page_size=1)
    assert out["results"][0]["id"] == "A000001" and out["results"][0]["distance_km"] == 0
    err(world, "search_attractions", {"city": "Shanghai", "latitude": 31.2}, "missing_required",
        "both latitude and longitude")


def test_distance_in_sql_equals_the_python_function(world_path) -> None:
    with open_world(world_path) as sql, open_world(world_path) as py:
        py.sql_math = False                       # SQLite without math functions: dist_km()
        for tool, city in (("search_restaurants", "Shanghai"), ("search_attractions", "Nanjing")):
            args = {"city": city, "sort_key": "distance", "distance_threshold": 6,
                    "page_size": 50}
            assert call(sql, tool, args) == call(py, tool, args)
            assert json.loads(call(sql, tool, args))["total"] > 0


def test_attraction_detail_and_coordinates(world: World) -> None:
    detail = ok(world, "get_attraction_detail_with_products", poi_id="A000001")
    assert detail["attraction"]["city"] == "Shanghai" and detail["products"]
    prices = [p["price"] for p in detail["products"]]
    assert prices == sorted(prices)
    assert set(detail["products"][0]) == {"product_id", "name", "price"}
    assert isinstance(detail["attraction"]["closed_on"], list)
    coords = ok(world, "get_attraction_coordinates", poi_id="A000001")
    a = world.attraction("A000001")
    assert (coords["lat"], coords["lon"]) == (a["lat"], a["lon"])
    err(world, "get_attraction_coordinates", {"poi_id": "A999999"}, "not_found", "A999999")
    err(world, "get_attraction_detail_with_products", {"poi_id": "H000001"}, "not_found")


# -- hotels ------------------------------------------------------------------------------

def test_search_hotels(world: World) -> None:
    out = ok(world, "search_hotels", city="Shanghai", **STAY, sort_key="price", page_size=50)
    assert out["nights"] == 2 and out["total"] == len(out["results"]) > 0
    prices = [r["min_price_per_night"] for r in out["results"]]
    assert prices == sorted(prices)
    first = out["results"][0]
    assert first["min_total_price"] == first["min_price_per_night"] * 2
    cheapest_room = world.one("SELECT MIN(price) AS p FROM hotel_rooms WHERE hotel_id = ?",
                              (first["id"],))["p"]
    assert first["min_price_per_night"] == cheapest_room
    capped = ok(world, "search_hotels", city="Shanghai", **STAY, price_min=200, price_max=500,
                page_size=50)["results"]
    assert capped and all(200 <= r["min_price_per_night"] <= 500 for r in capped)
    lux = ok(world, "search_hotels", city="Shanghai", **STAY, hotel_type=["luxury", "upscale"],
             stars=4, page_size=50)["results"]
    assert lux and all(r["star"] >= 4 and r["hotel_type"] in ("luxury", "upscale") for r in lux)
    pets = ok(world, "search_hotels", city="Shanghai", **STAY, is_pet_friendly=True,
              has_breakfast="false", page_size=50)["results"]
    assert pets and all("pet-friendly" in r["facilities"] for r in pets)
    for r in pets:      # a room without breakfast: the nightly price is that room's
        assert world.one("SELECT MIN(price) AS p FROM hotel_rooms WHERE hotel_id = ? AND "
                         "breakfast = 0", (r["id"],))["p"] == r["min_price_per_night"]
    kings = ok(world, "search_hotels", city="Shanghai", **STAY, room_types="King",
               page_size=50)["results"]
    assert kings
    for r in kings:
        assert world.one("SELECT COUNT(*) AS n FROM hotel_rooms WHERE hotel_id = ? AND name "
                         "LIKE '%King%'", (r["id"],))["n"] > 0
    rated = ok(world, "search_hotels", city="Shanghai", **STAY, rating=4.0)["results"]
    scores = [r["score"] for r in rated]
    assert scores and all(s >= 4.0 for s in scores) and scores == sorted(scores, reverse=True)
    near = ok(world, "search_hotels", city="Shanghai", **STAY, distance_threshold=4,
              sort_key="distance", sort_order="desc")["results"]
    assert near and all(r["distance_km"] <= 4 for r in near)
    assert [r["distance_km"] for r in near] == sorted((r["distance_km"] for r in near),
                                                      reverse=True)


def test_search_hotels_errors(world: World) -> None:
    err(world, "search_hotels", {"city": "Shanghai", "check_in_date": "2025-10-02"},
        "missing_required", "check_out_date")
    err(world, "search_hotels", {"city": "Shanghai", "check_in_date": "2025-10-04",
                                 "check_out_date": "2025-10-02"}, "out_of_range", "1 to 30")
    err(world, "search_hotels", {"city": "Shanghai", "check_in_date": "2025/10/02",
                                 "check_out_date": "2025-10-04"}, "out_of_range", "YYYY-MM-DD")
    err(world, "search_hotels", {"city": "Shanghai", "check_in_date": "2025-02-30",
                                 "check_out_date": "2025-03-04"}, "out_of_range")
    err(world, "search_hotels", {"city": "Shanghai", **STAY, "hotel_type": ["palace"]},
        "bad_enum", "economy")
    err(world, "search_hotels", {"city": "Shanghai", **STAY, "stars": 9}, "out_of_range")
    err(world, "search_hotels", {"city": "Shanghai", **STAY, "good_remarks_rate": 101},
        "out_of_range")
    err(world, "search_hotels", {"city": "Shanghai", **STAY, "floor": 3},
        "unknown_parameter", "its parameters are")
    err(world, "search_hotels", {"city": "Shanghai", **STAY, "cancel_policy": "whenever"},
        "bad_enum", "free_24h")
    err(world, "search_hotels", {"city": "Atlantis", **STAY}, "not_found", "Shanghai")


def test_hotel_detail_occupancy_and_pages(world: World) -> None:
    hotel = world.query("SELECT hotel_id FROM hotel_rooms GROUP BY hotel_id "
                        "HAVING COUNT(*) >= 3 ORDER BY hotel_id LIMIT 1")[0]["hotel_id"]
    rooms = world.query("SELECT * FROM hotel_rooms WHERE hotel_id = ?", (hotel,))
    out = ok(world, "get_hotel_detail_with_products", hotel_id=hotel, **STAY, person_num=3,
             room_num=1)
    fits = [r for r in rooms if r["capacity"] >= 3]
    assert out["total"] == len(fits) == len(out["products"])
    assert len(out["not_meeting_occupancy"]) == len(rooms) - len(fits)
    two = ok(world, "get_hotel_detail_with_products", hotel_id=hotel, **STAY, person_num=3,
             room_num=2, page_size=1)
    assert two["total"] == len(rooms) and len(two["products"]) == 1
    p = two["products"][0]
    assert p["total_price"] == p["price_per_night"] * 2 * 2 and p["nights"] == 2
    assert p["price_per_night"] == min(r["price"] for r in rooms)
    typed = ok(world, "get_hotel_detail_with_products", hotel_id=hotel, **STAY,
               room_type=rooms[0]["name"].split()[1])
    assert all(rooms[0]["name"].split()[1] in r["room_type"] for r in typed["products"])
    assert ok(world, "get_hotel_coordinates", hotel_id=hotel)["id"] == hotel
    err(world, "get_hotel_detail_with_products", {"hotel_id": "H999999", **STAY}, "not_found")
    err(world, "get_hotel_detail_with_products", {"hotel_id": hotel, **STAY, "room_num": 0},
        "out_of_range")
    err(world, "get_hotel_detail_with_products", {"hotel_id": hotel, **STAY, "floor": 1},
        "unknown_parameter")
    err(world, "get_hotel_coordinates", {"hotel_id": "nope"}, "not_found")


# -- flights and trains ------------------------------------------------------------------

def test_search_flights_and_detail(world: World) -> None:
    f = world.flight("F0000001")
    src, dst = world.city(f["from_city"])["name"], world.city(f["to_city"])["name"]
    out = ok(world, "search_flights", departure_city=src, arrival_city=dst, date=f["date"])
    assert out["total"] >= 1 and any(r["id"] == "F0000001" for r in out["results"])
    times = [r["dep_time"] for r in out["results"]]
    assert times == sorted(times)
    by_price = ok(world, "search_flights", departure_city=src, arrival_city=dst,
                  date_str=f["date"], sort_key="price", sort_order="desc")["results"]
    prices = [r["min_price"] for r in by_price]
    assert prices == sorted(prices, reverse=True)
    mine = next(r for r in by_price if r["id"] == "F0000001")
    cheapest = world.one("SELECT MIN(price) AS p FROM flight_seats WHERE flight_id = "
                         "'F0000001' AND remaining > 0")["p"]
    assert mine["min_price"] == cheapest
    window = ok(world, "search_flights", departure_city=src, arrival_city=dst, date=f["date"],
                dep_period="12:00-23:59")["results"]
    assert all("12:00" <= r["dep_time"] <= "23:59" for r in window)
    morning = ok(world, "search_flights", departure_city=src, arrival_city=dst,
                 date=f["date"], dep_period="morning")["results"]
    assert all("06:00" <= r["dep_time"] <= "12:00" for r in morning)
    outside = ok(world, "search_flights", departure_city=src, arrival_city=dst,
                 date="2030-01-01")
    assert outside["total"] == 0 and "2025-10-01 to 2025-10-07" in outside["note"]
    detail = ok(world, "get_flight_detail_with_products", flight_id="F0000001", date=f["date"])
    assert detail["flight"]["departure_city"] == src and detail["products"]
    assert {p["cabin"] for p in detail["products"]} <= {"economy", "business", "first"}
    eco = ok(world, "get_flight_detail_with_products", flight_id="F0000001", date=f["date"],
             seat_type="Economy")["products"]
    assert [p["cabin"] for p in eco] == ["economy"]
    err(world, "get_flight_detail_with_products", {"flight_id": "F0000001",
                                                   "date": "2025-10-06"}, "out_of_range",
        f"runs on {f['date']}")
    err(world, "get_flight_detail_with_products", {"flight_id": "F9999999", "date": f["date"]},
        "not_found")
    err(world, "get_flight_detail_with_products", {"flight_id": "F0000001", "date": f["date"],
                                                   "seat_type": "premium"}, "bad_enum")
    err(world, "search_flights", {"departure_city": src, "arrival_city": dst, "date": f["date"],
                                  "dep_period": "25:00-26:00"}, "out_of_range", "HH:MM")
    err(world, "search_flights", {"departure_city": src, "arrival_city": dst, "date": f["date"],
                                  "source_platform": "x"}, "unknown_parameter")
    err(world, "search_flights", {"departure_city": "Nowhere", "arrival_city": dst,
                                  "date": f["date"]}, "not_found", "departure_city")


def test_search_trains_and_detail(world: World) -> None:
    t = world.train("T0000001")
    src, dst = world.city(t["from_city"])["name"], world.city(t["to_city"])["name"]
    out = ok(world, "search_trains", departure_city=src, arrival_city=dst, date_str=t["date"],
             sort_key="duration", page_size=1)
    assert len(out["results"]) == 1 and out["total"] >= 1
    fastest = world.one("SELECT MIN(duration_min) AS d FROM trains WHERE from_city = ? AND "
                        "to_city = ? AND date = ?", (t["from_city"], t["to_city"], t["date"]))
    assert out["results"][0]["duration_min"] == fastest["d"]
    arr = ok(world, "search_trains", departure_city=src, arrival_city=dst, date_str=t["date"],
             arr_period="00:00-12:00")["results"]
    assert all(r["arr_time"] <= "12:00" for r in arr)
    detail = ok(world, "get_train_detail_with_products", train_id="T0000001",
                date_str=t["date"])
    assert detail["train"]["number"] == t["number"] and detail["products"]
    seat = detail["products"][0]["seat_class"]
    only = ok(world, "get_train_detail_with_products", train_id="T0000001",
              date_str=t["date"], seat_type=seat)["products"]
    assert {p["seat_class"] for p in only} == {seat}
    other = "hard seat" if seat != "hard seat" else "second class"
    empty = ok(world, "get_train_detail_with_products", train_id="T0000001",
               date_str=t["date"], seat_type=other)
    assert empty["products"] == [] and "No ticket products" in empty["message"]
    err(world, "get_train_detail_with_products", {"train_id": "T0000001"}, "missing_required")
    err(world, "search_trains", {"departure_city": src, "arrival_city": dst,
                                 "date_str": "tomorrow"}, "out_of_range", "YYYY-MM-DD")


def test_overnight_arrival_is_flagged(world: World) -> None:
    row = world.one("SELECT * FROM trains WHERE arr_time < dep_time ORDER BY id LIMIT 1")
    if row is None:
        pytest.skip("no overnight train in this world")
    detail = ok(world, "get_train_detail_with_products", train_id=row["id"],
                date_str=row["date"])
    assert detail["train"]["arrives_next_day"] is True


def test_airport_and_station_coordinates(world: World) -> None:
    f = world.flight("F0000001")
    exact = ok(world, "get_airport_coordinates", airport_name=f["from_airport"].upper())
    assert exact["match"] == "exact" and (exact["lat"], exact["lon"]) == (f["from_lat"],
                                                                           f["from_lon"])
    fuzzy = ok(world, "get_airport_coordinates", airport_name="pudong")
    assert fuzzy["match"] == "fuzzy" and fuzzy["name"].startswith("Shanghai Pudong")
    typo = ok(world, "get_station_coordinates", station_name="Hangzou Station")
    assert typo["name"] == "Hangzhou Station" and typo["city"] == "Hangzhou"
    err(world, "get_airport_coordinates", {"airport_name": "Qqqqq Xxxx"}, "not_found")
    err(world, "get_station_coordinates", {"station_name": 12}, "wrong_type")


# -- restaurants --------------------------------------------------------------------------

def test_search_restaurants(world: World) -> None:
    out = ok(world, "search_restaurants", city="Suzhou", page_size=50)
    scores = [r["score"] for r in out["results"]]
    assert scores == sorted(scores, reverse=True) and out["total"] == len(scores)
    cuisine = out["results"][0]["cuisine"]
    same = ok(world, "search_restaurants", city="Suzhou", categories=cuisine.split()[0].lower(),
              page_size=50)["results"]
    assert same and all(cuisine.split()[0] in r["cuisine"] for r in same)
    cheap = ok(world, "search_restaurants", city="Suzhou", price_min=30, price_max=100,
               stars="3.5", sort_key="price", page_size=50)["results"]
    assert cheap and all(30 <= r["avg_price"] <= 100 and r["score"] >= 3.5 for r in cheap)
    assert [r["avg_price"] for r in cheap] == sorted(r["avg_price"] for r in cheap)
    near = ok(world, "search_restaurants", city="Suzhou", distance_threshold=2)["results"]
    assert near and all(r["distance_km"] <= 2 for r in near)
    err(world, "search_restaurants", {"city": "Suzhou", "halal": True},
        "unknown_parameter")
    err(world, "search_restaurants", {"city": "Suzhou", "sort_key": "spiciness"}, "bad_enum")
    err(world, "search_restaurants", {"city": "Suzhou", "page_size": 500}, "out_of_range")
    err(world, "search_restaurants", {"city": "Suzhou", "page": "two"}, "wrong_type")
    err(world, "search_restaurants", {"city": "Suzhou", "page": 1.5}, "wrong_type")


def test_restaurant_detail_and_coordinates(world: World) -> None:
    with_menu = world.query("SELECT restaurant_id FROM restaurant_products LIMIT 1")[0]
    detail = ok(world, "get_restaurant_detail_with_products",
                restaurant_id=with_menu["restaurant_id"])
    assert detail["products"] and "message" not in detail
    assert set(detail["products"][0]) == {"product_id", "name", "people", "price"}
    assert {"review_count", "product_rating", "reservable", "must_reserve"} <= set(
        detail["restaurant"])
    bare = world.one("SELECT id FROM restaurants WHERE id NOT IN "
                     "(SELECT restaurant_id FROM restaurant_products) LIMIT 1")["id"]
    plain = ok(world, "get_restaurant_detail_with_products", restaurant_id=bare)
    assert plain["products"] == [] and "order on site" in plain["message"]
    assert ok(world, "get_restaurant_coordinates", restaurant_id=bare)["id"] == bare
    err(world, "get_restaurant_coordinates", {"restaurant_id": "R999999"}, "not_found")
    err(world, "get_restaurant_detail_with_products", {}, "missing_required", "restaurant_id")


# -- general tools and the call layer ------------------------------------------------------

def test_general_tools(world: World) -> None:
    est = ok(world, "get_route_estimate", origin_lat="31.555366", origin_lng="120.302786",
             destination_lat="31.512471", destination_lng="120.281905")
    km, minutes = route_estimate(31.555366, 120.302786, 31.512471, 120.281905)
    assert (est["distance_km"], est["estimated_travel_time_min"]) == (km, minutes)
    assert 5.0 < km < 5.3 and minutes == 20
    assert est["summary"] == f"distance: {km:.2f} km, estimated travel time: 20 min"
    err(world, "get_route_estimate", {"origin_lat": 91, "origin_lng": 0, "destination_lat": 0,
                                      "destination_lng": 0}, "out_of_range")
    centre = ok(world, "get_city_center_coords", city_name="NANJING")
    assert centre == {"city": "Nanjing", "lon": 118.7969, "lat": 32.0603}
    err(world, "get_city_center_coords", {"city_name": "Yixing"}, "not_found",
        "No city center coordinates found for the given city name: Yixing.")
    assert ok(world, "get_date_after", date_str="2025-10-24", days="3") == {
        "date": "2025-10-27", "weekday": "Monday"}
    assert ok(world, "get_date_after", date_str="2025-03-01", days=-1)["date"] == "2025-02-28"
    err(world, "get_date_after", {"date_str": "2025-10-24", "days": "three"}, "wrong_type")
    err(world, "get_date_after", {"date_str": "2025-13-01", "days": 1}, "out_of_range")


def test_call_layer_errors(world: World) -> None:
    err(world, "book_hotel", {}, "unknown_tool", "search_hotels")
    err(world, "get_date_after", "{not json", "malformed_json")
    err(world, "get_date_after", "[1, 2]", "malformed_json", "JSON object")
    err(world, "get_date_after", {"date_str": True, "days": 1}, "wrong_type")
    err(world, "get_date_after", {"date_str": "2025-10-01", "days": True}, "wrong_type")
    err(world, "search_attractions", {"city": "Shanghai", "free_only": "maybe"}, "wrong_type")
    err(world, "search_attractions", {"city": "Shanghai", "categories": [1]}, "wrong_type")
    # null means "not given"; JSON text and dicts give the same answer
    assert call(world, "search_attractions", '{"city": "Shanghai", "rating": null}') == \
        call(world, "search_attractions", {"city": "Shanghai"})
    assert execute(world, "x", {}).category in ERROR_CATEGORIES
