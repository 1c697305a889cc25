"""The named times of day of TRIP-Bench, one table for the tools (`dep_period`/`arr_period`
of the flight and train searches), the rubrics (TIME_DEPART / TIME_RETURN `period`) and the
user simulator's wording, so "night" means the same hours wherever it is written.

Windows are inclusive at both ends, "24:00" closing the day; they overlap where language
does (noon lies inside morning and afternoon, night inside evening).
"""

from __future__ import annotations

PERIODS: dict[str, tuple[str, str]] = {
    "early_morning": ("00:00", "06:00"),
    "morning": ("06:00", "12:00"),
    "noon": ("11:00", "14:00"),
    "afternoon": ("12:00", "18:00"),
    "evening": ("18:00", "24:00"),
    "night": ("20:00", "24:00"),
}
"""name -> (start, end), "HH:MM", inclusive."""

_PHRASES = {"early_morning": "in the early morning", "morning": "in the morning",
            "noon": "around noon", "afternoon": "in the afternoon",
            "evening": "in the evening", "night": "at night"}


def period_key(name: str) -> str | None:
    """The table's key of a period as people write it ("Early morning", "early-morning",
    "NIGHT"), or None when it is not one."""
    key = "_".join(name.strip().lower().replace("-", " ").split())
    return key if key in PERIODS else None


def window(name: str) -> tuple[str, str] | None:
    key = period_key(name)
    return PERIODS[key] if key else None


def phrase(name: str) -> str:
    """How a user says the period, with its hours: "at night (20:00-24:00)"."""
    key = period_key(name) or name
    start, end = PERIODS.get(key, ("", ""))
    words = _PHRASES.get(key, f"in the {key.replace('_', ' ')}")
    return f"{words} ({start}-{end})" if start else words


def describe() -> str:
    """The table in words, for tool descriptions: "morning 06:00-12:00, ..."."""
    return ", ".join(f"{k.replace('_', ' ')} {a}-{b}" for k, (a, b) in PERIODS.items())
