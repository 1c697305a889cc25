"""The hotel and restaurant rubrics of B.2.2 / B.2.3 over the world's review, rating, room and
reservation fields: REVIEW_COUNT_HOTEL, GOOD_RATE, ASPECT_RATING, CANCEL_POLICY,
BREAKFAST_NUMBER, HAS_WINDOW (hotels and their rooms); REVIEW_COUNT, OPEN, SUBRATING_FOOD /
_ENVIRONMENT / _SERVICE (restaurants).

Scales as the world holds them: good-review rate in % (0-100), aspect and sub-ratings 0-10
(the paper's tool answers: "product_rating: 8.0"), breakfasts per room and night, a room's
cancellation policy as a code of `world.names.CANCEL_POLICIES` (most flexible first).
"""

from __future__ import annotations

import math
from typing import Literal

from ..world.names import cancel_rank
from .plan import TripPlan
from .rubric_base import Bound, Ctx, Row, RubricDef, RubricParams, selected
from .rubrics_poi import _Banded, _banded


class ReviewCountHotel(_Banded, tag="REVIEW_COUNT_HOTEL"):
    """On the hotel's `review_count`."""


class GoodRate(_Banded, tag="GOOD_RATE"):
    """On the hotel's `good_rate`, the share of good reviews in %."""


class AspectRating(RubricParams, tag="ASPECT_RATING"):
    """The hotel's `aspect` rating ("product", "environment", "service"; "all": each of the
    three) is at least `min` (0-10)."""

    min: float
    aspect: Literal["all", "product", "environment", "service"] = "all"


class CancelPolicy(RubricParams, tag="CANCEL_POLICY"):
    """Every booked room's cancellation policy is at least as flexible as `at_least`."""

    at_least: str


class BreakfastNumber(RubricParams, tag="BREAKFAST_NUMBER"):
    """The breakfasts the booked rooms include per night (breakfasts per room x rooms) lie in
    `bound`: `{min: N}` at least N, `{min: N, max: N}` exactly N."""

    bound: Bound


class HasWindow(RubricParams, tag="HAS_WINDOW"):
    """Every booked room has a window."""


class ReviewCount(_Banded, tag="REVIEW_COUNT"):
    """On the restaurant's `review_count`."""


class Open(RubricParams, tag="OPEN"):
    """Reservations: `rule` "reservable" -- every restaurant takes reservations;
    "no_mandatory" -- no restaurant requires one."""

    rule: Literal["reservable", "no_mandatory"] = "no_mandatory"


class SubratingFood(_Banded, tag="SUBRATING_FOOD"):
    """On the restaurant's `product_rating` (its food, 0-10)."""


class SubratingEnvironment(_Banded, tag="SUBRATING_ENVIRONMENT"):
    """On the restaurant's `environment_rating` (0-10)."""


class SubratingService(_Banded, tag="SUBRATING_SERVICE"):
    """On the restaurant's `service_rating` (0-10)."""


ASPECTS = ("product", "environment", "service")


def _aspect_accepts(e: AspectRating, row: Row, ctx: Ctx) -> bool:
    aspects = ASPECTS if e.aspect == "all" else (e.aspect,)
    values = [row.get(f"{a}_rating") for a in aspects]
    return all(v is not None and v >= e.min for v in values)


def _cancel_accepts(e: CancelPolicy, row: Row, ctx: Ctx) -> bool:
    wanted, rank = cancel_rank(e.at_least), cancel_rank(str(row.get("cancel_policy") or ""))
    return wanted is not None and rank is not None and rank <= wanted


def _people(ctx: Ctx) -> int:
    return ctx.trip.number_of_people if ctx.trip else 1


def _breakfast_accepts(e: BreakfastNumber, row: Row, ctx: Ctx) -> bool:
    """Item level: the party in rooms of this type, as many as it needs."""
    rooms = math.ceil(_people(ctx) / max(1, row.get("capacity") or 1))
    return e.bound.holds(rooms * (row.get("breakfast") or 0))


def _breakfast_ok(e: BreakfastNumber, plan: TripPlan, ctx: Ctx) -> bool:
    nights: dict[str, float] = {}
    for r in selected("room", plan, e, ctx):
        nights[r["date"]] = nights.get(r["date"], 0) + (r.get("breakfast") or 0) * r["room_num"]
    return bool(nights) and all(e.bound.holds(v) for v in nights.values())


def _window_accepts(e: HasWindow, row: Row, ctx: Ctx) -> bool:
    return bool(row.get("has_window"))


def _open_accepts(e: Open, row: Row, ctx: Ctx) -> bool:
    if e.rule == "reservable":
        return bool(row.get("reservable"))
    return not row.get("must_reserve")


DEFS = [
    RubricDef("REVIEW_COUNT_HOTEL", "hotel", ReviewCountHotel, "hotel", _banded("review_count")),
    RubricDef("GOOD_RATE", "hotel", GoodRate, "hotel", _banded("good_rate")),
    RubricDef("ASPECT_RATING", "hotel", AspectRating, "hotel", _aspect_accepts),
    RubricDef("CANCEL_POLICY", "hotel", CancelPolicy, "room", _cancel_accepts),
    RubricDef("BREAKFAST_NUMBER", "hotel", BreakfastNumber, "room", _breakfast_accepts,
              "custom", check=_breakfast_ok),
    RubricDef("HAS_WINDOW", "hotel", HasWindow, "room", _window_accepts),
    RubricDef("REVIEW_COUNT", "restaurant", ReviewCount, "restaurant", _banded("review_count")),
    RubricDef("OPEN", "restaurant", Open, "restaurant", _open_accepts),
    RubricDef("SUBRATING_FOOD", "restaurant", SubratingFood, "restaurant",
              _banded("product_rating")),
    RubricDef("SUBRATING_ENVIRONMENT", "restaurant", SubratingEnvironment, "restaurant",
              _banded("environment_rating")),
    RubricDef("SUBRATING_SERVICE", "restaurant", SubratingService, "restaurant",
              _banded("service_rating")),
]
PARAMS = (ReviewCountHotel, GoodRate, AspectRating, CancelPolicy, BreakfastNumber, HasWindow,
          ReviewCount, Open, SubratingFood, SubratingEnvironment, SubratingService)
