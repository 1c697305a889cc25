"""What every tool module shares: how a tool says no, time formats, ids, the user check.

A tool function takes the episode state first and the call's arguments as keywords. It
returns its answer (a string, a number or a list, encoded by the environment as the
reference encodes it) and says no in one of the reference's two ways:

- `check(condition, message)` raises `Refusal`: the reference's failed `assert`, whose
  message comes back as an ordinary answer (not an error);
- returning `Declined(text)`: a refusal the reference returns as plain text (paying twice,
  cancelling twice, someone else's booking).

Any other exception (an unknown id, a wrong argument type meeting an operation) becomes the
reference's error answer, "Error: <message>".
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from . import fuzzy
from .state import EpisodeState

TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
DATE_FORMAT = "%Y-%m-%d"


class Refusal(Exception):
    """A precondition failed; the message is the tool's (non-error) answer."""


class Declined(str):
    """A refusal answered as plain text."""

    __slots__ = ()


def check(condition: Any, message: str) -> None:
    if not condition:
        raise Refusal(message)


def has_format(text: Any, fmt: str = TIME_FORMAT) -> bool:
    """strptime succeeds (a non-string argument raises, as in the reference)."""
    try:
        datetime.strptime(text, fmt)
    except ValueError:
        return False
    return True


def parse_time(text: str) -> datetime:
    return datetime.strptime(text, TIME_FORMAT)


def user_matches(st: EpisodeState, user_id: Any) -> bool:
    return user_id == st.base.user_id


def check_user(st: EpisodeState, user_id: Any) -> None:
    check(user_id, "User ID cannot be empty")
    check(user_matches(st, user_id), "User ID does not match")


def fuzzy_match(query: str, text: str) -> bool:
    """thefuzz `partial_ratio` on the raw strings (no processing), rounded, >= 40."""
    return fuzzy.round_score(fuzzy.partial_ratio(query, text)) >= 40


def join_keywords(keywords: Any) -> str:
    """The reference joins the keyword list with no separator."""
    return "".join(keywords)


def as_int(value: Any, what: str) -> Any:
    """An integer field of a new record: a whole float is accepted, as validation does."""
    if isinstance(value, int):  # bool included
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise ValueError(f"{what} should be a valid integer, got {value!r}")
