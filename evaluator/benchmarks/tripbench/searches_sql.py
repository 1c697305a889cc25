"""The three POI searches as SQL (one query and a count each): the reference the column
searches (searches.py) are tested against, call for call. Not used by the tools."""

from __future__ import annotations

from typing import Any

from .poi_common import (
    ATTRACTION_SORT,
    ESC,
    HOTEL_SORT,
    RATINGS,
    RESTAURANT_SORT,
    STAR_OF_TYPE,
    as_flexible,
    attraction_out,
    hotel_out,
    like,
    like_any,
    nights_of,
    order_of,
    restaurant_out,
)
from .search import Query, city_named, paged, ref_point
from .world import names
from .world.db import World


def search_attractions(world: World, **a: Any) -> dict[str, Any]:
    city = city_named(world, a["city"])
    q = Query("t.id, t.name, t.category, t.comment_score, t.heat_score, t.comment_count, "
              "t.sight_level, t.open_time, t.close_time, t.closed_weekdays, t.duration_min, "
              "t.lat, t.lon, COALESCE((SELECT MIN(p.price) FROM attraction_products p "
              "WHERE p.attraction_id = t.id), 0) AS min_price", "attractions")
    q.add("t.city_id = ?", city["id"])
    if a["attraction_name"]:
        q.add(f"t.name LIKE ? ESCAPE {ESC}", like(a["attraction_name"]))
    if a["categories"]:
        clause, params = like_any("t.category", a["categories"])
        q.add(clause, *params)
    for param, column in (("rating", "comment_score"), ("sight_level", "sight_level"),
                          ("comment_count", "comment_count")):
        if a[param] is not None:
            q.add(f"t.{column} >= ?", a[param])
    if a["free_only"]:
        q.add_outer("min_price = 0")
    q.near(world, *ref_point(city, a), a["distance_threshold"], a["sort_key"] == "distance")
    total, rows = q.page(world, *order_of(a, ATTRACTION_SORT), a["page"], a["page_size"])
    return paged(total, [attraction_out(r) for r in rows], a["page"], a["page_size"],
                 "attractions")


def search_hotels(world: World, **a: Any) -> dict[str, Any]:
    city = city_named(world, a["city"])
    nights = nights_of(a)
    room_where, room_params = [], []
    if a["price_min"] is not None:
        room_where.append("r.price >= ?")
        room_params.append(a["price_min"])
    if a["price_max"] is not None:
        room_where.append("r.price <= ?")
        room_params.append(a["price_max"])
    if a["room_types"]:
        clause, params = like_any("r.name", a["room_types"])
        room_where.append(clause)
        room_params += params
    if a["has_breakfast"] is not None:
        room_where.append("r.breakfast > 0" if a["has_breakfast"] else "r.breakfast = 0")
    if a["cancel_policy"]:
        flexible = as_flexible(a["cancel_policy"])
        room_where.append(f"r.cancel_policy IN ({','.join('?' * len(flexible))})")
        room_params += flexible
    rooms = "".join(f" AND {w}" for w in room_where)
    q = Query("t.id, t.name, t.star, t.brand, t.score, t.review_count, t.good_rate, "
              "t.product_rating, t.environment_rating, t.service_rating, t.facilities, t.lat, "
              f"t.lon, (SELECT MIN(r.price) FROM hotel_rooms r WHERE r.hotel_id = t.id{rooms}) "
              "AS min_price", "hotels", room_params)
    q.add("t.city_id = ?", city["id"])
    if room_where:                  # every hotel has rooms: only a room filter can drop one
        q.add_outer("min_price IS NOT NULL")
    if a["hotel_name"]:
        q.add(f"t.name LIKE ? ESCAPE {ESC}", like(a["hotel_name"]))
    if a["brand"]:
        q.add("t.brand = ? COLLATE NOCASE", a["brand"])
    if a["hotel_type"]:
        stars = sorted({STAR_OF_TYPE[names.hotel_type(t) or t] for t in a["hotel_type"]})
        q.add(f"t.star IN ({','.join('?' * len(stars))})", *stars)
    if a["stars"] is not None:
        q.add("t.star >= ?", a["stars"])
    if a["rating"] is not None:
        q.add("t.score >= ?", a["rating"])
    for param, column in (("review_count", "review_count"), ("good_remarks_rate", "good_rate"),
                          *((r, r) for r in RATINGS)):
        if a[param] is not None:
            q.add(f"t.{column} >= ?", a[param])
    if a["is_pet_friendly"] is not None:
        q.add(f"t.facilities {'' if a['is_pet_friendly'] else 'NOT '}LIKE ?",
              '%"pet-friendly"%')
    q.near(world, *ref_point(city, a), a["distance_threshold"], a["sort_key"] == "distance")
    total, rows = q.page(world, *order_of(a, HOTEL_SORT), a["page"], a["page_size"])
    for row in rows:
        hotel_out(row)
        row["min_price_per_night"] = row.pop("min_price")
        row["min_total_price"] = round(row["min_price_per_night"] * nights, 2)
    out = paged(total, rows, a["page"], a["page_size"], "hotels")
    return {"check_in_date": a["check_in_date"], "check_out_date": a["check_out_date"],
            "nights": nights, **out}


def search_restaurants(world: World, **a: Any) -> dict[str, Any]:
    city = city_named(world, a["city"])
    q = Query("t.id, t.name, t.cuisine, t.avg_price, t.score, t.review_count, "
              "t.product_rating, t.environment_rating, t.service_rating, t.reservable, "
              "t.must_reserve, t.open_time, t.close_time, t.lat, t.lon", "restaurants")
    q.add("t.city_id = ?", city["id"])
    if a["restaurant_name"]:
        q.add(f"t.name LIKE ? ESCAPE {ESC}", like(a["restaurant_name"]))
    if a["categories"]:
        clause, params = like_any("t.cuisine", a["categories"])
        q.add(clause, *params)
    if a["price_min"] is not None:
        q.add("t.avg_price >= ?", a["price_min"])
    if a["price_max"] is not None:
        q.add("t.avg_price <= ?", a["price_max"])
    if a["stars"] is not None:
        q.add("t.score >= ?", a["stars"])
    for param in ("review_count", *RATINGS):
        if a[param] is not None:
            q.add(f"t.{param} >= ?", a[param])
    if a["reservable"] is not None:
        q.add("t.reservable = ?", int(a["reservable"]))
    q.near(world, *ref_point(city, a), a["distance_threshold"], a["sort_key"] == "distance")
    total, rows = q.page(world, *order_of(a, RESTAURANT_SORT), a["page"], a["page_size"])
    return paged(total, [restaurant_out(r) for r in rows], a["page"], a["page_size"],
                 "restaurants")
