"""The itinerary JSON of TRIP-Bench (paper, appendix F.1, section VI) and its tolerant reader.

The agent's final answer carries one JSON object whose top-level key is `trip_plan`:

    {"trip_plan": {"start_date": "YYYY-MM-DD", "end_date": "YYYY-MM-DD",
                   "number_of_people": 4,
                   "daily_schedule": [{"date": ..., "cities": "Tokyo -> Osaka",
                                       "hotel": {"id": "H...", "products": [{"id": "HR...", "room_num": 1}]},
                                       "activities": [{"time": "08:30-10:30", "type": "Flight Check-in",
                                                       "description": "...", "id": ..., "products": [...]}]}]}}

`parse_plan(text)` finds that object in free text (a ```json fence, any fence, or the first
brace-balanced object mentioning `daily_schedule`; braces inside JSON strings are skipped),
tolerates trailing commas and a missing `trip_plan` wrapper, and decodes it with msgspec in
lax mode ("4" is read as 4). What it cannot decode is a parse failure with a message that
names the JSON path; such a plan fails every check (scoring.py). What it tolerated (wrapper,
unknown field names, malformed times, ids or products where the format forbids them) is listed
in `ParsedPlan.issues` and reported by the structural-validity check (feasibility.py).
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

from evaluator.judges.parse import balanced_spans

FLIGHT_CHECK_IN = "Flight Check-in"
INTERCITY = "Intercity Transportation"
LOCAL = "Local Transportation"
HOTEL_CHECK_IN = "Hotel Check-in"
ATTRACTION = "Attraction"
RESTAURANT = "Restaurant"
ACTIVITY_TYPES = (FLIGHT_CHECK_IN, INTERCITY, LOCAL, HOTEL_CHECK_IN, ATTRACTION, RESTAURANT)
# Types that must carry `id` and `products`; the others must carry neither (F.1 VI.2).
WITH_ID = (INTERCITY, ATTRACTION, RESTAURANT)


class Product(msgspec.Struct, omit_defaults=True):
    """A bought product of an activity: a ticket, a set menu or a seat."""

    id: str
    quantity: int = 0


class RoomProduct(msgspec.Struct, omit_defaults=True):
    id: str
    room_num: int = 0


class HotelStay(msgspec.Struct, omit_defaults=True):
    id: str
    products: list[RoomProduct] = msgspec.field(default_factory=list)


class Activity(msgspec.Struct, omit_defaults=True):
    time: str
    type: str
    description: str = ""
    id: str | None = None
    products: list[Product] | None = None


class DayPlan(msgspec.Struct, omit_defaults=True):
    date: str
    cities: str = ""
    hotel: HotelStay | None = None
    activities: list[Activity] = msgspec.field(default_factory=list)


class TripPlan(msgspec.Struct, omit_defaults=True):
    start_date: str
    end_date: str
    number_of_people: int
    daily_schedule: list[DayPlan] = msgspec.field(default_factory=list)


class ParsedPlan(msgspec.Struct):
    """The reader's result: `plan` None means the answer holds no decodable plan."""

    plan: TripPlan | None
    error: str | None = None
    issues: list[str] = msgspec.field(default_factory=list)


_FIELDS = {
    "trip_plan": {"start_date", "end_date", "number_of_people", "daily_schedule"},
    "day": {"date", "cities", "hotel", "activities"},
    "hotel": {"id", "products"},
    "room": {"id", "room_num"},
    "activity": {"time", "type", "description", "id", "products"},
    "product": {"id", "quantity"},
}
_FENCE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
SPAN_RE = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)\s*-\s*([01]\d|2[0-4]):([0-5]\d)$")


def _loads(candidate: str) -> Any:
    for attempt in (candidate, _TRAILING_COMMA.sub(r"\1", candidate)):
        try:
            return json.loads(attempt)
        except ValueError:
            continue
    return None


def _candidates(text: str) -> list[str]:
    """Texts that may hold the plan, best first: fenced blocks, then balanced objects."""
    out: list[str] = []
    for block in _FENCE.findall(text):
        out.append(block.strip())
        out.extend(balanced_spans(block, "{", "}"))
    out.extend(balanced_spans(text, "{", "}"))
    return [c for c in out if "daily_schedule" in c or "trip_plan" in c]


def find_plan_object(text: str) -> tuple[dict[str, Any] | None, list[str]]:
    """The raw plan object (inside `trip_plan`) and the tolerated issues, or (None, [])."""
    for candidate in _candidates(text):
        value = _loads(candidate)
        if not isinstance(value, dict):
            continue
        if isinstance(value.get("trip_plan"), dict):
            extra = sorted(set(value) - {"trip_plan"})
            issues = [f"unexpected top-level field(s) {extra}"] if extra else []
            return value["trip_plan"], issues
        if "daily_schedule" in value:
            return value, ["plan object is not wrapped in a top-level `trip_plan` key"]
    return None, []


def _unknown_fields(raw: dict[str, Any]) -> list[str]:
    """Field names the format does not define (F.1 VI.1: no additions or renaming)."""
    issues: list[str] = []

    def check(obj: Any, kind: str, path: str) -> None:
        if isinstance(obj, dict):
            extra = sorted(set(obj) - _FIELDS[kind])
            if extra:
                issues.append(f"{path}: unknown field(s) {extra}")

    check(raw, "trip_plan", "trip_plan")
    for d, day in enumerate(raw.get("daily_schedule") or []):
        path = f"daily_schedule[{d}]"
        check(day, "day", path)
        if not isinstance(day, dict):
            continue
        hotel = day.get("hotel")
        check(hotel, "hotel", f"{path}.hotel")
        if isinstance(hotel, dict):
            for r, room in enumerate(hotel.get("products") or []):
                check(room, "room", f"{path}.hotel.products[{r}]")
        for a, act in enumerate(day.get("activities") or []):
            check(act, "activity", f"{path}.activities[{a}]")
            if isinstance(act, dict):
                for p, prod in enumerate(act.get("products") or []):
                    check(prod, "product", f"{path}.activities[{a}].products[{p}]")
    return issues


def format_issues(plan: TripPlan) -> list[str]:
    """Formats and per-type fields of a decoded plan (dates, HH:MM-HH:MM, id/products rules)."""
    issues: list[str] = []
    for name in ("start_date", "end_date"):
        if not DATE_RE.match(getattr(plan, name)):
            issues.append(f"{name} {getattr(plan, name)!r} is not YYYY-MM-DD")
    if plan.number_of_people < 1:
        issues.append(f"number_of_people {plan.number_of_people} is not a positive integer")
    dates = [day.date for day in plan.daily_schedule]
    if dates != sorted(dates):
        issues.append("daily_schedule is not sorted by date")
    for day in plan.daily_schedule:
        where = f"day {day.date}"
        if not DATE_RE.match(day.date):
            issues.append(f"{where}: date is not YYYY-MM-DD")
        if day.hotel is not None:
            for room in day.hotel.products:
                if room.room_num < 1:
                    issues.append(f"{where}: room {room.id} has room_num {room.room_num}")
        starts: list[str] = []
        for index, act in enumerate(day.activities):
            label = f"{where} activity {index} ({act.type})"
            if not SPAN_RE.match(act.time.strip()):
                issues.append(f"{label}: time {act.time!r} is not HH:MM-HH:MM")
            else:
                starts.append(act.time.strip()[:5])
            if act.type not in ACTIVITY_TYPES:
                issues.append(f"{label}: unknown activity type")
                continue
            if act.type in WITH_ID:
                if not act.id:
                    issues.append(f"{label}: missing id")
                if act.products is None:
                    issues.append(f"{label}: missing products (use [] when none)")
                for prod in act.products or []:
                    if prod.quantity < 1:
                        issues.append(f"{label}: product {prod.id} has quantity {prod.quantity}")
            else:
                if act.id is not None:
                    issues.append(f"{label}: must not carry an id")
                if act.products is not None:
                    issues.append(f"{label}: must not carry products")
        if starts != sorted(starts):
            issues.append(f"{where}: activities are not sorted by time")
    return issues


def parse_plan(text: str) -> ParsedPlan:
    """Read the agent's final answer; see the module docstring for what is tolerated."""
    if not isinstance(text, str) or not text.strip():
        return ParsedPlan(None, "empty answer")
    raw, issues = find_plan_object(text)
    if raw is None:
        return ParsedPlan(None, "no JSON object with `trip_plan`/`daily_schedule` found")
    try:
        plan = msgspec.convert(raw, TripPlan, strict=False)
    except msgspec.ValidationError as exc:
        return ParsedPlan(None, f"plan does not match the itinerary format: {exc}")
    issues = issues + _unknown_fields(raw) + format_issues(plan)
    return ParsedPlan(plan, None, issues)


def with_previous(parsed: ParsedPlan, previous: TripPlan | None) -> ParsedPlan:
    """F.1 VII: an empty `daily_schedule` means "no change"; evaluate the previous plan's days."""
    plan = parsed.plan
    if plan is None or plan.daily_schedule or previous is None:
        return parsed
    merged = msgspec.structs.replace(plan, daily_schedule=previous.daily_schedule)
    return ParsedPlan(merged, None, parsed.issues)


def as_plan(plan: ParsedPlan | TripPlan) -> TripPlan:
    """The decoded plan of a check's argument (a `ParsedPlan` or a bare `TripPlan`)."""
    inner = plan.plan if isinstance(plan, ParsedPlan) else plan
    if inner is None:
        raise ValueError("the answer holds no plan; scoring fails every check for it")
    return inner
