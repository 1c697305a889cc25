"""Is a set of constraints solvable on a trip? (paper 3.2 "task generation")

For each item kind, C starts as the kind's items in the trip's scope and loses every in-scope
candidate that fails an "all"-mode (or item-level "custom") rubric: C = {i : for all e,
V(e, i) = 1}, from the generators' feasible sets F_e of G(e). Containment rubrics ("cover":
INCLUDE_*) need each listed value matched by an item of C, "any" rubrics (SIGHT_LEVEL) one item
of C in F_e. Then the plan must be buildable from C: an attraction and a restaurant for every
night in each destination, a hotel (with a fitting room when a room rubric is set) in each, a
service on every leg (a seat when a seat rubric is set); and the POIs of C must number at least
`factor` x the trip's days (the paper: 4-10 x days).
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..evaluation import rubrics
from ..evaluation.common import Trip, city_ids
from ..evaluation.rubric_base import Ctx, RubricParams, candidates, legs

POI_KINDS = ("attraction", "restaurant", "hotel")


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

    def check(self, trip: Trip, specs: list[RubricParams]) -> Solvability:
        kinds: dict[str, set[str]] = {}
        later: list[tuple[RubricParams, str]] = []
        for e in specs:
            d = rubrics.definition(e)
            g = self.generate(e, trip)
            pool = kinds.setdefault(g.kind, set(self.base(g.kind, trip)))
            if d.mode in ("all", "custom"):
                pool -= set(g.candidates) - set(g.feasible)
            else:
                later.append((e, d.mode))
        for e, mode in later:
            d = rubrics.definition(e)
            pool = kinds[d.kind]
            if mode == "any":
                if not pool & set(self.generate(e, trip).feasible):
                    return self._fail(trip, f"{d.name}: no candidate left satisfies it")
                continue
            field = "ids" if hasattr(e, "ids") else "values"
            for value in getattr(e, field):
                one = msgspec.structs.replace(e, **{field: [value]})
                if not pool & set(self.generate(one, trip).feasible):
                    return self._fail(trip, f"{d.name}: nothing left offers {value!r}")
        for kind in POI_KINDS:
            kinds.setdefault(kind, set(self.base(kind, trip)))
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
            per_city: dict[str, int] = {}
            for i in kinds[kind]:
                info = where.get(i)
                if info is None or (kind == "room" and "hotel" in kinds
                                    and info[1] not in kinds["hotel"]):
                    continue
                per_city[info[0]] = per_city.get(info[0], 0) + 1
            for stay in trip.stays:
                need = max(1, stay.nights or 1) if kind in ("attraction", "restaurant") else 1
                have = per_city.get(ids.get(stay.city, ""), 0)
                if have < need:
                    return f"{kind}: {have} left in {stay.city}, {need} needed"
        ctx = Ctx(self.world, trip)
        for kind in ("transport", "seat"):
            if kind not in kinds:
                continue
            where = self.base(kind, trip)
            served = {where[i] for i in kinds[kind] if i in where}
            for start, end, date in legs(ctx, "all"):
                if not any(a == start and b == end and (date is None or d == date)
                           for a, b, d in served):
                    return f"{kind}: no service left on the leg {start} -> {end} ({date})"
        return ""
