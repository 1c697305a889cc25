"""The machinery of user-constraint rubrics (paper 3.2, B.2): parameters `e` as msgspec
structs tagged by rubric type, the generator result `RubricRange`, and `RubricDef`, which
turns an item predicate V(e, i) into both the generator G(e) (selection range and feasible ids)
and the plan validator V(e, plan).

Items are rows of one kind: `attraction`, `hotel`, `room`, `restaurant`, `transport` (a flight
or train) or `seat` (a flight or train seat product), read with the columns the predicates
need. A rubric's scope is its `city` when given, else the task's destination cities (POIs),
or the task's legs (transport, seats: `legs` "outbound", "return" or "all").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from .common import Trip, WorldView, city_ids
from .plan import ATTRACTION, INTERCITY, RESTAURANT, TripPlan

Row = dict[str, Any]


class Bound(msgspec.Struct, omit_defaults=True):
    """A numeric rule: `around` (within `tolerance`, relative) or min/max (inclusive)."""

    min: float | None = None
    max: float | None = None
    around: float | None = None
    tolerance: float = 0.1

    def holds(self, value: float | None) -> bool:
        if value is None:
            return False
        if self.around is not None:
            return abs(value - self.around) <= self.tolerance * abs(self.around)
        return ((self.min is None or value >= self.min)
                and (self.max is None or value <= self.max))


class RubricParams(msgspec.Struct, tag_field="type", kw_only=True, omit_defaults=True):
    """Base of every rubric's parameters; `city` narrows the rubric to one city's items."""

    city: str | None = None


class RubricRange(msgspec.Struct, omit_defaults=True):
    """G(e): the selection range (item kind, the rule, the candidates) and the feasible ids."""

    rubric: str
    kind: str
    rule: dict[str, Any]
    candidates: list[str]
    feasible: list[str]


@dataclass
class Ctx:
    world: WorldView
    trip: Trip | None


_SQL = {
    "attraction": """SELECT a.*, c.lat AS city_lat, c.lon AS city_lon,
        COALESCE((SELECT MIN(p.price) FROM attraction_products p WHERE p.attraction_id = a.id), 0)
        AS ticket_price FROM attractions a JOIN cities c ON c.id = a.city_id""",
    "hotel": """SELECT h.*, c.lat AS city_lat, c.lon AS city_lon FROM hotels h
        JOIN cities c ON c.id = h.city_id""",
    "room": """SELECT r.*, h.city_id, h.star, h.lat, h.lon FROM hotel_rooms r
        JOIN hotels h ON h.id = r.hotel_id""",
    "restaurant": "SELECT * FROM restaurants",
    "transport": """SELECT * FROM (
        SELECT id, 'flight' AS mode, from_city, to_city, date, dep_time, arr_time, airline,
        on_time_rate, avg_delay_min FROM flights UNION ALL
        SELECT id, 'train' AS mode, from_city, to_city, date, dep_time, arr_time, NULL, NULL,
        NULL FROM trains)""",
    "seat": """SELECT * FROM (
        SELECT s.id, s.flight_id AS transport_id, s.price, s.platform, 'flight' AS mode,
        f.from_city, f.to_city, f.date, f.airline
        FROM flight_seats s JOIN flights f ON f.id = s.flight_id
        UNION ALL
        SELECT s.id, s.train_id, s.price, s.platform, 'train', t.from_city, t.to_city, t.date,
        NULL FROM train_seats s JOIN trains t ON t.id = s.train_id)""",
}
_CITY_COLUMN = {"attraction": "a.city_id", "hotel": "h.city_id", "room": "h.city_id",
                "restaurant": "city_id"}
_ID_COLUMN = {"attraction": "a.id", "hotel": "h.id", "room": "r.id", "restaurant": "id",
              "transport": "id", "seat": "id"}


def fetch(world: WorldView, kind: str, where: str = "", params: Sequence[Any] = ()) -> list[Row]:
    return world.query(_SQL[kind] + (f" WHERE {where}" if where else "") + " ORDER BY 1",
                       tuple(params))


def fetch_ids(world: WorldView, kind: str, ids: Sequence[str]) -> dict[str, Row]:
    if not ids:
        return {}
    marks = ", ".join("?" * len(set(ids)))
    rows = fetch(world, kind, f"{_ID_COLUMN[kind]} IN ({marks})", sorted(set(ids)))
    return {row["id"]: row for row in rows}


def scope_cities(e: RubricParams, ctx: Ctx) -> list[str] | None:
    names = [e.city] if e.city else [s.city for s in ctx.trip.stays] if ctx.trip else None
    return None if names is None else list(city_ids(ctx.world, names).values())


def legs(ctx: Ctx, which: str) -> list[tuple[str | None, str | None, str | None]]:
    """(from id, to id, date or None) of the task's legs: outbound, return or all."""
    if ctx.trip is None:
        return []
    trip = ctx.trip
    ids = city_ids(ctx.world, [trip.origin, *(s.city for s in trip.stays)])
    route = [(ids.get(a), ids.get(b), d) for (a, b), d in zip(trip.route(), trip.leg_dates())]
    return route[:1] if which == "outbound" else route[-1:] if which == "return" else route


def candidates(kind: str, e: RubricParams, ctx: Ctx, which: str = "all") -> list[Row]:
    if kind in _CITY_COLUMN:
        cities = scope_cities(e, ctx)
        if cities is None:
            return fetch(ctx.world, kind)
        marks = ", ".join("?" * len(cities)) or "NULL"
        return fetch(ctx.world, kind, f"{_CITY_COLUMN[kind]} IN ({marks})", cities)
    rows: list[Row] = []
    trip = ctx.trip
    for start, end, date in legs(ctx, which):
        dates = [date] if date else trip.dates() if trip else []
        marks = ", ".join("?" * len(dates))
        rows += fetch(ctx.world, kind, f"from_city = ? AND to_city = ? AND date IN ({marks})",
                      [start, end, *dates])
    return rows if ctx.trip else fetch(ctx.world, kind)


def selected(kind: str, plan: TripPlan, e: RubricParams, ctx: Ctx) -> list[Row]:
    """The plan's items of `kind` in the rubric's scope, in plan order (hotels and rooms once
    per night, with `room_num` and `date` set on rooms and hotels)."""
    ids: list[tuple[str, dict[str, Any]]] = []
    for day in plan.daily_schedule:
        if kind in ("hotel", "room") and day.hotel is not None:
            if kind == "hotel":
                ids.append((day.hotel.id, {"date": day.date}))
            else:
                ids += [(r.id, {"date": day.date, "room_num": r.room_num})
                        for r in day.hotel.products]
        for act in day.activities:
            wanted = {"attraction": ATTRACTION, "restaurant": RESTAURANT,
                      "transport": INTERCITY}.get(kind)
            if act.id and act.type == wanted:
                ids.append((act.id, {"date": day.date}))
            if kind == "seat" and act.type == INTERCITY:
                ids += [(p.id, {"date": day.date, "quantity": p.quantity})
                        for p in act.products or []]
    rows = fetch_ids(ctx.world, kind, [i for i, _ in ids])
    cities = set(scope_cities(e, ctx) or []) if e.city else None
    out = []
    for id, extra in ids:
        row = rows.get(id)
        if row is not None and (cities is None or row.get("city_id") in cities):
            out.append({**row, **extra})
    return out


Mode = Literal["all", "any", "cover", "custom"]


@dataclass(frozen=True)
class RubricDef:
    """One rubric type: its parameters, item kind and item predicate V(e, i).

    Plan-level semantics (`mode`): "all" -- every selected item satisfies V; "any" -- at least
    one does; "cover" -- every value of `values(e)` is matched by some selected item
    (`covers(e, row)` gives the values a row matches); "custom" -- `check(e, plan, ctx)`.
    """

    name: str
    family: str
    params: type[RubricParams]
    kind: str
    accepts: Callable[[Any, Row, Ctx], bool]
    mode: Mode = "all"
    legs: str = "all"
    values: Callable[[Any], Sequence[str]] | None = None
    covers: Callable[[Any, Row], set[str]] | None = None
    check: Callable[[Any, TripPlan, Ctx], bool] | None = None
    rule: Callable[[Any], dict[str, Any]] | None = None
    filters: bool = True   # a plan may hold only feasible items (else: a need, see solvability)

    def generate(self, e: RubricParams, world: WorldView, trip: Trip | None = None) -> RubricRange:
        """G(e): the candidates in scope and the ids of those satisfying V(e, i)."""
        ctx = Ctx(world, trip)
        rows = candidates(self.kind, e, ctx, self.legs)
        rule = self.rule(e) if self.rule else msgspec.to_builtins(e)
        return RubricRange(self.name, self.kind, rule, [r["id"] for r in rows],
                           [r["id"] for r in rows if self.accepts(e, r, ctx)])

    def item(self, e: RubricParams, id: str, world: WorldView, trip: Trip | None = None) -> bool:
        """V(e, i) for one id of this rubric's kind (False when the id is unknown)."""
        row = fetch_ids(world, self.kind, [id]).get(id)
        return row is not None and self.accepts(e, row, Ctx(world, trip))

    def validate(self, e: RubricParams, plan: TripPlan, world: WorldView,
                 trip: Trip | None = None) -> bool:
        """V(e, plan): whether the itinerary satisfies the constraint."""
        ctx = Ctx(world, trip)
        if self.mode == "custom":
            assert self.check is not None
            return self.check(e, plan, ctx)
        rows = selected(self.kind, plan, e, ctx)
        if self.mode == "all":
            return all(self.accepts(e, row, ctx) for row in rows)
        if self.mode == "any":
            return any(self.accepts(e, row, ctx) for row in rows)
        assert self.values is not None and self.covers is not None
        matched = set().union(*(self.covers(e, row) for row in rows)) if rows else set()
        return all(value in matched for value in self.values(e))
