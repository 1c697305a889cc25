"""Transport constraints of the synthesiser (custom.py registers them): departure and arrival
times, transport budgets at their three levels, booking platforms, punctuality, airlines."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

import msgspec

from ..evaluation import rubrics_transport as T
from ..evaluation.rubric_base import Ctx
from ..periods import PERIODS
from .bands import ceil_to, floor_to

Params = Any
Scope = Any


# --- transport -----------------------------------------------------------------------------

SENSIBLE_DEPARTURE = "06:30"
"""Departure windows are drawn around services leaving at this time or later."""


def _mins(hhmm: str) -> int:
    h, m = hhmm.split(":")
    return int(h) * 60 + int(m)


def _hhmm(mins: int) -> str:
    return f"{mins // 60:02d}:{mins % 60:02d}"


def _times(scope: Scope, which: str, target: str) -> list[int]:
    """Departure (or arrival, same day only) minutes of the leg's services."""
    out = []
    for r in scope.rows("transport", which):
        if target == "depart":
            if r["dep_time"] >= SENSIBLE_DEPARTURE:
                out.append(_mins(r["dep_time"]))
        elif r["arr_time"] > r["dep_time"]:
            out.append(_mins(r["arr_time"]))
    return sorted(out)


def timing_first(cls: type, which: str) -> Callable[[random.Random, Scope], Params | None]:
    def first(rng: random.Random, scope: Scope) -> Params | None:
        target = "depart" if rng.random() < 0.7 else "arrive"
        times = _times(scope, which, target)
        if not times:
            return None
        shape = rng.choice(("period", "period", "after", "before"))
        if shape == "period":
            periods = [p for p, (a, b) in PERIODS.items() if p != "early_morning"
                       and any(_mins(a) <= t <= _mins(b) for t in times)]
            return cls(target=target, period=rng.choice(sorted(periods))) if periods else None
        t = times[int(rng.uniform(0.2, 0.6) * len(times))] if shape == "after" else \
            times[int(rng.uniform(0.4, 0.9) * len(times))]
        if shape == "after":
            return cls(target=target, after=_hhmm(t // 30 * 30))
        return cls(target=target, before=_hhmm(min(24 * 60, -(-t // 30) * 30)))
    return first


def timing_tighten(which: str) -> Callable[[random.Random, Scope, Params], Params | None]:
    def tighten(rng: random.Random, scope: Scope, e: Params) -> Params | None:
        low, high = T._window(e)
        times = [t for t in _times(scope, which, e.target) if low <= t <= high]
        if not times:
            return None
        t = rng.choice(times)
        after, before = max(low, t - 90), min(high, t + 90)
        if before - after >= high - low:
            return None
        return type(e)(target=e.target, after=_hhmm(after), before=_hhmm(before), city=e.city)
    return tighten


def timing_impossible(which: str) -> Callable[[Scope, Params], Params | None]:
    def impossible(scope: Scope, e: Params) -> Params | None:
        key = "dep_time" if e.target == "depart" else "arr_time"
        taken = [_mins(r[key]) for r in scope.rows("transport", which)]
        for start in range(6 * 60, 24 * 60 - 60, 30):
            if not any(start <= t <= start + 60 for t in taken):
                return type(e)(target=e.target, after=_hhmm(start), before=_hhmm(start + 60),
                               city=e.city)
        return None
    return impossible


def _leg_cheapest(scope: Scope) -> list[float]:
    return T._cheapest(Ctx(scope.world, scope.trip), T.TransportCost(max=0), "all")


def _tcost_least(scope: Scope, level: str) -> float:
    """The least the level's sum can be: the cheapest seat of every leg it counts."""
    cheapest = _leg_cheapest(scope)
    if level == "one_way":
        return max(cheapest)
    if level == "round_trip":
        return sum(cheapest[:1] + cheapest[-1:]) if len(cheapest) > 1 else cheapest[0]
    return sum(cheapest) * scope.trip.number_of_people


def tcost_first(rng: random.Random, scope: Scope) -> Params | None:
    cheapest = _leg_cheapest(scope)
    if not cheapest or math.isinf(max(cheapest)):
        return None
    level = rng.choice(("one_way", "one_way", "round_trip", "total"))
    least = _tcost_least(scope, level)
    return T.TransportCost(max=ceil_to(least * rng.uniform(1.3, 2.0), 50.0), level=level)


def tcost_tighten(rng: random.Random, scope: Scope, e: Params) -> Params | None:
    v = ceil_to(_tcost_least(scope, e.level) * 1.05, 10.0)
    return msgspec.structs.replace(e, max=v) if v < e.max else None


def tcost_impossible(scope: Scope, e: Params) -> Params | None:
    v = floor_to(_tcost_least(scope, e.level) * 0.8, 10.0)
    return msgspec.structs.replace(e, max=v) if v > 0 else None


def _platforms(scope: Scope) -> list[str]:
    return sorted({r["platform"] for r in scope.rows("seat") if r.get("platform")})


def platform_first(rng: random.Random, scope: Scope) -> Params | None:
    names = _platforms(scope)
    if len(names) < 3:
        return None
    if rng.random() < 0.4:
        return T.Platform(platforms=[rng.choice(names)], exclude=True)
    return T.Platform(platforms=sorted(rng.sample(names, len(names) - 1)))


def platform_tighten(rng: random.Random, scope: Scope, e: Params) -> Params | None:
    if e.exclude:
        rest = [p for p in _platforms(scope) if p not in e.platforms]
        return (T.Platform(platforms=sorted([*e.platforms, rng.choice(rest)]), exclude=True)
                if len(rest) > 1 else None)
    return (T.Platform(platforms=sorted(rng.sample(e.platforms, len(e.platforms) - 1)))
            if len(e.platforms) > 1 else None)


def platform_impossible(scope: Scope, e: Params) -> Params | None:
    if e.exclude:
        return T.Platform(platforms=_platforms(scope), exclude=True)
    return None


def _flights(scope: Scope) -> list[dict[str, Any]]:
    return [r for r in scope.rows("transport") if r["mode"] == "flight"]


def ontime_first(rng: random.Random, scope: Scope) -> Params | None:
    rows = _flights(scope)
    if len(rows) < 3:
        return None
    rates = sorted(r["on_time_rate"] for r in rows)
    delays = sorted(r["avg_delay_min"] for r in rows)
    rate = floor_to(rates[int(rng.uniform(0.1, 0.5) * len(rates))], 5.0)
    delay = ceil_to(delays[int(rng.uniform(0.5, 0.9) * len(delays))], 5.0)
    shape = rng.choice(("rate", "rate", "delay", "both"))
    return T.OnTime(min_rate=None if shape == "delay" else rate,
                    max_delay=None if shape == "rate" else delay)


def ontime_tighten(rng: random.Random, scope: Scope, e: Params) -> Params | None:
    if e.min_rate is not None and e.min_rate + 5 <= 95:
        return msgspec.structs.replace(e, min_rate=e.min_rate + 5)
    if e.max_delay is not None and e.max_delay > 10:
        return msgspec.structs.replace(e, max_delay=e.max_delay - 5)
    return None


def _airlines(scope: Scope) -> list[str]:
    return sorted({r["airline"] for r in scope.rows("transport") if r.get("airline")})


def airline_first(rng: random.Random, scope: Scope) -> Params | None:
    names = _airlines(scope)
    return T.Airline(excluded=[rng.choice(names)]) if len(names) > 1 else None


def airline_tighten(rng: random.Random, scope: Scope, e: Params) -> Params | None:
    pool = [a for a in _airlines(scope) if a not in e.excluded]
    return T.Airline(excluded=[*e.excluded, rng.choice(pool)]) if len(pool) > 1 else None
