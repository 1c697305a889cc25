"""The eight planning-soundness checks (paper B.4.2), each `check(parsed, world, trip) ->
list[Violation]`, violated when the list is non-empty.

The paper groups them in four headings and counts eight; the split here follows the clauses
of "temporal reasonableness" (five checks: time continuity, activity durations, opening hours,
intercity buffers, local transfers) plus spatial logic, experience diversity and product
consistency. Thresholds are those of the agent's rules (F.1): gaps of at most two hours,
attractions longer than 30 minutes and within 1.5 h of the suggested duration, meals of 45-90
minutes, 30 minutes of tolerance around opening hours, flight check-in of 1.5-2.5 h ending at
departure, 15-30 minutes at the station before a train, local transfers within 20 minutes of
the route estimate, restaurants within 20 km of the adjacent activities.
Values the check cannot read (an unknown id, a malformed time) are skipped: the feasibility
checks report them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from .common import (
    Trip,
    Violation,
    WorldView,
    estimate_minutes,
    haversine_km,
    opening,
    span,
    transport,
    weekday,
)
from .plan import (
    ATTRACTION,
    FLIGHT_CHECK_IN,
    HOTEL_CHECK_IN,
    INTERCITY,
    LOCAL,
    RESTAURANT,
    Activity,
    DayPlan,
    ParsedPlan,
    TripPlan,
    as_plan,
)
from .products import PRODUCTS, product_consistency

CONTINUITY = "time_continuity"
DURATION = "activity_duration"
OPENING = "opening_hours"
BUFFER = "intercity_buffer"
LOCAL_TRANSFER = "local_transfer"
SPATIAL = "spatial_logic"
DIVERSITY = "experience_diversity"

MAX_GAP = 120
DAY_START, DAY_END = 6 * 60, 24 * 60
SAME_PLACE_KM = 0.05
RESTAURANT_MAX_KM = 20.0


PlanArg = ParsedPlan | TripPlan
_plan = as_plan


def _poi(world: WorldView, act: Activity) -> dict[str, Any] | None:
    if not act.id:
        return None
    if act.type == ATTRACTION:
        return world.attraction(act.id)
    if act.type == RESTAURANT:
        return world.restaurant(act.id)
    return None


def _transfer_day(day: DayPlan) -> bool:
    return any(act.type == INTERCITY for act in day.activities) or "->" in day.cities


def time_continuity(parsed: PlanArg, world: WorldView, trip: Trip) -> list[Violation]:
    """No two activities overlap; no idle gap longer than two hours except on transfer days;
    the day's programme (attractions and meals) lies between 06:00 and 24:00 (travel, check-in
    and transfers around a late or early intercity leg may lie outside)."""
    out: list[Violation] = []
    for day in _plan(parsed).daily_schedule:
        previous: tuple[int, int] | None = None
        for act in day.activities:
            times = span(act.time)
            if times is None:
                continue
            if act.type in (ATTRACTION, RESTAURANT) and (
                    times[0] < DAY_START or times[1] > DAY_END):
                out.append(Violation(CONTINUITY, f"{act.type} {act.time} outside 06:00-24:00",
                                     day.date, [act.id] if act.id else []))
            if previous is not None:
                if times[0] < previous[1]:
                    out.append(Violation(CONTINUITY, f"{act.type} {act.time} overlaps the "
                                         "previous activity", day.date))
                elif times[0] - previous[1] > MAX_GAP and not _transfer_day(day):
                    out.append(Violation(CONTINUITY, f"gap of {times[0] - previous[1]} min "
                                         f"before {act.type} {act.time}", day.date))
            previous = times
    return out


def activity_duration(parsed: PlanArg, world: WorldView, trip: Trip) -> list[Violation]:
    """An attraction visit lasts more than 30 minutes and at most 1.5 h more or less than the
    attraction's suggested duration; a meal lasts 45 to 90 minutes."""
    out: list[Violation] = []
    for day in _plan(parsed).daily_schedule:
        for act in day.activities:
            times, row = span(act.time), _poi(world, act)
            if times is None or row is None:
                continue
            minutes = times[1] - times[0]
            if act.type == ATTRACTION:
                suggested = row.get("duration_min")
                if minutes <= 30 or (suggested is not None and abs(minutes - suggested) > 90):
                    out.append(Violation(DURATION, f"visit of {minutes} min (suggested "
                                         f"{suggested})", day.date, [act.id or ""]))
            elif not 45 <= minutes <= 90:
                out.append(Violation(DURATION, f"meal of {minutes} min", day.date,
                                     [act.id or ""]))
    return out


def opening_hours(parsed: PlanArg, world: WorldView, trip: Trip) -> list[Violation]:
    """Attractions and restaurants are visited while open: not on the attraction's closed
    weekdays, starting at most 30 minutes before opening and ending at most 30 after closing."""
    out: list[Violation] = []
    for day in _plan(parsed).daily_schedule:
        for act in day.activities:
            times, row = span(act.time), _poi(world, act)
            if times is None or row is None:
                continue
            closed = [int(d) for d in str(row.get("closed_weekdays") or "").split(",")
                      if d.strip().isdigit()]
            if weekday(day.date) in closed:
                out.append(Violation(OPENING, f"{act.id} is closed on {day.date}", day.date,
                                     [act.id or ""]))
                continue
            hours = opening(row)
            if hours and (times[0] < hours[0] - 30 or times[1] > hours[1] + 30):
                out.append(Violation(OPENING, f"{act.id} at {act.time}, open "
                                     f"{row['open_time']}-{row['close_time']}", day.date,
                                     [act.id or ""]))
    return out


def intercity_buffer(parsed: PlanArg, world: WorldView, trip: Trip) -> list[Violation]:
    """Before a flight, a "Flight Check-in" of 1.5-2.5 h ends exactly at departure; before a
    train there is no check-in activity and the previous activity ends 15-30 minutes before
    departure; a "Flight Check-in" is always followed by a flight."""
    out: list[Violation] = []
    for day in _plan(parsed).daily_schedule:
        acts = day.activities
        for index, act in enumerate(acts):
            prev = acts[index - 1] if index else None
            nxt = acts[index + 1] if index + 1 < len(acts) else None
            if act.type == FLIGHT_CHECK_IN:
                row = transport(world, nxt.id) if nxt and nxt.type == INTERCITY else None
                if row is None or row["mode"] != "flight":
                    out.append(Violation(BUFFER, "Flight Check-in not followed by a flight",
                                         day.date))
                continue
            row = transport(world, act.id) if act.type == INTERCITY else None
            times = span(act.time)
            if row is None or times is None:
                continue
            prev_times = span(prev.time) if prev else None
            if row["mode"] == "flight":
                if prev is None or prev.type != FLIGHT_CHECK_IN or prev_times is None:
                    out.append(Violation(BUFFER, f"no Flight Check-in before {act.id}",
                                         day.date, [act.id or ""]))
                elif prev_times[1] != times[0] or not 90 <= prev_times[1] - prev_times[0] <= 150:
                    out.append(Violation(BUFFER, f"Flight Check-in {prev.time} before {act.id} "
                                         f"at {act.time}", day.date, [act.id or ""]))
            elif prev is not None and prev_times is not None:
                if prev.type == FLIGHT_CHECK_IN:
                    out.append(Violation(BUFFER, f"check-in activity before train {act.id}",
                                         day.date, [act.id or ""]))
                elif not 15 <= times[0] - prev_times[1] <= 30:
                    out.append(Violation(BUFFER, f"{times[0] - prev_times[1]} min at the station "
                                         f"before {act.id}", day.date, [act.id or ""]))
    return out


def _where(world: WorldView, day: DayPlan, index: int) -> tuple[Any, Any] | None:
    """(start, end) coordinates of activity `index` of `day`, or None if it has no place."""
    act = day.activities[index]
    if act.type in (ATTRACTION, RESTAURANT):
        row = _poi(world, act)
        return ((row["lat"], row["lon"]),) * 2 if row else None
    if act.type == HOTEL_CHECK_IN:
        row = world.hotel(day.hotel.id) if day.hotel else None
        return ((row["lat"], row["lon"]),) * 2 if row else None
    if act.type == INTERCITY:
        row = transport(world, act.id)
        return ((row["from_lat"], row["from_lon"]), (row["to_lat"], row["to_lon"])) if row else None
    if act.type == FLIGHT_CHECK_IN and index + 1 < len(day.activities):
        row = transport(world, day.activities[index + 1].id)
        return ((row["from_lat"], row["from_lon"]),) * 2 if row else None
    return None


def _hotel_at(world: WorldView, day: DayPlan | None) -> tuple[Any, Any] | None:
    row = world.hotel(day.hotel.id) if day is not None and day.hotel else None
    return (row["lat"], row["lon"]) if row else None


def _transfer(here: Any, to: Any, moved: bool, minutes: int, label: str,
              date: str) -> Violation | None:
    """The finding, if any, about going from `here` to `to` (`moved`: a Local Transportation
    of `minutes` in total lies between)."""
    km = haversine_km(*here, *to)
    if km <= SAME_PLACE_KM:
        return None
    estimate = estimate_minutes(here, to)
    if not moved:
        return Violation(LOCAL_TRANSFER, f"no Local Transportation to {label} ({km:.1f} km)",
                         date)
    if abs(minutes - estimate) > 20:
        return Violation(LOCAL_TRANSFER, f"{minutes} min of transfer to {label}, estimate "
                         f"{estimate} min for {km:.1f} km", date)
    return None


def local_transfer(parsed: PlanArg, world: WorldView, trip: Trip) -> list[Violation]:
    """Whenever consecutive activities are at different places (the day starts at the previous
    night's hotel), a Local Transportation lies between them, lasting within 20 minutes of the
    route estimate; every day but the return day ends by returning to the hotel (Local
    Transportation) or with the Hotel Check-in."""
    found: list[Violation | None] = []
    days = _plan(parsed).daily_schedule
    for number, day in enumerate(days):
        here = _hotel_at(world, days[number - 1]) if number else None
        moved, minutes = False, 0
        for index, act in enumerate(day.activities):
            if act.type == LOCAL:
                times = span(act.time)
                moved, minutes = True, minutes + (times[1] - times[0] if times else 0)
                continue
            place = _where(world, day, index)
            if place is None:
                continue
            if here is not None:
                label = f"{act.type} {act.id or ''}".strip()
                found.append(_transfer(here, place[0], moved, minutes, label, day.date))
            here, moved, minutes = place[1], False, 0
        if day.hotel is None or day.date == trip.end_date or not day.activities:
            continue
        last = day.activities[-1].type
        if last not in (LOCAL, HOTEL_CHECK_IN):
            found.append(Violation(LOCAL_TRANSFER, "the day does not end at the hotel",
                                   day.date))
        elif last == LOCAL and here is not None and (hotel := _hotel_at(world, day)):
            found.append(_transfer(here, hotel, moved, minutes, "the hotel", day.date))
    return [v for v in found if v is not None]


def _path(points: list[tuple[float, float]]) -> float:
    return sum(haversine_km(*a, *b) for a, b in itertools.pairwise(points))


def spatial_logic(parsed: PlanArg, world: WorldView, trip: Trip) -> list[Violation]:
    """Each restaurant is within 20 km of the places before and after it (attractions,
    restaurants, the hotel; not stations or airports), and a day's attractions are not visited
    in an order more than 1.5 times (and 10 km) longer than their best order."""
    out: list[Violation] = []
    days = _plan(parsed).daily_schedule
    for number, day in enumerate(days):
        stops: list[tuple[str, str, tuple[float, float]]] = []
        start = _hotel_at(world, days[number - 1]) if number else None
        if start:
            stops.append(("hotel", "", start))
        for act in day.activities:
            row = _poi(world, act) if act.type in (ATTRACTION, RESTAURANT) else None
            if act.type == HOTEL_CHECK_IN and (hotel := _hotel_at(world, day)):
                stops.append(("hotel", "", hotel))
            elif row is not None:
                stops.append((act.type, act.id or "", (row["lat"], row["lon"])))
        end = _hotel_at(world, day) if day.date != trip.end_date else None
        if end:
            stops.append(("hotel", "", end))
        for index, (kind, id, at) in enumerate(stops):
            if kind != RESTAURANT:
                continue
            for other in (stops[index - 1] if index else None,
                          stops[index + 1] if index + 1 < len(stops) else None):
                if other is not None and haversine_km(*at, *other[2]) > RESTAURANT_MAX_KM:
                    out.append(Violation(SPATIAL, f"restaurant {id} is "
                                         f"{haversine_km(*at, *other[2]):.1f} km from the "
                                         "adjacent activity", day.date, [id]))
        slots = [i for i, s in enumerate(stops) if s[0] == ATTRACTION]
        if 2 <= len(slots) <= 7:
            actual = _path([s[2] for s in stops])
            best = actual
            for order in itertools.permutations(slots):
                points = [s[2] for s in stops]
                for slot, source in zip(slots, order):
                    points[slot] = stops[source][2]
                best = min(best, _path(points))
            if actual > 1.5 * best and actual - best > 10:
                out.append(Violation(SPATIAL, f"attraction order covers {actual:.1f} km, "
                                     f"{best:.1f} km possible", day.date,
                                     [stops[i][1] for i in slots]))
    return out


def experience_diversity(parsed: PlanArg, world: WorldView, trip: Trip) -> list[Violation]:
    """No attraction and no restaurant appears twice in the itinerary."""
    out: list[Violation] = []
    seen: dict[str, str] = {}
    for day in _plan(parsed).daily_schedule:
        for act in day.activities:
            if act.type in (ATTRACTION, RESTAURANT) and act.id:
                if act.id in seen:
                    out.append(Violation(DIVERSITY, f"{act.id} already on {seen[act.id]}",
                                         day.date, [act.id]))
                else:
                    seen[act.id] = day.date
    return out


CHECKS: dict[str, Callable[[PlanArg, WorldView, Trip], list[Violation]]] = {
    CONTINUITY: time_continuity,
    DURATION: activity_duration,
    OPENING: opening_hours,
    BUFFER: intercity_buffer,
    LOCAL_TRANSFER: local_transfer,
    SPATIAL: spatial_logic,
    DIVERSITY: experience_diversity,
    PRODUCTS: product_consistency,
}
