"""Numeric user constraints (paper B.2: "thresholds (less/more), approximate targets (around),
or bounded ranges", bands required or excluded): a first version drawn from the values the
trip's scope holds, a tighter one (the next step of a modification chain), an impossible
one (FIT), in one of the shapes a rubric type allows:

    min      at least v              {min: v}
    max      at most v               {max: v}
    range    between lo and hi       {min: lo, max: hi}
    exact    exactly v               {min: v, max: v}
    around   about v (within tol)    {around: v, tolerance: tol}
    exclude  not in the low (or high) band: {max: v, exclude} / {min: v, exclude}
    free     0 (only free attractions)

Values are read through `Band.values(scope, e)`: a column of the scope's rows, or a
function of a row (a hotel's cost at a level, per person and night for the trip's party).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec

from ..evaluation.rubric_base import Bound, Ctx, RubricParams

SHAPES = ("min", "max", "range", "exact", "around", "exclude", "free")


def floor_to(v: float, step: float) -> float:
    return round(math.floor(v / step + 1e-9) * step, 4)


def ceil_to(v: float, step: float) -> float:
    return round(math.ceil(v / step - 1e-9) * step, 4)


def shape_of(bound: Bound, exclude: bool = False) -> str:
    """The shape of a drawn bound (see the module doc)."""
    if exclude:
        return "exclude"
    if bound.around is not None:
        return "around"
    if bound.min is not None and bound.max is not None:
        return "exact" if bound.min == bound.max else "range"
    if bound.max == 0:
        return "free"
    return "min" if bound.min is not None else "max"


@dataclass(frozen=True)
class Band:
    """One numeric rubric type: its item kind, the value of a row, the rounding step, the
    value's natural limits, the shapes it is drawn in, and which side is "better" (`good`:
    "high" when more is better, e.g. ratings; "low" for prices)."""

    kind: str
    value: Callable[[dict[str, Any], Any], float | None]
    step: float
    shapes: tuple[str, ...]
    good: str = "high"
    floor: float = 0.0
    cap: float | None = None
    make: Callable[[Bound, bool, Any], RubricParams] | None = None

    def values(self, scope: Any, e: Any = None) -> list[float]:
        ctx = Ctx(scope.world, scope.trip)
        out = []
        for r in scope.rows(self.kind):
            v = self.value(r, (e, ctx))
            if v is not None:
                out.append(float(v))
        return sorted(out)

    def build(self, bound: Bound, exclude: bool, like: Any) -> RubricParams:
        assert self.make is not None
        return self.make(bound, exclude, like)

    # -- the three versions -----------------------------------------------------------------
    def first(self, rng: random.Random, scope: Any, like: Any) -> RubricParams | None:
        vals = self.values(scope, like)
        if len(vals) < 3:
            return None
        shape = rng.choice(self.shapes)
        n, step = len(vals), self.step

        def q(lo: float, hi: float) -> float:
            return vals[min(n - 1, int(rng.uniform(lo, hi) * n))]

        if shape == "min":
            v = floor_to(q(0.1, 0.45), step)
            return self.build(Bound(min=v), False, like) if v > vals[0] else None
        if shape == "max":
            v = ceil_to(q(0.55, 0.9), step)
            return self.build(Bound(max=v), False, like) if v < vals[-1] else None
        if shape == "range":
            lo, hi = floor_to(q(0.05, 0.3), step), ceil_to(q(0.7, 0.95), step)
            if lo >= hi or (lo <= vals[0] and hi >= vals[-1]):
                return None
            return self.build(Bound(min=lo, max=hi), False, like)
        if shape == "exact":
            v = q(0.3, 1.0)
            return self.build(Bound(min=v, max=v), False, like)
        if shape == "around":
            v = max(step, round(q(0.3, 0.7) / step) * step)
            tol = rng.choice((0.15, 0.2, 0.25))
            inside = sum(1 for x in vals if abs(x - v) <= tol * v)
            return self.build(Bound(around=v, tolerance=tol), False, like) if inside >= 3 \
                else None
        if shape == "exclude":
            if self.good == "high":      # leave out the bottom band
                v = ceil_to(q(0.1, 0.3), step)
                return self.build(Bound(max=v), True, like) if vals[0] <= v < vals[-1] \
                    else None
            v = floor_to(q(0.7, 0.9), step)
            return self.build(Bound(min=v), True, like) if vals[0] < v <= vals[-1] else None
        if shape == "free":
            free = sum(1 for x in vals if x == 0)
            return self.build(Bound(max=0), False, like) if free >= 3 else None
        raise ValueError(f"unknown shape {shape!r}")

    def tighten(self, rng: random.Random, scope: Any, e: Any) -> RubricParams | None:
        """Fewer items pass: a higher minimum, a lower maximum, a wider excluded band, a
        narrower range, a smaller tolerance."""
        vals, step = self.values(scope, e), self.step
        b: Bound = e.bound
        exclude = bool(getattr(e, "exclude", False))
        shape = shape_of(b, exclude)
        if shape == "min" or (shape == "exclude" and b.max is not None):
            key = b.min if shape == "min" else b.max
            higher = [v for v in vals if floor_to(v, step) > key]
            if len(higher) < 3:
                return None
            v = (floor_to if shape == "min" else ceil_to)(higher[len(higher) // 3], step)
            return self.build(Bound(min=v) if shape == "min" else Bound(max=v), exclude, e)
        if shape == "max" or shape == "exclude":
            key = b.max if shape == "max" else b.min
            lower = [v for v in vals if ceil_to(v, step) < key]
            if len(lower) < 3:
                return None
            v = (ceil_to if shape == "max" else floor_to)(lower[-(len(lower) // 3) - 1], step)
            return self.build(Bound(max=v) if shape == "max" else Bound(min=v), exclude, e)
        if shape == "range":
            inside = [v for v in vals if b.min <= v <= b.max]
            if len(inside) < 4:
                return None
            lo = floor_to(inside[len(inside) // 5], step)
            hi = ceil_to(inside[-(len(inside) // 5) - 1], step)
            if (lo, hi) == (b.min, b.max) or lo >= hi:
                return None
            return self.build(Bound(min=lo, max=hi), False, e)
        if shape == "around" and b.tolerance > 0.06:
            return self.build(Bound(around=b.around, tolerance=round(b.tolerance / 2, 3)),
                              False, e)
        return None

    def impossible(self, scope: Any, e: Any) -> RubricParams | None:
        vals, step = self.values(scope, e), self.step
        if not vals:
            return None
        above = floor_to(vals[-1], step) + step
        below = ceil_to(vals[0], step) - step
        shape = shape_of(e.bound, bool(getattr(e, "exclude", False)))
        if shape in ("min", "range", "exact", "around") and (self.cap is None
                                                            or above <= self.cap):
            bound = {"min": Bound(min=above), "range": Bound(min=above, max=above + 2 * step),
                     "exact": Bound(min=above, max=above),
                     "around": Bound(around=above * 1.5 + step, tolerance=0.1)}[shape]
            return self.build(bound, False, e)
        if shape in ("max", "free") and below > self.floor:
            return self.build(Bound(max=below), False, e)
        if shape == "exclude":          # nothing left outside the band
            bound = Bound(max=ceil_to(vals[-1], step)) if e.bound.max is not None \
                else Bound(min=floor_to(vals[0], step))
            return self.build(bound, True, e)
        return None


def column(name: str) -> Callable[[dict[str, Any], Any], float | None]:
    def value(row: dict[str, Any], _: Any) -> float | None:
        v = row.get(name)
        return None if v is None else float(v)
    return value


def banded(cls: type) -> Callable[[Bound, bool, Any], RubricParams]:
    """`make` of a `_Banded` rubric: its bound, exclude flag and the `like` version's city."""
    def make(bound: Bound, exclude: bool, like: Any) -> RubricParams:
        return cls(bound=bound, exclude=exclude, city=getattr(like, "city", None))
    return make


def with_bound(cls: type) -> Callable[[Bound, bool, Any], RubricParams]:
    """`make` of a rubric whose other fields (a level, a city) come from `like`."""
    def make(bound: Bound, exclude: bool, like: Any) -> RubricParams:
        if isinstance(like, cls):
            return msgspec.structs.replace(like, bound=bound)
        return cls(bound=bound)
    return make
