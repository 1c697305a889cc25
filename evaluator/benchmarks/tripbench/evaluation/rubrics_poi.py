"""Attraction rubrics (paper B.2.1), and the hotel and restaurant rubrics of B.2.2 / B.2.3 on
price, tier, stars, facilities, location, rating and cuisine; the ones on reviews, aspect
ratings, rooms and reservations are in `rubrics_fields.py`.
"""

from __future__ import annotations

import itertools
import math
from typing import Literal

import msgspec

from ..world.names import HOTEL_TYPES, hotel_type
from .common import haversine_km
from .plan import TripPlan
from .rubric_base import Bound, Ctx, Row, RubricDef, RubricParams, selected


def _norm(value: str | None) -> str:
    return (value or "").strip().lower()


# --- parameters -----------------------------------------------------------------------------

class _Values(RubricParams):
    values: list[str]


class IncludeCategories(_Values, tag="INCLUDE_CATEGORIES"):
    pass


class ExcludeCategories(_Values, tag="EXCLUDE_CATEGORIES"):
    pass


class CategoryPriority(_Values, tag="CATEGORY_PRIORITY"):
    """`values` from most to least preferred."""


class _Ids(RubricParams):
    ids: list[str]


class IncludeAttractions(_Ids, tag="INCLUDE_ATTRACTIONS"):
    pass


class ExcludeAttractions(_Ids, tag="EXCLUDE_ATTRACTIONS"):
    pass


class _Banded(RubricParams):
    """`bound` required of every item, or (with `exclude`) excluded for every item."""

    bound: Bound
    exclude: bool = False


class HeatScore(_Banded, tag="HEAT_SCORE"):
    pass


class CommentScore(_Banded, tag="COMMENT_SCORE"):
    pass


class CommentCount(_Banded, tag="COMMENT_COUNT"):
    pass


class PriceAttraction(_Banded, tag="PRICE_ATTRACTION"):
    """On the cheapest ticket (0 when the attraction sells none)."""


class SightLevel(_Banded, tag="SIGHT_LEVEL"):
    """At least one included attraction has a level in `bound` (5 = 5A)."""


class Distance(RubricParams, tag="DISTANCE"):
    max_km: float
    reference: Literal["center", "hotel"] = "center"


class Star(_Banded, tag="STAR"):
    pass


class HotelType(RubricParams, tag="HOTEL_TYPE"):
    """Tiers from stars (the schema has no hotel type): `TIERS`, the tools' table; the
    tiers' other words ("premium") are read as the tier they name."""

    types: list[str]
    exclude: bool = False


class HotelCost(RubricParams, tag="COST"):
    """`level`: room_night (one room, one night), person_night (room price / capacity),
    night_total (all rooms of a night), person_total and trip_total (all nights)."""

    bound: Bound
    level: Literal["room_night", "person_night", "night_total", "person_total",
                   "trip_total"] = "room_night"


class PetFriendly(RubricParams, tag="PET_FRIENDLY"):
    facility: str = "pet"


class Location(RubricParams, tag="LOCATION"):
    """Hotels within `max_km` of the city centre; with `except_last_night` the last night in
    each city is exempt (e.g. near the station for the departure)."""

    max_km: float
    except_last_night: bool = False


class RestaurantPrice(_Banded, tag="PRICE"):
    """On `avg_price`, the per-person cost of a meal."""


class Rating(_Banded, tag="RATING"):
    pass


class IncludeCuisine(_Values, tag="INCLUDE_CUISINE"):
    pass


class ExcludeCuisine(_Values, tag="EXCLUDE_CUISINE"):
    pass


# --- predicates -----------------------------------------------------------------------------

def _banded(column: str):
    def accepts(e: _Banded, row: Row, ctx: Ctx) -> bool:
        inside = e.bound.holds(row.get(column))
        return not inside if e.exclude else inside
    return accepts


def _in_values(column: str, negate: bool = False):
    def accepts(e: _Values, row: Row, ctx: Ctx) -> bool:
        hit = _norm(row.get(column)) in {_norm(v) for v in e.values}
        return not hit if negate else hit
    return accepts


def _covers(column: str):
    def covers(e: _Values, row: Row) -> set[str]:
        return {v for v in e.values if _norm(v) == _norm(row.get(column))}
    return covers


def _priority_ok(e: CategoryPriority, plan: TripPlan, ctx: Ctx) -> bool:
    """At least one attraction of the first category, and no category outnumbered by a less
    preferred one."""
    rows = selected("attraction", plan, e, ctx)
    counts = [sum(_norm(r["category"]) == _norm(v) for r in rows) for v in e.values]
    return bool(counts) and counts[0] > 0 and all(a >= b for a, b in itertools.pairwise(counts))


def _center_km(row: Row) -> float:
    return haversine_km(row["lat"], row["lon"], row["city_lat"], row["city_lon"])


def _distance_accepts(e: Distance, row: Row, ctx: Ctx) -> bool:
    """Item level: from the city centre, or (reference "hotel") from some hotel of its city."""
    if e.reference == "center":
        return _center_km(row) <= e.max_km
    hotels = ctx.world.query("SELECT lat, lon FROM hotels WHERE city_id = ?", (row["city_id"],))
    return any(haversine_km(row["lat"], row["lon"], h["lat"], h["lon"]) <= e.max_km
               for h in hotels)


def _distance_ok(e: Distance, plan: TripPlan, ctx: Ctx) -> bool:
    """Plan level, reference "hotel": from the hotel of that night (the previous night's on
    the return day)."""
    if e.reference == "center":
        return all(_distance_accepts(e, r, ctx) for r in selected("attraction", plan, e, ctx))
    hotel = None
    for day in plan.daily_schedule:
        own = ctx.world.hotel(day.hotel.id) if day.hotel else None
        base = own or hotel
        for act in day.activities:
            row = ctx.world.attraction(act.id) if act.type == "Attraction" and act.id else None
            if row is None or (e.city and not _same_city(ctx, row, e.city)):
                continue
            if base is None or haversine_km(row["lat"], row["lon"], base["lat"],
                                            base["lon"]) > e.max_km:
                return False
        hotel = own or hotel
    return True


def _same_city(ctx: Ctx, row: Row, name: str) -> bool:
    city = ctx.world.city_by_name(name)
    return city is not None and city["id"] == row["city_id"]


TIERS = HOTEL_TYPES


def _tier_accepts(e: HotelType, row: Row, ctx: Ctx) -> bool:
    wanted = {hotel_type(t) or _norm(t) for t in e.types}
    hit = TIERS.get(int(row.get("star") or 0), "") in wanted
    return not hit if e.exclude else hit


def _pet_accepts(e: PetFriendly, row: Row, ctx: Ctx) -> bool:
    facilities = row.get("facilities") or "[]"
    try:
        items = msgspec.json.decode(facilities) if isinstance(facilities, str) else facilities
    except msgspec.DecodeError:
        items = [facilities]
    return any(_norm(e.facility) in _norm(str(f)) for f in items)


def _people_nights(ctx: Ctx) -> tuple[int, int]:
    trip = ctx.trip
    return (trip.number_of_people, max(1, trip.day_count() - 1)) if trip else (1, 1)


def _room_value(e: HotelCost, row: Row, ctx: Ctx) -> float:
    """The rubric's quantity when the whole party sleeps in rooms of this type every night."""
    people, nights = _people_nights(ctx)
    rooms = math.ceil(people / max(1, row["capacity"] or 1))
    night = rooms * row["price"]
    return {"room_night": row["price"], "person_night": row["price"] / max(1, row["capacity"]),
            "night_total": night, "person_total": night * nights / people,
            "trip_total": night * nights}[e.level]


def _cost_ok(e: HotelCost, plan: TripPlan, ctx: Ctx) -> bool:
    rows = selected("room", plan, e, ctx)
    if e.level == "room_night":
        return all(e.bound.holds(r["price"]) for r in rows)
    if e.level == "person_night":
        return all(e.bound.holds(r["price"] / max(1, r["capacity"])) for r in rows)
    nights: dict[str, float] = {}
    for r in rows:
        nights[r["date"]] = nights.get(r["date"], 0.0) + r["price"] * r["room_num"]
    if e.level == "night_total":
        return all(e.bound.holds(v) for v in nights.values())
    total = sum(nights.values())
    return e.bound.holds(total / max(1, plan.number_of_people) if e.level == "person_total"
                         else total)


def _location_accepts(e: Location, row: Row, ctx: Ctx) -> bool:
    return _center_km(row) <= e.max_km


def _location_ok(e: Location, plan: TripPlan, ctx: Ctx) -> bool:
    rows = selected("hotel", plan, e, ctx)
    keep = []
    for index, row in enumerate(rows):
        last_in_city = index + 1 == len(rows) or rows[index + 1]["city_id"] != row["city_id"]
        if not (e.except_last_night and last_in_city):
            keep.append(row)
    return all(_location_accepts(e, r, ctx) for r in keep)


def _values(e: _Values) -> list[str]:
    return e.values


DEFS = [
    RubricDef("INCLUDE_CATEGORIES", "attraction", IncludeCategories, "attraction",
              _in_values("category"), "cover", values=_values, covers=_covers("category")),
    RubricDef("EXCLUDE_CATEGORIES", "attraction", ExcludeCategories, "attraction",
              _in_values("category", negate=True)),
    RubricDef("INCLUDE_ATTRACTIONS", "attraction", IncludeAttractions, "attraction",
              lambda e, r, c: r["id"] in e.ids, "cover", values=lambda e: e.ids,
              covers=lambda e, r: {r["id"]} & set(e.ids)),
    RubricDef("EXCLUDE_ATTRACTIONS", "attraction", ExcludeAttractions, "attraction",
              lambda e, r, c: r["id"] not in e.ids),
    RubricDef("HEAT_SCORE", "attraction", HeatScore, "attraction", _banded("heat_score")),
    RubricDef("COMMENT_SCORE", "attraction", CommentScore, "attraction",
              _banded("comment_score")),
    RubricDef("PRICE_ATTRACTION", "attraction", PriceAttraction, "attraction",
              _banded("ticket_price")),
    RubricDef("DISTANCE", "attraction", Distance, "attraction", _distance_accepts, "custom",
              check=_distance_ok),
    RubricDef("CATEGORY_PRIORITY", "attraction", CategoryPriority, "attraction",
              _in_values("category"), "custom", check=_priority_ok, filters=False,
              values=lambda e: e.values[:1]),
    RubricDef("COMMENT_COUNT", "attraction", CommentCount, "attraction",
              _banded("comment_count")),
    RubricDef("SIGHT_LEVEL", "attraction", SightLevel, "attraction", _banded("sight_level"),
              "any"),
    RubricDef("COST", "hotel", HotelCost, "room",
              lambda e, r, c: e.bound.holds(_room_value(e, r, c)), "custom", check=_cost_ok),
    RubricDef("HOTEL_TYPE", "hotel", HotelType, "hotel", _tier_accepts),
    RubricDef("STAR", "hotel", Star, "hotel", _banded("star")),
    RubricDef("PET_FRIENDLY", "hotel", PetFriendly, "hotel", _pet_accepts),
    RubricDef("LOCATION", "hotel", Location, "hotel", _location_accepts, "custom",
              check=_location_ok),
    RubricDef("PRICE", "restaurant", RestaurantPrice, "restaurant", _banded("avg_price")),
    RubricDef("RATING", "restaurant", Rating, "restaurant", _banded("score")),
    RubricDef("INCLUDE_CUISINE", "restaurant", IncludeCuisine, "restaurant",
              _in_values("cuisine"), "cover", values=_values, covers=_covers("cuisine")),
    RubricDef("EXCLUDE_CUISINE", "restaurant", ExcludeCuisine, "restaurant",
              _in_values("cuisine", negate=True)),
]
PARAMS = (IncludeCategories, ExcludeCategories, CategoryPriority, IncludeAttractions,
          ExcludeAttractions, HeatScore, CommentScore, CommentCount, PriceAttraction, SightLevel,
          Distance, Star, HotelType, HotelCost, PetFriendly, Location, RestaurantPrice, Rating,
          IncludeCuisine, ExcludeCuisine)
