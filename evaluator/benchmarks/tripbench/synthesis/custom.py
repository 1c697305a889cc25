"""User constraints that are not a numeric band (constraints.py has the registry): distances
(from the city centre or from the night's hotel), hotel location and tier, cancellation,
breakfasts, windows, reservations, pets, departure and arrival times, transport budgets at
their three levels, booking platforms, punctuality, airlines, category priority. Each has a
first version drawn from what the scope holds, a tighter one and, where one exists, an
impossible one (FIT); G(e) and V(e, i) of the evaluation decide feasibility, not this module.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec

from ..evaluation import rubrics_fields as F
from ..evaluation import rubrics_poi as P
from ..evaluation import rubrics_transport as T
from ..evaluation.common import haversine_km
from ..evaluation.rubric_base import Bound
from ..world.names import CANCEL_POLICIES
from . import custom_transport as X
from .bands import ceil_to, floor_to

Params = Any
Scope = Any


@dataclass(frozen=True)
class Custom:
    family: str
    first: Callable[[random.Random, Scope], Params | None]
    tighten: Callable[[random.Random, Scope, Params], Params | None]
    impossible: Callable[[Scope, Params], Params | None]
    city_scoped: bool = True


def _never(*_: Any) -> None:
    return None


def _center_km(row: dict[str, Any]) -> float:
    return haversine_km(row["lat"], row["lon"], row["city_lat"], row["city_lon"])


# -- distances -----------------------------------------------------------------------------

def _km_first(kind: str, cls: type) -> Callable[[random.Random, Scope], Params | None]:
    def first(rng: random.Random, scope: Scope) -> Params | None:
        d = sorted(_center_km(r) for r in scope.rows(kind))
        if len(d) < 3:
            return None
        km = ceil_to(d[int(rng.uniform(0.6, 0.9) * len(d))], 1.0)
        if cls is P.Distance and rng.random() < 0.3:     # from the night's hotel
            return P.Distance(max_km=km + 4, reference="hotel", city=scope.city)
        if cls is P.Location and rng.random() < 0.3:
            return P.Location(max_km=km, except_last_night=True, city=scope.city)
        return cls(max_km=km, city=scope.city)
    return first


def _km_tighten(kind: str) -> Callable[[random.Random, Scope, Params], Params | None]:
    def tighten(rng: random.Random, scope: Scope, e: Params) -> Params | None:
        d = sorted(_center_km(r) for r in scope.rows(kind) if _center_km(r) < e.max_km - 1)
        if len(d) < 2:
            return None
        return msgspec.structs.replace(e, max_km=ceil_to(d[len(d) * 2 // 3], 1.0))
    return tighten


def _km_impossible(kind: str) -> Callable[[Scope, Params], Params | None]:
    def impossible(scope: Scope, e: Params) -> Params | None:
        if getattr(e, "reference", "center") == "hotel":
            return None
        d = [_center_km(r) for r in scope.rows(kind)]
        v = math.floor(min(d) * 10) / 10 - 0.1 if d else 0
        return msgspec.structs.replace(e, max_km=round(v, 1)) if v > 0 else None
    return impossible


# -- hotels --------------------------------------------------------------------------------

def _tiers(scope: Scope) -> list[str]:
    return sorted({P.TIERS.get(int(r["star"] or 0), "") for r in scope.rows("hotel")} - {""})


def _type_first(rng: random.Random, scope: Scope) -> Params | None:
    tiers = _tiers(scope)
    if len(tiers) < 2:
        return None
    if rng.random() < 0.3:
        return P.HotelType(types=[rng.choice(tiers)], exclude=True, city=scope.city)
    return P.HotelType(types=sorted(rng.sample(tiers, len(tiers) - 1)), city=scope.city)


def _type_tighten(rng: random.Random, scope: Scope, e: Params) -> Params | None:
    if e.exclude:
        rest = [t for t in _tiers(scope) if t not in e.types]
        return (msgspec.structs.replace(e, types=sorted([*e.types, rng.choice(rest)]))
                if len(rest) > 1 else None)
    return (msgspec.structs.replace(e, types=sorted(rng.sample(e.types, len(e.types) - 1)))
            if len(e.types) > 1 else None)


def _type_impossible(scope: Scope, e: Params) -> Params | None:
    if e.exclude:
        return msgspec.structs.replace(e, types=_tiers(scope))
    absent = [t for t in P.TIERS.values() if t not in _tiers(scope)]
    return msgspec.structs.replace(e, types=absent[:1]) if absent else None


def _pet_first(rng: random.Random, scope: Scope) -> Params | None:
    pets = [r for r in scope.rows("hotel") if "pet" in (r.get("facilities") or "").lower()]
    return P.PetFriendly(city=scope.city) if pets else None


def _aspect_first(rng: random.Random, scope: Scope) -> Params | None:
    aspect = rng.choice(("all", "product", "environment", "service"))
    rows = scope.rows("hotel")
    if len(rows) < 3:
        return None
    vals = sorted(min(r[f"{a}_rating"] for a in (F.ASPECTS if aspect == "all" else (aspect,)))
                  for r in rows)
    v = floor_to(vals[int(rng.uniform(0.1, 0.45) * len(vals))], 0.5)
    return F.AspectRating(min=v, aspect=aspect, city=scope.city) if v > vals[0] else None


def _aspect_tighten(rng: random.Random, scope: Scope, e: Params) -> Params | None:
    return msgspec.structs.replace(e, min=e.min + 0.5) if e.min + 0.5 <= 9.5 else None


def _aspect_impossible(scope: Scope, e: Params) -> Params | None:
    return msgspec.structs.replace(e, min=10.5) if e.min < 10.5 else None


_POLICIES = list(CANCEL_POLICIES)


def _cancel_first(rng: random.Random, scope: Scope) -> Params | None:
    present = sorted({_POLICIES.index(r["cancel_policy"]) for r in scope.rows("room")
                      if r.get("cancel_policy") in CANCEL_POLICIES})
    usable = [i for i in present if i < len(_POLICIES) - 1]   # "non-refundable" is no wish
    if not usable:
        return None
    return F.CancelPolicy(at_least=_POLICIES[rng.choice(usable)], city=scope.city)


def _cancel_tighten(rng: random.Random, scope: Scope, e: Params) -> Params | None:
    rank = _POLICIES.index(e.at_least)
    return msgspec.structs.replace(e, at_least=_POLICIES[rank - 1]) if rank > 0 else None


def _breakfast_first(rng: random.Random, scope: Scope) -> Params | None:
    people = scope.trip.number_of_people
    if rng.random() < 0.5 or people == 1:
        return F.BreakfastNumber(bound=Bound(min=people), city=scope.city)
    return F.BreakfastNumber(bound=Bound(min=1), city=scope.city)


def _breakfast_tighten(rng: random.Random, scope: Scope, e: Params) -> Params | None:
    people = scope.trip.number_of_people
    if e.bound.min < people:
        return msgspec.structs.replace(e, bound=Bound(min=people))
    if e.bound.max is None:
        return msgspec.structs.replace(e, bound=Bound(min=people, max=people))
    return None


def _breakfast_impossible(scope: Scope, e: Params) -> Params | None:
    most = max((math.ceil(scope.trip.number_of_people / max(1, r["capacity"]))
                * (r.get("breakfast") or 0) for r in scope.rows("room")), default=0)
    return msgspec.structs.replace(e, bound=Bound(min=most + 1))


def _window_first(rng: random.Random, scope: Scope) -> Params | None:
    return F.HasWindow(city=scope.city) if any(r.get("has_window") == 0 for r in
                                               scope.rows("room")) else None


def _open_first(rng: random.Random, scope: Scope) -> Params | None:
    return F.Open(rule=rng.choice(("no_mandatory", "no_mandatory", "reservable")),
                  city=scope.city)


# -- restaurants / attractions: category priority ---------------------------------------

def _priority_first(rng: random.Random, scope: Scope) -> Params | None:
    counts: dict[str, int] = {}
    for r in scope.rows("attraction"):
        counts[r["category"]] = counts.get(r["category"], 0) + 1
    common = sorted((c for c, n in counts.items() if n >= 2), key=lambda c: (-counts[c], c))
    if len(common) < 2:
        return None
    first = common[0] if rng.random() < 0.6 else rng.choice(common[:3])
    second = rng.choice([c for c in common if c != first])
    return P.CategoryPriority(values=[first, second], city=scope.city)


CUSTOM: dict[str, Custom] = {
    "DISTANCE": Custom("attraction", _km_first("attraction", P.Distance),
                       _km_tighten("attraction"), _km_impossible("attraction")),
    "CATEGORY_PRIORITY": Custom("attraction", _priority_first, _never, _never),
    "HOTEL_TYPE": Custom("hotel", _type_first, _type_tighten, _type_impossible),
    "PET_FRIENDLY": Custom("hotel", _pet_first, _never, _never),
    "LOCATION": Custom("hotel", _km_first("hotel", P.Location), _km_tighten("hotel"),
                       _km_impossible("hotel")),
    "ASPECT_RATING": Custom("hotel", _aspect_first, _aspect_tighten, _aspect_impossible),
    "CANCEL_POLICY": Custom("hotel", _cancel_first, _cancel_tighten, _never),
    "BREAKFAST_NUMBER": Custom("hotel", _breakfast_first, _breakfast_tighten,
                               _breakfast_impossible),
    "HAS_WINDOW": Custom("hotel", _window_first, _never, _never),
    "OPEN": Custom("restaurant", _open_first, _never, _never),   # the two rules cross
    "TIME_DEPART": Custom("transportation", X.timing_first(T.TimeDepart, "outbound"),
                          X.timing_tighten("outbound"), X.timing_impossible("outbound"),
                          city_scoped=False),
    "TIME_RETURN": Custom("transportation", X.timing_first(T.TimeReturn, "return"),
                          X.timing_tighten("return"), X.timing_impossible("return"),
                          city_scoped=False),
    "COST_TRANSPORT": Custom("transportation", X.tcost_first, X.tcost_tighten,
                             X.tcost_impossible,
                             city_scoped=False),
    "PLATFORM": Custom("transportation", X.platform_first, X.platform_tighten,
                       X.platform_impossible, city_scoped=False),
    "ONTIME": Custom("transportation", X.ontime_first, X.ontime_tighten, _never,
                     city_scoped=False),
    "AIRLINE": Custom("transportation", X.airline_first, X.airline_tighten, _never,
                      city_scoped=False),
}
