"""The attraction, hotel and restaurant tools (paper appendix B.1.1, B.1.2, B.1.5): details,
coordinates and the tool declarations; the searches are in searches.py."""

from __future__ import annotations

from typing import Any

from evaluator.benchmarks.base import deferred

from .poi_common import (
    ATTRACTION_SORT,
    CANCEL_POLICIES,
    ESC,
    HOTEL_SORT,
    POLICY_WORDS,
    RATINGS,
    RESTAURANT_SORT,
    TIER_WORDS,
    as_flexible,
    attraction_out,
    hotel_out,
    like,
    nights_of,
    not_found,
    restaurant_out,
)
from .search import paged
from .toolspec import LOCATION, PAGE, Param, ToolSpec, sort_params
from .world import names
from .world.db import World

# searches.py is imported on a run's first search: the column searches need numpy, a process
# that only parses a command line or a config does not
_SEARCHES = f"{__package__}.searches"
search_attractions = deferred(_SEARCHES, "search_attractions")
search_hotels = deferred(_SEARCHES, "search_hotels")
search_restaurants = deferred(_SEARCHES, "search_restaurants")

# -- attractions -------------------------------------------------------------------------------


def get_attraction_detail_with_products(world: World, poi_id: str) -> dict[str, Any]:
    row = world.attraction(poi_id)
    if row is None:
        raise not_found("attraction", poi_id)
    city = world.city(row.pop("city_id"))
    products = world.query("SELECT id AS product_id, name, price FROM attraction_products "
                           "WHERE attraction_id = ? ORDER BY price, id", (poi_id,))
    out: dict[str, Any] = {"attraction": {**attraction_out(row),
                                          "city": city["name"] if city else None},
                           "products": products}
    if not products or min(p["price"] for p in products) == 0:
        out["message"] = "Free admission: no ticket is needed (plan it with products [])."
    return out


def _coordinates(row: dict[str, Any] | None, kind: str, key: str) -> dict[str, Any]:
    """Id, name and coordinates of a place row; not_found when there is none."""
    if row is None:
        raise not_found(kind, key)
    return {"id": row["id"], "name": row["name"], "lat": row["lat"], "lon": row["lon"]}


def get_attraction_coordinates(world: World, poi_id: str) -> dict[str, Any]:
    return _coordinates(world.attraction(poi_id), "attraction", poi_id)


# -- hotels ----------------------------------------------------------------------------------



def get_hotel_detail_with_products(world: World, **a: Any) -> dict[str, Any]:
    hotel = world.hotel(a["hotel_id"])
    if hotel is None:
        raise not_found("hotel", a["hotel_id"])
    nights = nights_of(a)
    city = world.city(hotel.pop("city_id"))
    sql = ("SELECT id AS product_id, name AS room_type, capacity, price AS price_per_night, "
           "breakfast AS breakfast_per_room, cancel_policy, has_window "
           "FROM hotel_rooms WHERE hotel_id = ?")
    params: list[Any] = [hotel["id"]]
    if a["room_type"]:
        sql, params = sql + f" AND name LIKE ? ESCAPE {ESC}", params + [like(a["room_type"])]
    if a["min_breakfast_per_room"] is not None:
        sql, params = sql + " AND breakfast >= ?", params + [a["min_breakfast_per_room"]]
    if a["cancel_policy"]:
        flexible = as_flexible(a["cancel_policy"])
        sql += f" AND cancel_policy IN ({','.join('?' * len(flexible))})"
        params += flexible
    if a["has_window"] is not None:
        sql, params = sql + " AND has_window = ?", params + [int(a["has_window"])]
    fits, others = [], []
    for room in world.query(sql + " ORDER BY price, id", params):
        room["has_window"] = bool(room["has_window"])
        room["cancellation"] = names.CANCEL_POLICIES[room["cancel_policy"]][0] \
            if room["cancel_policy"] in names.CANCEL_POLICIES else room["cancel_policy"]
        room["room_num"], room["nights"] = a["room_num"], nights
        room["total_price"] = round(room["price_per_night"] * a["room_num"] * nights, 2)
        (fits if room["capacity"] * a["room_num"] >= a["person_num"] else others).append(room)
    first = (a["page"] - 1) * a["page_size"]
    out = {"hotel": {**hotel_out(hotel), "city": city["name"] if city else None},
           "check_in_date": a["check_in_date"], "check_out_date": a["check_out_date"],
           "nights": nights, "room_num": a["room_num"], "person_num": a["person_num"],
           **paged(len(fits), fits[first:first + a["page_size"]], a["page"], a["page_size"],
                   "room products")}
    out["products"] = out.pop("results")
    out["not_meeting_occupancy"] = others
    return out


def get_hotel_coordinates(world: World, hotel_id: str) -> dict[str, Any]:
    return _coordinates(world.hotel(hotel_id), "hotel", hotel_id)


# -- restaurants ---------------------------------------------------------------------------



def get_restaurant_detail_with_products(world: World, restaurant_id: str) -> dict[str, Any]:
    row = world.restaurant(restaurant_id)
    if row is None:
        raise not_found("restaurant", restaurant_id)
    city = world.city(row.pop("city_id"))
    products = world.query("SELECT id AS product_id, name, people, price FROM "
                           "restaurant_products WHERE restaurant_id = ? ORDER BY people, id",
                           (restaurant_id,))
    out: dict[str, Any] = {"restaurant": {**restaurant_out(row),
                                          "city": city["name"] if city else None},
                           "products": products}
    if not products:
        out["message"] = "No set menus: order on site (about avg_price per person)."
    return out


def get_restaurant_coordinates(world: World, restaurant_id: str) -> dict[str, Any]:
    return _coordinates(world.restaurant(restaurant_id), "restaurant", restaurant_id)


# -- specs -------------------------------------------------------------------------------------

_CITY = Param("city", "string", "City name, e.g. Hangzhou.", required=True)
_PRICE = (Param("price_min", "number", "Lowest price (yuan).", minimum=0),
          Param("price_max", "number", "Highest price (yuan).", minimum=0))
_STAY = (Param("check_in_date", "date", "Check-in date YYYY-MM-DD.", required=True),
         Param("check_out_date", "date", "Check-out date YYYY-MM-DD.", required=True))


def _id(name: str, what: str) -> tuple[Param]:
    return (Param(name, "string", f"The {what} id, as search results give it.", required=True),)


SPECS = (
    ToolSpec("search_attractions", "Search attractions in a city with filters (name, "
             "categories, rating, sight level, review count, free only, distance), ranking and "
             "pagination. Returns id, category, ratings, popularity, opening hours, suggested "
             "visit minutes, lowest ticket price and distance (km).",
             (_CITY, Param("attraction_name", "string", "Part of the attraction's name."),
              Param("categories", "array", "Any of these categories: "
                    + ", ".join(names.ATTRACTION_CATEGORIES) + "."),
              *LOCATION,
              Param("rating", "number", "Minimum review score (0-5).", minimum=0, maximum=5),
              Param("sight_level", "integer", "Minimum official level (5 = 5A).", minimum=0,
                    maximum=5),
              Param("comment_count", "integer", "Minimum number of reviews.", minimum=0),
              Param("free_only", "boolean", "Only attractions with free admission.",
                    default=False),
              *sort_params(tuple(ATTRACTION_SORT), "heat", "attractions"), *PAGE),
             search_attractions),
    ToolSpec("get_attraction_detail_with_products", "Full profile of one attraction and its "
             "ticket products (product id, name, price).", _id("poi_id", "attraction"),
             get_attraction_detail_with_products),
    ToolSpec("get_attraction_coordinates", "Latitude and longitude of an attraction.",
             _id("poi_id", "attraction"), get_attraction_coordinates),
    ToolSpec("search_hotels", "Search hotels in a city for a stay with filters (room price per "
             "night, distance, hotel type, stars, rating, review count, good-review rate, "
             "aspect ratings, room types, cancellation policy, pet friendly, breakfast), "
             "ranking and pagination. Returns type, stars, rating, review count, good-review "
             "rate, aspect ratings, facilities, coordinates, distance (km), the lowest "
             "matching nightly price and its total for the stay.",
             (_CITY, *_STAY, *_PRICE, *LOCATION,
              Param("hotel_type", "array", "Any of these tiers: economy (2 stars), midscale "
                    "(3), upscale (4), luxury (5); also budget, comfort, mid-range, premium, "
                    "high-end.", enum=TIER_WORDS),
              Param("stars", "integer", "Minimum star rating (2-5).", minimum=2, maximum=5),
              Param("rating", "number", "Minimum guest score (0-5).", minimum=0, maximum=5),
              Param("review_count", "integer", "Minimum number of reviews.", minimum=0),
              Param("good_remarks_rate", "number", "Minimum share of good reviews, in % "
                    "(0-100).", minimum=0, maximum=100),
              *(Param(r, "number", f"Minimum {r.split('_')[0]} rating (0-10).", minimum=0,
                      maximum=10) for r in RATINGS),
              Param("room_types", "array", "Has a room whose type contains any of these "
                    "words (e.g. King, Twin, Family, Suite)."),
              Param("cancel_policy", "string", "Has a room whose cancellation is at least "
                    "this flexible: " + POLICY_WORDS + ".", enum=CANCEL_POLICIES),
              Param("is_pet_friendly", "boolean", "Pets allowed."),
              Param("has_breakfast", "boolean", "Has a room with breakfast included."),
              Param("hotel_name", "string", "Part of the hotel's name."),
              Param("brand", "string", "Hotel brand, e.g. Hilton, Atour, Hanting."),
              *sort_params(tuple(HOTEL_SORT), "rating", "hotels"), *PAGE),
             search_hotels),
    ToolSpec("get_hotel_detail_with_products", "A hotel's profile and its bookable room "
             "products for the stay, cheapest first; rooms that cannot hold person_num in "
             "room_num rooms are listed apart under not_meeting_occupancy.",
             (*_id("hotel_id", "hotel"), *_STAY,
              Param("room_num", "integer", "Rooms to book.", minimum=1, maximum=20, default=1),
              Param("person_num", "integer", "Guests.", minimum=1, maximum=60, default=1),
              Param("room_type", "string", "Room type contains this word (e.g. King)."),
              Param("min_breakfast_per_room", "integer", "At least this many breakfasts per "
                    "room and night.", minimum=0, maximum=4),
              Param("cancel_policy", "string", "Cancellation at least this flexible: "
                    + POLICY_WORDS + ".", enum=CANCEL_POLICIES),
              Param("has_window", "boolean", "Rooms with (or without) a window."),
              *PAGE), get_hotel_detail_with_products),
    ToolSpec("get_hotel_coordinates", "Latitude and longitude of a hotel.",
             _id("hotel_id", "hotel"), get_hotel_coordinates),
    ToolSpec("search_restaurants", "Search restaurants in a city with filters (cuisine, "
             "average price per person, minimum rating, review count, food / environment / "
             "service ratings, reservable, distance from the city centre or a given point), "
             "ranking and pagination.",
             (_CITY, *LOCATION, *_PRICE,
              Param("stars", "number", "Minimum rating (0-5).", minimum=0, maximum=5),
              Param("review_count", "integer", "Minimum number of reviews.", minimum=0),
              *(Param(r, "number", f"Minimum {r.split('_')[0]} rating (0-10; product = "
                      "food).", minimum=0, maximum=10) for r in RATINGS),
              Param("reservable", "boolean", "Takes reservations (true) or not (false)."),
              Param("categories", "array", "Any of these cuisines: "
                    + ", ".join(names.CUISINES) + "."),
              Param("restaurant_name", "string", "Part of the restaurant's name."),
              *sort_params(tuple(RESTAURANT_SORT), "rating", "restaurants"), *PAGE),
             search_restaurants),
    ToolSpec("get_restaurant_detail_with_products", "A restaurant's profile and its set-menu "
             "products (product id, people, price); none means order on site.",
             _id("restaurant_id", "restaurant"), get_restaurant_detail_with_products),
    ToolSpec("get_restaurant_coordinates", "Latitude and longitude of a restaurant.",
             _id("restaurant_id", "restaurant"), get_restaurant_coordinates),
)
