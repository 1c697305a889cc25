"""Sampling user constraints from the world (paper 3.2 "rubric and constraint construction",
B.2): for each of the 37 rubric types, a first version drawn from the values the trip's scope
actually holds, a tighter version (the next step of a modification chain, "progressively more
restrictive"), an impossible version where one exists (FIT: no item of the scope satisfies
it), and how a user says it (`wording.py`: an explicit sentence, one of several, and the AIS
vague form). Parameters are the evaluation package's rubric structs, so G(e) and V(e, i) of
its table decide feasibility, never this module.

Numeric bands (`bands.py`) are drawn in every shape the paper lists for the type (at least,
at most, around, between, an excluded band, free only); hotel cost at each of its five
levels, transport cost at its three; times on departure or arrival, as a period, a bound or
a window; distances from the centre or from the night's hotel (`custom.py`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec

from ..evaluation import rubrics_fields as F
from ..evaluation import rubrics_poi as P
from ..evaluation.common import Trip
from ..evaluation.rubric_base import Bound, Ctx, RubricParams, candidates
from . import wording
from .bands import Band, banded, column, with_bound
from .custom import CUSTOM

Params = RubricParams


@dataclass
class Scope:
    """Where a constraint applies: the trip (and optionally one city); `cache` (shared by a
    generation run) keeps the rows read, by (kind, legs, city, trip)."""

    world: Any
    trip: Trip
    city: str | None = None
    cache: dict[Any, list[dict[str, Any]]] | None = None

    def rows(self, kind: str, which: str = "all") -> list[dict[str, Any]]:
        key = (kind, which, self.city, msgspec.json.encode(self.trip))
        if self.cache is not None and key in self.cache:
            return self.cache[key]
        rows = candidates(kind, RubricParams(city=self.city), Ctx(self.world, self.trip), which)
        if self.cache is not None:
            self.cache[key] = rows
        return rows


# ------------------------------------------------------------------ numeric bands


def _b(cls: type, kind: str, col: str, step: float, shapes: tuple[str, ...],
       good: str = "high", cap: float | None = None) -> tuple[str, Band]:
    return cls.__struct_config__.tag, Band(kind, column(col), step, shapes, good, cap=cap,
                                           make=banded(cls))


BANDS: dict[str, Band] = dict((
    _b(P.HeatScore, "attraction", "heat_score", 0.5, ("min", "range", "exclude"), cap=10),
    _b(P.CommentScore, "attraction", "comment_score", 0.1, ("min", "range", "exclude"),
       cap=5),
    _b(P.CommentCount, "attraction", "comment_count", 50, ("min", "max", "range")),
    _b(P.PriceAttraction, "attraction", "ticket_price", 10, ("max", "max", "free"), "low"),
    _b(P.SightLevel, "attraction", "sight_level", 1, ("min", "min", "exact"), cap=5),
    _b(P.Star, "hotel", "star", 1, ("min", "range", "exclude"), cap=5),
    _b(P.RestaurantPrice, "restaurant", "avg_price", 10, ("max", "min", "around", "range"),
       "low"),
    _b(P.Rating, "restaurant", "score", 0.1, ("min", "min", "exclude"), cap=5),
    _b(F.ReviewCountHotel, "hotel", "review_count", 50, ("min",)),
    _b(F.GoodRate, "hotel", "good_rate", 1, ("min",), cap=100),
    _b(F.ReviewCount, "restaurant", "review_count", 50, ("min",)),
    _b(F.SubratingFood, "restaurant", "product_rating", 0.5, ("min",), cap=10),
    _b(F.SubratingEnvironment, "restaurant", "environment_rating", 0.5, ("min",), cap=10),
    _b(F.SubratingService, "restaurant", "service_rating", 0.5, ("min",), cap=10),
))

COST_STEPS = {"room_night": 50.0, "person_night": 20.0, "night_total": 50.0,
              "person_total": 100.0, "trip_total": 100.0}


def _room_value(row: dict[str, Any], arg: Any) -> float:
    e, ctx = arg
    return P._room_value(e, row, ctx)


COST_BANDS = {level: Band("room", _room_value, step, ("max", "max", "min", "around", "range"),
                          "low", make=with_bound(P.HotelCost))
              for level, step in COST_STEPS.items()}


# ------------------------------------------------------------------ value lists


@dataclass(frozen=True)
class Listed:
    """Categories / cuisines / attraction ids to include (cover) or exclude."""

    cls: type
    kind: str
    column: str
    include: bool

    def present(self, scope: Scope) -> dict[str, int]:
        counts: dict[str, int] = {}
        for r in scope.rows(self.kind):
            v = r.get(self.column)
            if v:
                counts[v] = counts.get(v, 0) + 1
        return dict(sorted(counts.items()))

    def field(self) -> str:
        return "ids" if self.column == "id" else "values"

    def make(self, values: list[str], city: str | None) -> Params:
        return self.cls(**{self.field(): values}, city=city)

    def first(self, rng: random.Random, scope: Scope) -> Params | None:
        counts = self.present(scope)
        if self.column == "id":  # popular attractions by name
            rows = sorted(scope.rows(self.kind), key=lambda r: (-r["heat_score"], r["id"]))[:6]
            if len(rows) < 2:
                return None
            return self.make([rng.choice(rows)["id"]], scope.city)
        keys = list(counts)
        if self.include:
            if not keys:
                return None
            return self.make(rng.sample(keys, min(len(keys), rng.choice((1, 1, 2)))),
                             scope.city)
        total = sum(counts.values())
        rare = [k for k in keys if counts[k] <= total / 4]
        return self.make([rng.choice(rare)], scope.city) if rare and len(keys) > 2 else None

    def tighten(self, rng: random.Random, scope: Scope, e: Params) -> Params | None:
        old = list(getattr(e, self.field()))
        if self.column == "id":
            pool = sorted(r["id"] for r in scope.rows(self.kind) if r["id"] not in old)
        else:
            pool = [k for k in self.present(scope) if k not in old]
        if not pool:
            return None
        return self.make([*old, rng.choice(pool)], e.city)

    def impossible(self, scope: Scope, e: Params) -> Params | None:
        if not self.include or self.column == "id":
            return None
        allv = [r[self.column] for r in scope.world.query(
            f"SELECT DISTINCT {self.column} FROM {self.kind}s ORDER BY 1")]
        absent = [v for v in allv if v and v not in self.present(scope)]
        return self.make([*getattr(e, self.field()), absent[0]], e.city) if absent else None


LISTED: dict[str, Listed] = {lst.cls.__struct_config__.tag: lst for lst in (
    Listed(P.IncludeCategories, "attraction", "category", True),
    Listed(P.ExcludeCategories, "attraction", "category", False),
    Listed(P.IncludeAttractions, "attraction", "id", True),
    Listed(P.ExcludeAttractions, "attraction", "id", False),
    Listed(P.IncludeCuisine, "restaurant", "cuisine", True),
    Listed(P.ExcludeCuisine, "restaurant", "cuisine", False),
)}


# ------------------------------------------------------------------ the registry


def _band_first(kind: str) -> Callable[[random.Random, Scope], Params | None]:
    def first(rng: random.Random, scope: Scope) -> Params | None:
        if kind == "COST":
            level = rng.choice(tuple(COST_STEPS))
            like = P.HotelCost(bound=Bound(), level=level, city=scope.city)
            return COST_BANDS[level].first(rng, scope, like)
        like = CLASSES[kind](bound=Bound(), city=scope.city)
        return BANDS[kind].first(rng, scope, like)
    return first


CLASSES = {c.__struct_config__.tag: c for c in (*P.PARAMS, *F.PARAMS)}


def _band(kind: str, e: Params) -> Band:
    return COST_BANDS[e.level] if kind == "COST" else BANDS[kind]


FAMILY: dict[str, str] = {
    **{k: b.kind if b.kind != "room" else "hotel" for k, b in BANDS.items()},
    "COST": "hotel",
    **{k: lst.kind for k, lst in LISTED.items()},
    **{k: c.family for k, c in CUSTOM.items()},
}
TYPES = tuple(sorted(FAMILY))
"""The rubric types the synthesiser draws: all 37 of the evaluation's table."""
FAMILIES = ("transportation", "attraction", "restaurant", "hotel")


def city_scoped(kind: str) -> bool:
    c = CUSTOM.get(kind)
    return c.city_scoped if c else True


def first(kind: str, rng: random.Random, scope: Scope) -> Params | None:
    if kind in BANDS or kind == "COST":
        return _band_first(kind)(rng, scope)
    if kind in LISTED:
        return LISTED[kind].first(rng, scope)
    return CUSTOM[kind].first(rng, scope)


def tighten(kind: str, rng: random.Random, scope: Scope, e: Params) -> Params | None:
    if kind in BANDS or kind == "COST":
        return _band(kind, e).tighten(rng, scope, e)
    if kind in LISTED:
        return LISTED[kind].tighten(rng, scope, e)
    return CUSTOM[kind].tighten(rng, scope, e)


def impossible(kind: str, scope: Scope, e: Params) -> Params | None:
    if kind in BANDS or kind == "COST":
        return _band(kind, e).impossible(scope, e)
    if kind in LISTED:
        return LISTED[kind].impossible(scope, e)
    return CUSTOM[kind].impossible(scope, e)


def say(kind: str, e: Params, world: Any, variant: int = 0) -> str:
    """The explicit sentence of constraint `e` (`variant`: which of its wordings)."""
    return wording.say(kind, e, world, variant)


def vague(kind: str) -> str:
    return wording.vague(kind)
