"""What the attraction, hotel and restaurant tools share: tiers, cancellation policies, sort
keys, stay nights and how a row is shown."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from .search import closed_on, descending
from .toolspec import ToolError
from .world import names

HOTEL_TYPES = tuple(names.HOTEL_TYPES.values())
STAR_OF_TYPE = {v: k for k, v in names.HOTEL_TYPES.items()}
TIER_WORDS = (*HOTEL_TYPES, *names.HOTEL_TYPE_ALIASES)
MAX_NIGHTS = 30


def like(value: str) -> str:
    """A LIKE pattern matching `value` literally anywhere (with ESCAPE '\\')."""
    text = value.strip().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{text}%"


def like_any(column: str, values: list[str]) -> tuple[str, list[str]]:
    return (f"({' OR '.join(f'{column} LIKE ? ESCAPE {ESC}' for _ in values)})",
            [like(v) for v in values])


ESC = "'\\'"


def order_of(args: dict[str, Any], columns: dict[str, tuple[str, bool]]) -> tuple[str, bool]:
    column, desc = columns[args["sort_key"]]
    return column, descending(args, desc)


def not_found(kind: str, id_: str) -> ToolError:
    return ToolError("not_found", f"no {kind} with id {id_!r}")


RATINGS = ("product_rating", "environment_rating", "service_rating")
CANCEL_POLICIES = tuple(names.CANCEL_POLICIES)
POLICY_WORDS = ", ".join(f"{k} ({w})" for k, (w, _) in names.CANCEL_POLICIES.items())


def as_flexible(code: str) -> list[str]:
    """The cancellation policies at least as flexible as `code`."""
    return CANCEL_POLICIES[: CANCEL_POLICIES.index(code) + 1]


ATTRACTION_SORT = {"heat": ("heat_score", True), "rating": ("comment_score", True),
                   "comment_count": ("comment_count", True), "sight_level": ("sight_level", True),
                   "price": ("min_price", False), "distance": ("distance_km", False)}


def attraction_out(row: dict[str, Any]) -> dict[str, Any]:
    row["closed_on"] = closed_on(row.pop("closed_weekdays"))
    if "min_price" in row:
        row["free"] = not row["min_price"]
    return row


HOTEL_SORT = {"price": ("min_price", False), "distance": ("distance_km", False),
              "rating": ("score", True), "star": ("star", True)}


def nights_of(a: dict[str, Any]) -> int:
    nights = (dt.date.fromisoformat(a["check_out_date"])
              - dt.date.fromisoformat(a["check_in_date"])).days
    if not 1 <= nights <= MAX_NIGHTS:
        raise ToolError("out_of_range", f"check_out_date must be 1 to {MAX_NIGHTS} days after "
                        f"check_in_date ({a['check_in_date']} -> {a['check_out_date']})")
    return nights


def hotel_out(row: dict[str, Any]) -> dict[str, Any]:
    row["hotel_type"] = names.HOTEL_TYPES[row["star"]]
    row["facilities"] = json.loads(row["facilities"])
    return row


RESTAURANT_SORT = {"rating": ("score", True), "price": ("avg_price", False),
                   "distance": ("distance_km", False)}


def restaurant_out(row: dict[str, Any]) -> dict[str, Any]:
    for flag in ("reservable", "must_reserve"):
        if flag in row:
            row[flag] = bool(row[flag])
    return row
