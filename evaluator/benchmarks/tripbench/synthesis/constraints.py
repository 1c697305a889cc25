"""Sampling user constraints from the world (paper 3.2 "rubric and constraint construction",
B.2): for each supported rubric type, a first version drawn from the values the trip's scope
actually holds, a tighter version (the next step of a modification chain, "progressively more
restrictive"), an impossible version (FIT: no item of the scope satisfies it), and how a user
says it: an explicit sentence and (AIS) a vague one. Parameters are the evaluation package's
rubric structs, so G(e) and V(e, i) of its table decide feasibility, never this module.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec

from ..evaluation import rubrics_poi as P
from ..evaluation import rubrics_transport as T
from ..evaluation.common import Trip, haversine_km
from ..evaluation.rubric_base import Bound, Ctx, RubricParams, candidates
from ..periods import phrase

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


def _floor(v: float, step: float) -> float:
    return round(math.floor(v / step + 1e-9) * step, 4)


def _ceil(v: float, step: float) -> float:
    return round(math.ceil(v / step - 1e-9) * step, 4)


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def _where(e: Params) -> str:
    return f" in {e.city}" if e.city else ""


# ------------------------------------------------------------------ banded numeric rules


@dataclass(frozen=True)
class Banded:
    """A numeric column with a `min` (higher is stricter) or `max` (lower is stricter) bound."""

    cls: type
    kind: str
    column: str
    side: str            # "min" | "max"
    step: float
    cap: float | None    # the column's natural limit (no impossible "min" beyond it)
    say: str             # "{value}" and "{where}" filled in
    vague: str

    def values(self, scope: Scope) -> list[float]:
        return sorted(float(r[self.column]) for r in scope.rows(self.kind)
                      if r.get(self.column) is not None)

    def make(self, value: float, city: str | None) -> Params:
        bound = Bound(min=value) if self.side == "min" else Bound(max=value)
        return self.cls(bound=bound, city=city)

    def first(self, rng: random.Random, scope: Scope) -> Params | None:
        vals = self.values(scope)
        if len(vals) < 3:
            return None
        if self.side == "min":
            v = _floor(vals[int(rng.uniform(0.1, 0.45) * len(vals))], self.step)
            return self.make(v, scope.city) if v > vals[0] else None
        v = _ceil(vals[int(rng.uniform(0.55, 0.9) * len(vals))], self.step)
        return self.make(v, scope.city) if v < vals[-1] else None

    def tighten(self, rng: random.Random, scope: Scope, e: Params) -> Params | None:
        vals = self.values(scope)
        if self.side == "min":
            old = e.bound.min
            higher = [v for v in vals if _floor(v, self.step) > old]
            if len(higher) < 2:
                return None
            return self.make(_floor(higher[len(higher) // 3], self.step), e.city)
        old = e.bound.max
        lower = [v for v in vals if _ceil(v, self.step) < old]
        if len(lower) < 2:
            return None
        return self.make(_ceil(lower[-(len(lower) // 3) - 1], self.step), e.city)

    def impossible(self, scope: Scope, e: Params) -> Params | None:
        vals = self.values(scope)
        if not vals:
            return None
        if self.side == "min":
            v = _floor(vals[-1], self.step) + self.step
            return None if self.cap is not None and v > self.cap else self.make(v, e.city)
        v = _ceil(vals[0], self.step) - self.step
        return self.make(v, e.city) if v > 0 else None

    def text(self, e: Params) -> str:
        value = e.bound.min if self.side == "min" else e.bound.max
        return self.say.format(value=_num(value), where=_where(e))


BANDED: dict[str, Banded] = {b.cls.__struct_config__.tag: b for b in (
    Banded(P.HeatScore, "attraction", "heat_score", "min", 0.5, 10.0,
           "every attraction{where} should have a popularity score of at least {value} out of 10",
           "we'd rather see the well-known, popular places"),
    Banded(P.CommentScore, "attraction", "comment_score", "min", 0.1, 5.0,
           "only attractions{where} whose visitors rate them {value} or higher (out of 5)",
           "the sights should be ones people actually enjoyed"),
    Banded(P.CommentCount, "attraction", "comment_count", "min", 100.0, None,
           "attractions{where} with at least {value} reviews, please",
           "I trust places lots of people have reviewed"),
    Banded(P.PriceAttraction, "attraction", "ticket_price", "max", 10.0, None,
           "no attraction{where} whose cheapest ticket costs more than {value} yuan",
           "let's not spend much on entrance tickets"),
    Banded(P.SightLevel, "attraction", "sight_level", "min", 1.0, 5.0,
           "at least one attraction{where} should be a {value}A-level scenic spot or better",
           "I'd like to see one of the officially top-rated landmarks"),
    Banded(P.Star, "hotel", "star", "min", 1.0, 5.0,
           "hotels{where} must be {value}-star or above",
           "somewhere reasonably nice to sleep"),
    Banded(P.RestaurantPrice, "restaurant", "avg_price", "max", 10.0, None,
           "restaurants{where} should cost no more than {value} yuan per person",
           "meals shouldn't be too pricey"),
    Banded(P.Rating, "restaurant", "score", "min", 0.1, 5.0,
           "restaurants{where} need a rating of at least {value}",
           "only good restaurants, please"),
)}


# ------------------------------------------------------------------ value lists


@dataclass(frozen=True)
class Listed:
    """Categories / cuisines / attraction ids to include (cover) or exclude."""

    cls: type
    kind: str
    column: str
    include: bool
    say: str
    vague: str

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

    def text(self, e: Params, names: dict[str, str] | None = None) -> str:
        items = list(getattr(e, self.field()))
        if self.column == "id" and names:
            items = [names.get(i, i) for i in items]
        return self.say.format(values=", ".join(items), where=_where(e))


LISTED: dict[str, Listed] = {lst.cls.__struct_config__.tag: lst for lst in (
    Listed(P.IncludeCategories, "attraction", "category", True,
           "the plan{where} has to include these kinds of attractions: {values}",
           "there are a couple of kinds of sights we really care about"),
    Listed(P.ExcludeCategories, "attraction", "category", False,
           "please leave out attractions{where} of this kind: {values}",
           "some types of places just aren't our thing"),
    Listed(P.IncludeAttractions, "attraction", "id", True,
           "we definitely want to visit {values}",
           "there's a famous spot we'd hate to miss"),
    Listed(P.ExcludeAttractions, "attraction", "id", False,
           "skip {values}, we've been there already",
           "we've already seen some of the big sights"),
    Listed(P.IncludeCuisine, "restaurant", "cuisine", True,
           "we want to have {values}{where} at least once",
           "we'd like to try some particular cuisines"),
    Listed(P.ExcludeCuisine, "restaurant", "cuisine", False,
           "no {values} restaurants{where}, please",
           "there's food we'd rather avoid"),
)}


# ------------------------------------------------------------------ custom rules


def _center_km(row: dict[str, Any]) -> float:
    return haversine_km(row["lat"], row["lon"], row["city_lat"], row["city_lon"])


def _km_first(kind: str, cls: type) -> Callable[[random.Random, Scope], Params | None]:
    def first(rng: random.Random, scope: Scope) -> Params | None:
        d = sorted(_center_km(r) for r in scope.rows(kind))
        if len(d) < 3:
            return None
        return cls(max_km=_ceil(d[int(rng.uniform(0.6, 0.9) * len(d))], 1.0), city=scope.city)
    return first


def _km_tighten(kind: str, cls: type):
    def tighten(rng: random.Random, scope: Scope, e: Params) -> Params | None:
        d = sorted(_center_km(r) for r in scope.rows(kind) if _center_km(r) < e.max_km - 1)
        if len(d) < 2:
            return None
        return msgspec.structs.replace(e, max_km=_ceil(d[len(d) * 2 // 3], 1.0))
    return tighten


def _km_impossible(kind: str):
    def impossible(scope: Scope, e: Params) -> Params | None:
        d = [_center_km(r) for r in scope.rows(kind)]
        v = math.floor(min(d) * 10) / 10 - 0.1 if d else 0
        return msgspec.structs.replace(e, max_km=round(v, 1)) if v > 0 else None
    return impossible


def _tiers(scope: Scope) -> list[str]:
    return sorted({P.TIERS.get(int(r["star"] or 0), "") for r in scope.rows("hotel")} - {""})


def _type_first(rng: random.Random, scope: Scope) -> Params | None:
    tiers = _tiers(scope)
    if len(tiers) < 2:
        return None
    keep = rng.sample(tiers, len(tiers) - 1)
    return P.HotelType(types=sorted(keep), city=scope.city)


def _type_tighten(rng: random.Random, scope: Scope, e: Params) -> Params | None:
    return (msgspec.structs.replace(e, types=sorted(rng.sample(e.types, len(e.types) - 1)))
            if len(e.types) > 1 else None)


def _type_impossible(scope: Scope, e: Params) -> Params | None:
    absent = [t for t in P.TIERS.values() if t not in _tiers(scope)]
    return msgspec.structs.replace(e, types=absent[:1]) if absent else None


def _room_prices(scope: Scope) -> list[float]:
    return sorted(float(r["price"]) for r in scope.rows("room"))


def _cost_first(rng: random.Random, scope: Scope) -> Params | None:
    p = _room_prices(scope)
    if len(p) < 3:
        return None
    return P.HotelCost(bound=Bound(max=_ceil(p[int(rng.uniform(0.5, 0.85) * len(p))], 50.0)),
                       city=scope.city)


def _cost_tighten(rng: random.Random, scope: Scope, e: Params) -> Params | None:
    lower = [v for v in _room_prices(scope) if _ceil(v, 50.0) < e.bound.max]
    if len(lower) < 2:
        return None
    return msgspec.structs.replace(e, bound=Bound(max=_ceil(lower[len(lower) * 2 // 3], 50.0)))


def _cost_impossible(scope: Scope, e: Params) -> Params | None:
    p = _room_prices(scope)
    v = _floor(p[0], 10.0) - 10 if p else 0
    return msgspec.structs.replace(e, bound=Bound(max=v)) if v > 0 else None


def _pet_first(rng: random.Random, scope: Scope) -> Params | None:
    pets = [r for r in scope.rows("hotel") if "pet" in (r.get("facilities") or "").lower()]
    return P.PetFriendly(city=scope.city) if pets else None


def _leg_rows(scope: Scope, which: str) -> list[dict[str, Any]]:
    return scope.rows("transport", which)


def _timing_first(cls: type, which: str):
    def first(rng: random.Random, scope: Scope) -> Params | None:
        rows = _leg_rows(scope, which)
        periods = [p for p, (a, b) in T.PERIODS.items() if p != "early_morning"
                   and any(a <= r["dep_time"] <= b for r in rows)]
        if not rows or not periods:
            return None
        e = cls(period=rng.choice(sorted(periods)))
        return e
    return first


SENSIBLE_DEPARTURE = "06:30"
"""Departure windows are drawn around services leaving at this time or later."""


def _timing_tighten(which: str):
    def tighten(rng: random.Random, scope: Scope, e: Params) -> Params | None:
        low, high = T._window(e)
        times = sorted({r["dep_time"] for r in _leg_rows(scope, which)
                        if low <= _mins(r["dep_time"]) <= high
                        and r["dep_time"] >= SENSIBLE_DEPARTURE})
        if not times:
            return None
        t = _mins(rng.choice(times))
        after, before = max(low, t - 90), min(high, t + 90)
        if before - after >= high - low:
            return None
        return type(e)(after=_hhmm(after), before=_hhmm(before), city=e.city)
    return tighten


def _timing_impossible(which: str):
    def impossible(scope: Scope, e: Params) -> Params | None:
        taken = [_mins(r["dep_time"]) for r in _leg_rows(scope, which)]
        for start in range(0, 24 * 60 - 60, 30):
            if not any(start <= t <= start + 60 for t in taken):
                return type(e)(after=_hhmm(start), before=_hhmm(start + 60), city=e.city)
        return None
    return impossible


def _mins(hhmm: str) -> int:
    h, m = hhmm.split(":")
    return int(h) * 60 + int(m)


def _hhmm(mins: int) -> str:
    return f"{mins // 60:02d}:{mins % 60:02d}"


def _leg_cheapest(scope: Scope) -> list[float]:
    ctx = Ctx(scope.world, scope.trip)
    return T._cheapest(ctx, T.TransportCost(max=0), "all")


def _tcost_first(rng: random.Random, scope: Scope) -> Params | None:
    cheapest = _leg_cheapest(scope)
    if not cheapest or math.isinf(max(cheapest)):
        return None
    return T.TransportCost(max=_ceil(max(cheapest) * rng.uniform(1.3, 2.0), 50.0))


def _tcost_tighten(rng: random.Random, scope: Scope, e: Params) -> Params | None:
    v = _ceil(max(_leg_cheapest(scope)) * 1.05, 10.0)
    return msgspec.structs.replace(e, max=v) if v < e.max else None


def _tcost_impossible(scope: Scope, e: Params) -> Params | None:
    v = _floor(max(_leg_cheapest(scope)) * 0.8, 10.0)
    return msgspec.structs.replace(e, max=v) if v > 0 else None


def _airlines(scope: Scope) -> list[str]:
    return sorted({r["airline"] for r in scope.rows("transport") if r.get("airline")})


def _airline_first(rng: random.Random, scope: Scope) -> Params | None:
    names = _airlines(scope)
    return T.Airline(excluded=[rng.choice(names)]) if len(names) > 1 else None


def _airline_tighten(rng: random.Random, scope: Scope, e: Params) -> Params | None:
    pool = [a for a in _airlines(scope) if a not in e.excluded]
    return T.Airline(excluded=[*e.excluded, rng.choice(pool)]) if len(pool) > 1 else None


@dataclass(frozen=True)
class Custom:
    family: str
    first: Callable[[random.Random, Scope], Params | None]
    tighten: Callable[[random.Random, Scope, Params], Params | None]
    impossible: Callable[[Scope, Params], Params | None]
    text: Callable[[Params], str]
    vague: str
    city_scoped: bool = True


def _none_tighten(rng: random.Random, scope: Scope, e: Params) -> Params | None:
    return None


def _none_impossible(scope: Scope, e: Params) -> Params | None:
    return None


def _window_text(e: Any) -> str:
    if e.period:
        return phrase(e.period)
    return f"between {e.after or '00:00'} and {e.before or '24:00'}"


CUSTOM: dict[str, Custom] = {
    "DISTANCE": Custom("attraction", _km_first("attraction", P.Distance),
                       _km_tighten("attraction", P.Distance), _km_impossible("attraction"),
                       lambda e: f"attractions{_where(e)} within {_num(e.max_km)} km of the "
                                 "city centre", "we don't want to travel far out of town"),
    "HOTEL_TYPE": Custom("hotel", _type_first, _type_tighten, _type_impossible,
                         lambda e: f"hotels{_where(e)} should be of the "
                                   f"{' or '.join(e.types)} kind",
                         "a hotel that suits our style"),
    "COST": Custom("hotel", _cost_first, _cost_tighten, _cost_impossible,
                   lambda e: f"a room{_where(e)} should cost at most {_num(e.bound.max)} yuan a "
                             "night", "we're watching the hotel budget"),
    "PET_FRIENDLY": Custom("hotel", _pet_first, _none_tighten, _none_impossible,
                           lambda e: f"we're bringing our dog, so hotels{_where(e)} must "
                                     "allow pets", "there's a furry family member coming too"),
    "LOCATION": Custom("hotel", _km_first("hotel", P.Location), _km_tighten("hotel", P.Location),
                       _km_impossible("hotel"),
                       lambda e: f"hotels{_where(e)} within {_num(e.max_km)} km of the centre",
                       "we'd like to stay somewhere central"),
    "TIME_DEPART": Custom("transportation", _timing_first(T.TimeDepart, "outbound"),
                          _timing_tighten("outbound"), _timing_impossible("outbound"),
                          lambda e: f"the outbound trip should leave {_window_text(e)}",
                          "I have some plans on the departure day", city_scoped=False),
    "TIME_RETURN": Custom("transportation", _timing_first(T.TimeReturn, "return"),
                          _timing_tighten("return"), _timing_impossible("return"),
                          lambda e: f"the trip home should leave {_window_text(e)}",
                          "the way back has to fit my schedule", city_scoped=False),
    "COST_TRANSPORT": Custom("transportation", _tcost_first, _tcost_tighten, _tcost_impossible,
                             lambda e: f"each one-way ticket must stay under {_num(e.max)} yuan "
                                       "per person", "keep the travel fares modest",
                             city_scoped=False),
    "AIRLINE": Custom("transportation", _airline_first, _airline_tighten, _none_impossible,
                      lambda e: f"no flights with {', '.join(e.excluded)}",
                      "there's an airline I won't fly with", city_scoped=False),
}

FAMILY = {**{k: ("attraction" if b.kind == "attraction" else b.kind)
             for k, b in BANDED.items()},
          **{k: lst.kind for k, lst in LISTED.items()},
          **{k: c.family for k, c in CUSTOM.items()}}
TYPES = tuple(sorted(FAMILY))
"""The rubric types the synthesiser draws (the evaluation's table minus CATEGORY_PRIORITY,
whose ordering rule needs a chosen plan to be meaningful)."""
FAMILIES = ("transportation", "attraction", "restaurant", "hotel")


def city_scoped(kind: str) -> bool:
    c = CUSTOM.get(kind)
    return c.city_scoped if c else True


def first(kind: str, rng: random.Random, scope: Scope) -> Params | None:
    if kind in BANDED:
        return BANDED[kind].first(rng, scope)
    if kind in LISTED:
        return LISTED[kind].first(rng, scope)
    return CUSTOM[kind].first(rng, scope)


def tighten(kind: str, rng: random.Random, scope: Scope, e: Params) -> Params | None:
    if kind in BANDED:
        return BANDED[kind].tighten(rng, scope, e)
    if kind in LISTED:
        return LISTED[kind].tighten(rng, scope, e)
    return CUSTOM[kind].tighten(rng, scope, e)


def impossible(kind: str, scope: Scope, e: Params) -> Params | None:
    if kind in BANDED:
        return BANDED[kind].impossible(scope, e)
    if kind in LISTED:
        return LISTED[kind].impossible(scope, e)
    return CUSTOM[kind].impossible(scope, e)


ALT_TEMPLATES: dict[str, str] = {
    "HEAT_SCORE": "please pick attractions{where} rated {value} or more for popularity (out of 10)",
    "COMMENT_SCORE": "every sight{where} should have a visitor score of {value} or more",
    "COMMENT_COUNT": "I only want attractions{where} that have {value} or more reviews",
    "PRICE_ATTRACTION": "the cheapest entrance ticket of any attraction{where} should not "
                        "exceed {value} yuan",
    "SIGHT_LEVEL": "include at least one {value}A (or higher) scenic area{where}",
    "STAR": "we need hotels{where} with at least {value} stars",
    "PRICE": "keep meals{where} at or below {value} yuan a head",
    "RATING": "every restaurant{where} should be rated {value} or better",
    "INCLUDE_CATEGORIES": "make sure we visit each of these kinds of places{where}: {values}",
    "EXCLUDE_CATEGORIES": "we're not interested in anything of this kind{where}: {values}",
    "INCLUDE_ATTRACTIONS": "{values} must be on the itinerary",
    "EXCLUDE_ATTRACTIONS": "please don't include {values}",
    "INCLUDE_CUISINE": "please plan at least one meal of each of these{where}: {values}",
    "EXCLUDE_CUISINE": "avoid restaurants{where} serving {values}",
}
"""A second wording per banded and listed type (the paper curates 80+ expressions)."""

ALT_CUSTOM: dict[str, Callable[[Any], str]] = {
    "DISTANCE": lambda e: f"keep every attraction{_where(e)} no more than {_num(e.max_km)} km "
                          "from the centre",
    "HOTEL_TYPE": lambda e: f"we'd like {' or '.join(e.types)} hotels{_where(e)}",
    "COST": lambda e: f"room rates{_where(e)} must stay within {_num(e.bound.max)} yuan per "
                      "night",
    "PET_FRIENDLY": lambda e: f"our pet travels with us, so the hotels{_where(e)} have to "
                              "accept pets",
    "LOCATION": lambda e: f"the hotel{_where(e)} should be no further than {_num(e.max_km)} km "
                          "from the city centre",
    "TIME_DEPART": lambda e: f"we want to set off {_window_text(e)}",
    "TIME_RETURN": lambda e: f"for the way back, please take a departure {_window_text(e)}",
    "COST_TRANSPORT": lambda e: f"one-way fares must be below {_num(e.max)} yuan per person",
    "AIRLINE": lambda e: f"avoid {', '.join(e.excluded)} flights",
}


def say(kind: str, e: Params, world: Any, variant: int = 0) -> str:
    """The explicit sentence of constraint `e` (`variant` 1: the second wording)."""
    if kind in BANDED:
        spec = BANDED[kind]
        if variant % 2 == 1 and kind in ALT_TEMPLATES:
            spec = dataclasses.replace(spec, say=ALT_TEMPLATES[kind])
        text = spec.text(e)
    elif kind in LISTED:
        spec_l = LISTED[kind]
        if variant % 2 == 1 and kind in ALT_TEMPLATES:
            spec_l = dataclasses.replace(spec_l, say=ALT_TEMPLATES[kind])
        names = {}
        if spec_l.column == "id":
            names = {i: (world.attraction(i) or {}).get("name", i) for i in e.ids}
        text = spec_l.text(e, names)
    elif variant % 2 == 1 and kind in ALT_CUSTOM:
        text = ALT_CUSTOM[kind](e)
    else:
        text = CUSTOM[kind].text(e)
    return text[:1].upper() + text[1:] + "."


def vague(kind: str) -> str:
    src = BANDED.get(kind) or LISTED.get(kind) or CUSTOM[kind]
    text = src.vague
    return text[:1].upper() + text[1:] + "."
