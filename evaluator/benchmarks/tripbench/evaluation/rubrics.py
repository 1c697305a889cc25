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

from . import rubrics_fields, rubrics_poi, rubrics_transport
from .common import Trip, WorldView
from .plan import TripPlan
from .rubric_base import Bound, RubricDef, RubricParams, RubricRange

__all__ = [
    "RUBRICS",
    "Bound",
    "RubricDef",
    "RubricParams",
    "RubricRange",
    "RubricSpec",
    "decode_spec",
    "generate",
    "validate",
]

RUBRICS: dict[str, RubricDef] = {d.name: d for d in (
    *rubrics_poi.DEFS, *rubrics_fields.DEFS, *rubrics_transport.DEFS)}
"""The paper's 37 rubric types (B.2.1-B.2.4; B.2.5 repeats B.2.4)."""

RubricSpec = Union[(*rubrics_poi.PARAMS, *rubrics_fields.PARAMS,  # type: ignore[valid-type]
                    *rubrics_transport.PARAMS)]

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
