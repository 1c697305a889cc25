"""A trip's meta-information (where from, where to, when, how many): part of a task
(`data.TripTask.trips`) and what the rule evaluation's `Trip` extends (`evaluation/common.py`).
Its own module, below both, so that the loader can check rubrics with the evaluation's table
without an import cycle."""

from __future__ import annotations

import msgspec


class TripStay(msgspec.Struct, omit_defaults=True):
    city: str
    nights: int | None = None


class TripMeta(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One itinerary's meta-information (the evaluation's `Trip`)."""

    origin: str
    stays: list[TripStay]
    start_date: str
    end_date: str
    number_of_people: int
