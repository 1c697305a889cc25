"""Transportation rubrics (paper B.2.4; B.2.5 "general" repeats the same six): departure and
return times, transport cost, booking platform, punctuality, airlines.

Outbound is the task's first leg (origin to the first stay), return its last (back to the
origin); in a plan they are the intercity legs leaving, and reaching, the origin city.
"""

from __future__ import annotations

from typing import Literal

from ..periods import PERIODS, period_key
from .common import city_ids, hhmm, span
from .plan import INTERCITY, TripPlan
from .rubric_base import Ctx, Row, RubricDef, RubricParams, candidates, legs, selected


class _Timing(RubricParams):
    """The leg's departure (`target` "depart") or arrival time lies in [after, before]
    (inclusive; either may be open) or in a named `period` (`periods.PERIODS`, the table the
    tools' dep_period / arr_period use too)."""

    target: Literal["depart", "arrive"] = "depart"
    after: str | None = None
    before: str | None = None
    period: str | None = None


class TimeDepart(_Timing, tag="TIME_DEPART"):
    pass


class TimeReturn(_Timing, tag="TIME_RETURN"):
    pass


class TransportCost(RubricParams, tag="COST_TRANSPORT"):
    """Upper bound on the one-way cost per person (every leg), the round trip per person
    (outbound + return) or the total of all legs for the whole party."""

    max: float
    level: Literal["one_way", "round_trip", "total"] = "one_way"


class Airline(RubricParams, tag="AIRLINE"):
    """No flight of the `excluded` airlines."""

    excluded: list[str]


def _window(e: _Timing) -> tuple[int, int]:
    key = period_key(e.period or "")
    after, before = PERIODS[key] if key else (e.after, e.before)
    return hhmm(after or "00:00") or 0, hhmm(before or "24:00") or 24 * 60


def _timing_accepts(e: _Timing, row: Row, ctx: Ctx) -> bool:
    times = span(f"{row['dep_time']}-{row['arr_time']}")
    if times is None:
        return False
    low, high = _window(e)
    value = times[0] if e.target == "depart" else times[1]
    return low <= value <= high


def _is_leg(row: Row, ctx: Ctx, which: str) -> bool:
    trip = ctx.trip
    if trip is None:
        return True
    origin = city_ids(ctx.world, [trip.origin]).get(trip.origin)
    return row["from_city" if which == "outbound" else "to_city"] == origin


def _timing_check(which: str):
    def check(e: _Timing, plan: TripPlan, ctx: Ctx) -> bool:
        rows = [r for r in selected("transport", plan, e, ctx) if _is_leg(r, ctx, which)]
        return bool(rows) and all(_timing_accepts(e, r, ctx) for r in rows)
    return check


def _cheapest(ctx: Ctx, e: RubricParams, which: str) -> list[float]:
    """The cheapest seat price of each of the task's legs (`which`), in route order."""
    out = []
    for start, end, date in legs(ctx, which):
        prices = [r["price"] for r in candidates("seat", e, ctx, which)
                  if r["from_city"] == start and r["to_city"] == end
                  and (date is None or r["date"] == date)]
        out.append(min(prices) if prices else float("inf"))
    return out


def _cost_accepts(e: TransportCost, row: Row, ctx: Ctx) -> bool:
    """Item level: the seat fits when the other legs take their cheapest seats."""
    if e.level == "one_way":
        return row["price"] <= e.max
    which = "all" if e.level == "total" else "round_trip"
    route = legs(ctx, "all")
    chosen = [(a, b) for a, b, _ in route]
    if which == "round_trip":
        route, chosen = route[:1] + route[-1:], chosen[:1] + chosen[-1:]
    key = (row["from_city"], row["to_city"])
    if key not in chosen:
        return False
    cheapest = _cheapest(ctx, e, "all")
    cheapest = cheapest[:1] + cheapest[-1:] if which == "round_trip" else cheapest
    rest = sum(cheapest) - cheapest[chosen.index(key)]
    people = ctx.trip.number_of_people if ctx.trip and e.level == "total" else 1
    return (row["price"] + rest) * people <= e.max


def _cost_check(e: TransportCost, plan: TripPlan, ctx: Ctx) -> bool:
    people = max(1, plan.number_of_people)
    per_leg: list[float] = []
    for day in plan.daily_schedule:
        for act in day.activities:
            if act.type != INTERCITY:
                continue
            total = 0.0
            for prod in act.products or []:
                row = ctx.world.flight_seat(prod.id) or ctx.world.train_seat(prod.id)
                total += (row["price"] if row else 0.0) * prod.quantity
            per_leg.append(total)
    if not per_leg:
        return False
    if e.level == "one_way":
        return all(total / people <= e.max for total in per_leg)
    if e.level == "round_trip":
        ends = per_leg[:1] + per_leg[-1:] if len(per_leg) > 1 else per_leg
        return sum(ends) / people <= e.max
    return sum(per_leg) <= e.max


class Platform(RubricParams, tag="PLATFORM"):
    """Every booked seat is bought on one of `platforms` (with `exclude`: on none of them)."""

    platforms: list[str]
    exclude: bool = False


class OnTime(RubricParams, tag="ONTIME"):
    """Every leg is punctual: a flight's on-time rate (%) at least `min_rate` and its average
    delay at most `max_delay` minutes (either may be left out); trains run on time (F.1: "by
    default, trains are assumed to have no delays")."""

    min_rate: float | None = None
    max_delay: float | None = None


def _platform_accepts(e: Platform, row: Row, ctx: Ctx) -> bool:
    hit = (row.get("platform") or "").strip().lower() in {p.strip().lower() for p in e.platforms}
    return not hit if e.exclude else hit


def _ontime_accepts(e: OnTime, row: Row, ctx: Ctx) -> bool:
    if row["mode"] != "flight":
        return True
    rate, delay = row.get("on_time_rate"), row.get("avg_delay_min")
    return ((e.min_rate is None or (rate is not None and rate >= e.min_rate))
            and (e.max_delay is None or (delay is not None and delay <= e.max_delay)))


def _airline_accepts(e: Airline, row: Row, ctx: Ctx) -> bool:
    if row["mode"] != "flight":
        return True
    return (row.get("airline") or "").strip().lower() not in {a.lower() for a in e.excluded}


DEFS = [
    RubricDef("TIME_DEPART", "transportation", TimeDepart, "transport", _timing_accepts,
              "custom", legs="outbound", check=_timing_check("outbound")),
    RubricDef("TIME_RETURN", "transportation", TimeReturn, "transport", _timing_accepts,
              "custom", legs="return", check=_timing_check("return")),
    RubricDef("COST_TRANSPORT", "transportation", TransportCost, "seat", _cost_accepts,
              "custom", check=_cost_check),
    RubricDef("PLATFORM", "transportation", Platform, "seat", _platform_accepts),
    RubricDef("ONTIME", "transportation", OnTime, "transport", _ontime_accepts),
    RubricDef("AIRLINE", "transportation", Airline, "transport", _airline_accepts),
]
PARAMS = (TimeDepart, TimeReturn, TransportCost, Platform, OnTime, Airline)
