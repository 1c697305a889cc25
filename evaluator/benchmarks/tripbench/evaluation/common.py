"""What the checks and rubrics share: the trip's meta-information, violations, the world's
read interface, times, distances and the in-city route estimate.

The world is the SQLite database of `world/schema.py`, read through
`world/db.py`'s `World` (only `query` and the typed getters are used, see `WorldView`).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from datetime import date, timedelta
from typing import Any, Protocol

import msgspec

from evaluator.benchmarks.tripbench.trip import TripMeta, TripStay

from .plan import SPAN_RE


class WorldView(Protocol):
    """The part of `world.db.World` the evaluation reads."""

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]: ...
    def attraction(self, id: str) -> dict[str, Any] | None: ...
    def attraction_product(self, id: str) -> dict[str, Any] | None: ...
    def hotel(self, id: str) -> dict[str, Any] | None: ...
    def room(self, id: str) -> dict[str, Any] | None: ...
    def restaurant(self, id: str) -> dict[str, Any] | None: ...
    def restaurant_product(self, id: str) -> dict[str, Any] | None: ...
    def flight(self, id: str) -> dict[str, Any] | None: ...
    def flight_seat(self, id: str) -> dict[str, Any] | None: ...
    def train(self, id: str) -> dict[str, Any] | None: ...
    def train_seat(self, id: str) -> dict[str, Any] | None: ...
    def city(self, id: str) -> dict[str, Any] | None: ...
    def city_by_name(self, name: str) -> dict[str, Any] | None: ...


Stay = TripStay
"""One destination city in visiting order; `nights` (optional) fixes the transfer dates."""


class Trip(TripMeta):
    """The itinerary meta-information of a task (paper 3.2): origin, stays, dates, party, as
    the task file holds it, with the dates and legs the checks need."""

    def route(self) -> list[tuple[str, str]]:
        """The required intercity legs: origin -> stay 1 -> ... -> stay n -> origin."""
        cities = [self.origin, *(s.city for s in self.stays), self.origin]
        return list(itertools.pairwise(cities))

    def dates(self) -> list[str]:
        first, last = date.fromisoformat(self.start_date), date.fromisoformat(self.end_date)
        return [(first + timedelta(days=i)).isoformat() for i in range((last - first).days + 1)]

    def day_count(self) -> int:
        """len(dates()), without building them."""
        return max(0, (date.fromisoformat(self.end_date)
                       - date.fromisoformat(self.start_date)).days + 1)

    def leg_dates(self) -> list[str | None]:
        """Each leg's date when every stay gives its nights; else None beyond the ends."""
        legs: list[str | None] = [self.start_date] + [None] * len(self.stays)
        legs[-1] = self.end_date
        if all(s.nights is not None for s in self.stays):
            day = date.fromisoformat(self.start_date)
            for index, stay in enumerate(self.stays[:-1]):
                day += timedelta(days=stay.nights or 0)
                legs[index + 1] = day.isoformat()
        return legs


class Violation(msgspec.Struct, omit_defaults=True):
    """One finding of a check: the check's name, the day (date) if any, what, which ids."""

    check: str
    message: str
    day: str | None = None
    ids: list[str] = msgspec.field(default_factory=list)


def hhmm(value: str) -> int | None:
    """Minutes after midnight of "HH:MM" (24:00 allowed), or None."""
    try:
        hours, minutes = value.strip().split(":")
        total = int(hours) * 60 + int(minutes)
    except (ValueError, AttributeError):
        return None
    return total if 0 <= total <= 24 * 60 else None


def span(value: str) -> tuple[int, int] | None:
    """(start, end) minutes of "HH:MM-HH:MM"; an end before the start is on the next day."""
    match = SPAN_RE.match(value.strip()) if isinstance(value, str) else None
    if match is None:
        return None
    start = int(match.group(1)) * 60 + int(match.group(2))
    end = int(match.group(3)) * 60 + int(match.group(4))
    return start, end + 24 * 60 if end < start else end


def opening(row: dict[str, Any]) -> tuple[int, int] | None:
    """A POI's (open, close) minutes; a close at or before the open is past midnight."""
    start, end = hhmm(row.get("open_time") or ""), hhmm(row.get("close_time") or "")
    if start is None or end is None:
        return None
    return start, end + 24 * 60 if end <= start else end


def weekday(iso: str) -> int | None:
    """0 = Monday, as `attractions.closed_weekdays` counts."""
    try:
        return date.fromisoformat(iso).weekday()
    except ValueError:
        return None


try:  # the world package's distance and in-city travel-time model, when present
    from ..world.geo import haversine_km, route_estimate
except ImportError:  # pragma: no cover - the same model, for a checkout without world/
    def haversine_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
        p1, p2 = math.radians(lat1), math.radians(lat2)
        dp, dl = p2 - p1, math.radians(lon2 - lon1)
        a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
        return 2 * 6371.0088 * math.asin(min(1.0, math.sqrt(a)))

    def route_estimate(lat1: float, lon1: float, lat2: float,
                       lon2: float) -> tuple[float, int]:
        km = round(haversine_km(lat1, lon1, lat2, lon2), 2)
        return km, round(10.0 + km / 30.0 * 60.0)


def estimate_minutes(a: tuple[float, float], b: tuple[float, float]) -> int:
    """Minutes `get_route_estimate` gives from `a` to `b` (the tool's own model, world/geo.py:
    10 minutes plus 30 km/h over the straight line)."""
    return route_estimate(a[0], a[1], b[0], b[1])[1]


def city_ids(world: WorldView, names: Sequence[str]) -> dict[str, str]:
    """Resolved city names -> city id; unknown names left out. A name matches a city exactly,
    case-insensitively, or by containing exactly one city's name ("Shanghai City",
    "Shanghai (Pudong)")."""
    out: dict[str, str] = {}
    known: list[dict[str, Any]] | None = None
    for name in names:
        key = name.strip()
        row = world.city_by_name(key)
        if row is None:
            if known is None:
                known = world.query("SELECT id, name FROM cities")
            lower = key.lower()
            exact = [c for c in known if c["name"].lower() == lower]
            inside = [c for c in known if re.search(rf"\b{re.escape(c['name'].lower())}\b",
                                                     lower)]
            row = exact[0] if exact else inside[0] if len(inside) == 1 else None
        if row is not None:
            out[key] = row["id"]
    return out


def day_cities(field: str) -> list[str]:
    """The city names of a day's `cities` field: "Tokyo", "Tokyo -> Osaka", "A->B->C"."""
    parts = field.replace("→", "->").split("->")
    return [p.strip() for p in parts if p.strip()]


def transport(world: WorldView, id: str | None) -> dict[str, Any] | None:
    """A flight or train row by id, with `mode` set to "flight" or "train"."""
    if not id:
        return None
    for mode, getter in (("flight", world.flight), ("train", world.train)):
        row = getter(id)
        if row is not None:
            return {**row, "mode": mode}
    return None


def seat(world: WorldView, id: str) -> dict[str, Any] | None:
    """A flight or train seat product by id, `transport_id` naming its flight or train."""
    row = world.flight_seat(id)
    if row is not None:
        return {**row, "transport_id": row["flight_id"]}
    row = world.train_seat(id)
    if row is not None:
        return {**row, "transport_id": row["train_id"]}
    return None
