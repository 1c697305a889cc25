"""Itinerary meta-information (paper 3.2): origin, 1-2 destinations, dates inside the world's
window, party size; every leg must have a flight or train with seats for the party on its
date. Three-city trips keep only routes where two of the cities are within 500 km or the three
lie roughly on a line (a detour of at most 25 % over the direct origin -> last leg)."""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import Any

from evaluator.benchmarks.tripbench.data import TripMeta, TripStay

from ..evaluation.common import Trip, haversine_km

NEAR_KM = 500.0
COLLINEAR_DETOUR = 1.25
PARTY_SIZES = (1, 2, 2, 2, 3, 4, 4, 5, 6)


class WorldFacts:
    """What sampling reads often: cities, the date window, and a leg availability cache."""

    def __init__(self, world: Any) -> None:
        self.world = world
        self.cities = world.query("SELECT id, name, lat, lon FROM cities ORDER BY id")
        self.by_name = {c["name"]: c for c in self.cities}
        meta = world.meta
        self.first = date.fromisoformat(meta["date_start"])
        self.last = date.fromisoformat(meta["date_end"])
        self._legs: dict[tuple[str, str, str, int], bool] = {}

    @property
    def window_days(self) -> int:
        return (self.last - self.first).days + 1

    def km(self, a: str, b: str) -> float:
        x, y = self.by_name[a], self.by_name[b]
        return haversine_km(x["lat"], x["lon"], y["lat"], y["lon"])

    def leg_ok(self, a: str, b: str, day: str, people: int) -> bool:
        """A flight or train a -> b on `day` with a seat class that has `people` seats left."""
        key = (a, b, day, people)
        if key not in self._legs:
            ids = (self.by_name[a]["id"], self.by_name[b]["id"], day, people)
            sql = """SELECT 1 FROM {t} x JOIN {s} s ON s.{fk} = x.id WHERE x.from_city = ?
                     AND x.to_city = ? AND x.date = ? AND s.remaining >= ? LIMIT 1"""
            ok = bool(self.world.query(sql.format(t="flights", s="flight_seats", fk="flight_id"),
                                       ids)
                      or self.world.query(sql.format(t="trains", s="train_seats",
                                                     fk="train_id"), ids))
            self._legs[key] = ok
        return self._legs[key]


def to_trip(meta: TripMeta) -> Trip:
    """The evaluation's `Trip` of a task's meta-information."""
    return Trip(origin=meta.origin, stays=list(meta.stays),
                start_date=meta.start_date, end_date=meta.end_date,
                number_of_people=meta.number_of_people)


def route_shape_ok(facts: WorldFacts, cities: list[str]) -> bool:
    if len(cities) < 3:
        return True
    o, a, b = cities
    if min(facts.km(o, a), facts.km(a, b), facts.km(o, b)) <= NEAR_KM:
        return True
    return facts.km(o, a) + facts.km(a, b) <= COLLINEAR_DETOUR * facts.km(o, b)


def split_nights(rng: random.Random, nights: int, stays: int) -> list[int]:
    """`nights` over `stays` cities, each at least one."""
    cuts = sorted(rng.sample(range(1, nights), stays - 1)) if stays > 1 else []
    bounds = [0, *cuts, nights]
    return [bounds[i + 1] - bounds[i] for i in range(stays)]


def legs_ok(facts: WorldFacts, meta: TripMeta) -> bool:
    trip = to_trip(meta)
    return all(facts.leg_ok(a, b, d, meta.number_of_people)
               for (a, b), d in zip(trip.route(), trip.leg_dates()) if d is not None)


def sample_meta(rng: random.Random, facts: WorldFacts, n_cities: int, days: tuple[int, int],
                *, origin: str | None = None, people: int | None = None,
                start: str | None = None, n_days: int | None = None,
                exclude: tuple[str, ...] = ()) -> TripMeta | None:
    """One feasible itinerary of `n_cities` cities (origin included) and a length in `days`
    (capped by the world's window), or None when this draw is not feasible."""
    names = [c["name"] for c in facts.cities]
    lo, hi = days
    hi = min(hi, facts.window_days)
    lo = max(lo, n_cities)  # a night in every destination, and a return day
    if n_days is None:
        if lo > hi:
            return None
        n_days = rng.randint(lo, hi)
    origin = origin or rng.choice(names)
    pool = [n for n in names if n != origin and n not in exclude]
    if len(pool) < n_cities - 1:
        return None
    dests = rng.sample(pool, n_cities - 1)
    if not route_shape_ok(facts, [origin, *dests]):
        return None
    if start is None:
        latest = facts.window_days - n_days
        if latest < 0:
            return None
        start = (facts.first + timedelta(days=rng.randint(0, latest))).isoformat()
    end = (date.fromisoformat(start) + timedelta(days=n_days - 1)).isoformat()
    people = people or rng.choice(PARTY_SIZES)
    nights = split_nights(rng, n_days - 1, len(dests))
    meta = TripMeta(origin=origin, stays=[TripStay(c, n) for c, n in zip(dests, nights)],
                    start_date=start, end_date=end, number_of_people=people)
    return meta if legs_ok(facts, meta) else None
