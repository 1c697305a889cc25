"""The user-constraint rubric table (paper 3.2, B.2): rubric type name -> `RubricDef`, each a
generator G(e, world) -> `RubricRange` (selection range and feasible ids) and validators
V(e, i) (`RubricDef.item`) and V(e, plan) (`RubricDef.validate`).

A task file stores each constraint as its parameter struct, tagged by `type`:
`{"type": "HEAT_SCORE", "bound": {"min": 7}, "city": "Shanghai"}`; `RubricSpec` is the
union msgspec decodes them with. B.2.5 ("general rubrics") repeats the transportation list
verbatim, so those six are registered once, under the transportation family.
"""

from __future__ import annotations

from typing import Union

import msgspec

from . import rubrics_poi, rubrics_transport
from .common import Trip, WorldView
from .plan import TripPlan
from .rubric_base import Bound, RubricDef, RubricParams, RubricRange

__all__ = [
    "RUBRICS",
    "UNSUPPORTED",
    "Bound",
    "RubricDef",
    "RubricParams",
    "RubricRange",
    "RubricSpec",
    "decode_spec",
    "generate",
    "validate",
]

RUBRICS: dict[str, RubricDef] = {d.name: d for d in (*rubrics_poi.DEFS, *rubrics_transport.DEFS)}

RubricSpec = Union[(*rubrics_poi.PARAMS, *rubrics_transport.PARAMS)]  # type: ignore[valid-type]

# B.2 rubric types whose data the world schema (/work/tripbench_schema.md) does not carry.
UNSUPPORTED: dict[str, str] = {
    "REVIEW_COUNT_HOTEL": "hotels have no review count",
    "GOOD_RATE": "hotels have no positive-review rate",
    "ASPECT_RATING": "hotels have no product/environment/service ratings",
    "CANCEL_POLICY": "rooms have no cancellation policy",
    "BREAKFAST_NUMBER": "rooms have no breakfast count",
    "HAS_WINDOW": "rooms have no window flag",
    "REVIEW_COUNT": "restaurants have no review count",
    "OPEN": "restaurants have no reservability",
    "SUBRATING_FOOD": "restaurants have no sub-ratings",
    "SUBRATING_ENVIRONMENT": "restaurants have no sub-ratings",
    "SUBRATING_SERVICE": "restaurants have no sub-ratings",
    "PLATFORM": "seat products have no booking platform",
    "ONTIME": "flights and trains have no punctuality statistics",
}


def _tag(e: RubricParams) -> str:
    return type(e).__struct_config__.tag  # type: ignore[return-value]


def definition(e: RubricParams) -> RubricDef:
    return RUBRICS[_tag(e)]


def generate(e: RubricParams, world: WorldView, trip: Trip | None = None) -> RubricRange:
    """G(e): the selection range and the feasible ids of rubric `e` in the task's scope."""
    return definition(e).generate(e, world, trip)


def validate(e: RubricParams, plan: TripPlan, world: WorldView, trip: Trip | None = None) -> bool:
    """V(e, plan): whether `plan` satisfies the constraint `e`."""
    return definition(e).validate(e, plan, world, trip)


def decode_spec(raw: bytes | str | dict) -> RubricParams:
    """One rubric from JSON text or a decoded dict (its `type` picks the struct)."""
    if isinstance(raw, dict):
        return msgspec.convert(raw, RubricSpec)
    return msgspec.json.decode(raw, type=RubricSpec)
