"""What evaluation reads from a task: the trip's meta-information (`Trip`) and the user
constraints active at the turn being judged, as tagged rubric parameters (rubrics.py)."""

from __future__ import annotations

import msgspec

from .common import Stay, Trip
from .rubrics import RubricSpec

__all__ = ["EvalTask", "Stay", "Trip"]


class EvalTask(Trip, kw_only=True, omit_defaults=True):
    """`Trip` plus an id and the active constraints, e.g. decoded from a task file:
    `{"task_id": "t1", "origin": "Beijing", "stays": [{"city": "Shanghai", "nights": 2}],
    "start_date": ..., "end_date": ..., "number_of_people": 2,
    "rubrics": [{"type": "STAR", "bound": {"min": 4}}]}`."""

    task_id: str = ""
    rubrics: list[RubricSpec] = msgspec.field(default_factory=list)  # type: ignore[valid-type]
