"""Is a set of constraints solvable on a trip? (paper 3.2 "task generation")

For each item kind, C starts as the kind's items in the trip's scope and loses every in-scope
candidate that fails an "all"-mode (or item-level "custom") rubric: C = {i : for all e,
V(e, i) = 1}, from the generators' feasible sets F_e of G(e). Containment rubrics ("cover":
INCLUDE_*) need each listed value matched by an item of C, "any" rubrics (SIGHT_LEVEL) one item
of C in F_e. Then the plan must be buildable from C: an attraction and a restaurant for every
night in each destination, a hotel (with a fitting room when a room rubric is set) in each, on
every leg a service of C with a seat of C that has places for the whole party (arriving the
same day, except on the way home; after the first leg, leaving at 06:30 or later); and the POIs of C must number at least
`factor` x the trip's days (the paper: 4-10 x days).
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..evaluation import rubrics
from ..evaluation.common import Trip, city_ids
from ..evaluation.rubric_base import Ctx, RubricParams, candidates, legs

POI_KINDS = ("attraction", "restaurant", "hotel")
EARLIEST_LATER_DEPARTURE = "06:30"
"""A leg after the first leaves from a city where the party slept: not before this."""


class Solvability(msgspec.Struct, omit_defaults=True):
    ok: bool
    candidates: int
    required: int
    reason: str = ""
    per_kind: dict[str, int] = msgspec.field(default_factory=dict)


def _key(e: RubricParams) -> bytes:
    return msgspec.json.encode(e)


class Checker:
    """Solvability with the generators' results cached per (rubric, trip)."""

    def __init__(self, world: Any, factor: float) -> None:
        self.world = world
        self.factor = factor
        self._g: dict[tuple[bytes, bytes], rubrics.RubricRange] = {}
        self._base: dict[tuple[str, bytes], dict[str, tuple]] = {}
        self.rows: dict[Any, list[dict[str, Any]]] = {}  # the samplers' reads (constraints.Scope)
        self._seats: dict[tuple, list[tuple[str, str, bool, str]]] = {}

    def generate(self, e: RubricParams, trip: Trip) -> rubrics.RubricRange:
        key = (_key(e), msgspec.json.encode(trip))
        if key not in self._g:
            self._g[key] = rubrics.generate(e, self.world, trip)
        return self._g[key]

    def base(self, kind: str, trip: Trip) -> dict[str, tuple]:
        """The kind's items in the trip's scope: id -> where it is (city, or city and hotel
        for rooms, or from, to and date for services and seats)."""
        key = (kind, msgspec.json.encode(trip))
        if key not in self._base:
            rows = candidates(kind, RubricParams(), Ctx(self.world, trip), "all")
            if kind in ("transport", "seat"):
                where = {r["id"]: (r["from_city"], r["to_city"], r["date"]) for r in rows}
            elif kind == "room":
                where = {r["id"]: (r["city_id"], r["hotel_id"]) for r in rows}
            else:
                where = {r["id"]: (r["city_id"],) for r in rows}
            self._base[key] = where
        return self._base[key]

    def pools(self, trip: Trip, specs: list[RubricParams]
              ) -> tuple[dict[str, set[str]], list[tuple[str, str, set[str]]]]:
        """(C per item kind, the needs): C after every "all"/"custom" rubric; a need is
        (kind, what, the items of C meeting it) for each value of a containment rubric and
        each "any" rubric (an empty set: unmet)."""
        kinds: dict[str, set[str]] = {}
        later: list[tuple[RubricParams, str]] = []
        for e in specs:
            d = rubrics.definition(e)
            g = self.generate(e, trip)
            pool = kinds.get(g.kind)
            if pool is None:        # (setdefault would build the set for every rubric)
                pool = kinds[g.kind] = set(self.base(g.kind, trip))
            if d.mode in ("all", "custom") and d.filters:
                pool -= set(g.candidates) - set(g.feasible)
            else:   # containment, "any", or a preference that needs its first value
                later.append((e, d.mode if d.filters else "cover"))
        needs: list[tuple[str, str, set[str]]] = []
        for e, mode in later:
            d = rubrics.definition(e)
            pool = kinds[d.kind]
            if mode == "any":
                needs.append((d.kind, d.name, pool & set(self.generate(e, trip).feasible)))
                continue
            field = "ids" if hasattr(e, "ids") else "values"
            for value in (d.values(e) if d.values else getattr(e, field)):
                one = msgspec.structs.replace(e, **{field: [value]})
                needs.append((d.kind, f"{d.name} {value!r}",
                              pool & set(self.generate(one, trip).feasible)))
        for kind in POI_KINDS:
            if kind not in kinds:
                kinds[kind] = set(self.base(kind, trip))
        return kinds, needs

    def check(self, trip: Trip, specs: list[RubricParams]) -> Solvability:
        kinds, needs = self.pools(trip, specs)
        for _kind, what, meeting in needs:
            if not meeting:
                return self._fail(trip, f"{what}: no candidate left offers it")
        reason = self._buildable(trip, kinds)
        total = sum(len(kinds[k]) for k in POI_KINDS)
        required = int(self.factor * len(trip.dates()) + 0.999)
        per_kind = {k: len(v) for k, v in sorted(kinds.items())}
        if reason:
            return Solvability(False, total, required, reason, per_kind)
        if total < required:
            return Solvability(False, total, required,
                               f"{total} candidates < {required} ({self.factor} x days)",
                               per_kind)
        return Solvability(True, total, required, "", per_kind)

    def _fail(self, trip: Trip, reason: str) -> Solvability:
        return Solvability(False, 0, int(self.factor * len(trip.dates()) + 0.999), reason)

    def _buildable(self, trip: Trip, kinds: dict[str, set[str]]) -> str:
        ids = city_ids(self.world, [s.city for s in trip.stays])
        for kind in ("attraction", "restaurant", "hotel", "room"):
            if kind not in kinds:
                continue
            where = self.base(kind, trip)
            needs = [max(1, stay.nights or 1) if kind in ("attraction", "restaurant") else 1
                     for stay in trip.stays]
            short: dict[str, int] = {}     # city id -> how many more it needs
            for stay, need in zip(trip.stays, needs, strict=True):
                cid = ids.get(stay.city, "")
                short[cid] = max(short.get(cid, 0), need)
            hotels = kinds.get("hotel") if kind == "room" else None
            per_city: dict[str, int] = {}
            for i in kinds[kind]:
                info = where.get(i)
                if info is None or (hotels is not None and info[1] not in hotels):
                    continue
                per_city[info[0]] = per_city.get(info[0], 0) + 1
                left = short.get(info[0])
                if left is not None:
                    if left <= 1:
                        del short[info[0]]
                        if not short:        # every stay has enough: no need to count on
                            break
                    else:
                        short[info[0]] = left - 1
            for stay, need in zip(trip.stays, needs, strict=True):
                have = per_city.get(ids.get(stay.city, ""), 0)
                if have < need:
                    return f"{kind}: {have} left in {stay.city}, {need} needed"
        ctx = Ctx(self.world, trip)
        route = legs(ctx, "all")
        for number, (start, end, date) in enumerate(route):
            usable = [(seat, service) for seat, service, same_day, dep
                      in self._leg_seats(start, end, date, trip.number_of_people)
                      if (same_day or number == len(route) - 1)
                      and (number == 0 or dep >= EARLIEST_LATER_DEPARTURE)
                      and ("seat" not in kinds or seat in kinds["seat"])
                      and ("transport" not in kinds or service in kinds["transport"])]
            if not usable:
                return f"no service with seats for the party left on {start} -> {end} ({date})"
        return ""

    def _leg_seats(self, start: str | None, end: str | None, date: str | None,
                   people: int) -> list[tuple[str, str, bool, str]]:
        """(seat id, service id, arrives the same day, departure) of the seats with `people`
        places left on a leg."""
        key = (start, end, date, people)
        if key not in self._seats:
            rows: list[tuple[str, str, bool]] = []
            for table, seats, fk in (("flights", "flight_seats", "flight_id"),
                                     ("trains", "train_seats", "train_id")):
                rows += [(r["seat"], r["id"], r["arr_time"] > r["dep_time"], r["dep_time"])
                         for r in self.world.query(
                             f"SELECT s.id AS seat, x.id, x.dep_time, x.arr_time FROM {table} x "
                             f"JOIN {seats} s ON s.{fk} = x.id WHERE x.from_city = ? AND "
                             "x.to_city = ? AND x.date = ? AND s.remaining >= ? ORDER BY s.id",
                             (start, end, date, people))]
            self._seats[key] = rows
        return self._seats[key]
