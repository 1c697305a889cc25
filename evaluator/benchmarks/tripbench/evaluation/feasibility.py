"""The four basic-feasibility checks (paper B.4.1). Each is `check(parsed, world, trip) ->
list[Violation]`; a check is violated when its list is non-empty. `parsed` is the reader's
`ParsedPlan` (its `issues` feed structural validity); a plan that did not parse is handled by
scoring.py (every check fails) and never reaches these functions.

The paper names three feasibility checks (structural validity, POI validity, information
completeness) and counts four; the fourth here is transport validity, the intercity side of
"must not fabricate ... transportation schedules" (F.1), which POI validity (restaurants,
attractions, hotels) leaves out.
"""

from __future__ import annotations

from collections.abc import Callable

from .common import Trip, Violation, WorldView, city_ids, day_cities, span, transport
from .plan import (
    ATTRACTION,
    INTERCITY,
    RESTAURANT,
    DayPlan,
    ParsedPlan,
    TripPlan,
    as_plan,
    format_issues,
)

PlanArg = ParsedPlan | TripPlan

STRUCTURAL = "structural_validity"
POI = "poi_validity"
COMPLETENESS = "information_completeness"
TRANSPORT = "transport_validity"


def structural_validity(parsed: PlanArg, world: WorldView, trip: Trip) -> list[Violation]:
    """The answer parses as JSON of the itinerary format: the `trip_plan` wrapper, only the
    format's field names, dates as YYYY-MM-DD and times as HH:MM-HH:MM, known activity types,
    `id`/`products` exactly on intercity transport, attractions and restaurants, positive
    quantities and room counts, days sorted by date and activities by time."""
    issues = parsed.issues if isinstance(parsed, ParsedPlan) else format_issues(parsed)
    return [Violation(STRUCTURAL, issue) for issue in issues]


def _intended_cities(day: DayPlan, world: WorldView, trip: Trip) -> tuple[set[str], str | None]:
    """(ids of the task's destination cities named in the day's `cities`, the id of the city the
    day ends in); the origin is never a planning city."""
    names = day_cities(day.cities)
    resolved = city_ids(world, names)
    destinations = set(city_ids(world, [s.city for s in trip.stays]).values())
    allowed = {cid for cid in resolved.values() if cid in destinations}
    last = resolved.get(names[-1]) if names else None
    return allowed, last


def poi_validity(parsed: PlanArg, world: WorldView, trip: Trip) -> list[Violation]:
    """Every referenced restaurant, attraction and hotel exists in the sandbox and lies in an
    intended planning city of its day (a destination named in the day's `cities`; the hotel
    in the city the day ends in); every ticket, set menu and room product exists and belongs
    to the POI it is listed under."""
    plan = as_plan(parsed)
    out: list[Violation] = []
    for day in plan.daily_schedule:
        allowed, last = _intended_cities(day, world, trip)

        def bad(message: str, *ids: str, _date: str = day.date) -> None:
            out.append(Violation(POI, message, _date, list(ids)))

        for act in day.activities:
            if act.type not in (ATTRACTION, RESTAURANT) or not act.id:
                continue
            attraction = act.type == ATTRACTION
            row = world.attraction(act.id) if attraction else world.restaurant(act.id)
            if row is None:
                bad(f"{act.type.lower()} {act.id} does not exist", act.id)
                continue
            if row["city_id"] not in allowed:
                bad(f"{act.id} is in city {row['city_id']}, not a planning city of the day "
                    f"({day.cities!r})", act.id)
            for prod in act.products or []:
                getter = world.attraction_product if attraction else world.restaurant_product
                prow = getter(prod.id)
                owner = "attraction_id" if attraction else "restaurant_id"
                if prow is None or prow[owner] != act.id:
                    bad(f"product {prod.id} is not a product of {act.id}", act.id, prod.id)
        if day.hotel is None:
            continue
        hotel = world.hotel(day.hotel.id)
        if hotel is None:
            bad(f"hotel {day.hotel.id} does not exist", day.hotel.id)
            continue
        if hotel["city_id"] != last or last not in allowed:
            bad(f"hotel {day.hotel.id} is not in the city the day ends in", day.hotel.id)
        for room in day.hotel.products:
            rrow = world.room(room.id)
            if rrow is None or rrow["hotel_id"] != day.hotel.id:
                bad(f"room {room.id} is not a room of {day.hotel.id}", day.hotel.id, room.id)
    return out


def transport_validity(parsed: PlanArg, world: WorldView, trip: Trip) -> list[Violation]:
    """Every intercity leg is a real flight or train of the sandbox, on the day it is
    scheduled, at its timetable times (the activity's time equals departure-arrival), between
    the cities the day names, and its seat products are seats of that flight or train."""
    plan = as_plan(parsed)
    out: list[Violation] = []
    for day in plan.daily_schedule:
        names = day_cities(day.cities)
        resolved = city_ids(world, names)
        for act in day.activities:
            if act.type != INTERCITY or not act.id:
                continue
            row = transport(world, act.id)
            if row is None:
                out.append(Violation(TRANSPORT, f"{act.id} is no flight or train", day.date,
                                     [act.id]))
                continue
            problems = []
            if row["date"] != day.date:
                problems.append(f"runs on {row['date']}")
            times = span(act.time)
            expected = span(f"{row['dep_time']}-{row['arr_time']}")
            if times != expected:
                problems.append(f"is timetabled {row['dep_time']}-{row['arr_time']}, "
                                f"planned {act.time}")
            if len(names) < 2 or not all(n in resolved for n in names):
                problems.append(f"day cities {day.cities!r} name no known intercity direction")
            else:
                pairs = set(zip((resolved[n] for n in names), (resolved[n] for n in names[1:])))
                if (row["from_city"], row["to_city"]) not in pairs:
                    problems.append(f"goes {row['from_city']}->{row['to_city']}, "
                                    f"not as the day's cities {day.cities!r}")
            seat_getter = world.flight_seat if row["mode"] == "flight" else world.train_seat
            owner = "flight_id" if row["mode"] == "flight" else "train_id"
            for prod in act.products or []:
                srow = seat_getter(prod.id)
                if srow is None or srow[owner] != act.id:
                    problems.append(f"product {prod.id} is not a seat of it")
            for problem in problems:
                out.append(Violation(TRANSPORT, f"{act.id} {problem}", day.date, [act.id]))
    return out


def _legs(parsed: PlanArg, world: WorldView) -> list[tuple[str, str, str, str]]:
    """(date, from_city, to_city, id) of the plan's known intercity legs, in plan order."""
    legs = []
    for day in as_plan(parsed).daily_schedule:
        for act in day.activities:
            row = transport(world, act.id) if act.type == INTERCITY else None
            if row is not None:
                legs.append((day.date, row["from_city"], row["to_city"], row["id"]))
    return legs


def information_completeness(parsed: PlanArg, world: WorldView,
                             trip: Trip) -> list[Violation]:
    """The plan gives the task's dates and party size, one schedule per date of the trip, the
    required intercity legs in order (outbound, connections, return; on their dates when the
    task fixes the nights), at least one restaurant and one attraction on every non-transfer
    day, and a hotel with rooms for every night (all days but the return day)."""
    plan = as_plan(parsed)
    out: list[Violation] = []

    def miss(message: str, day: str | None = None, ids: list[str] | None = None) -> None:
        out.append(Violation(COMPLETENESS, message, day, ids or []))

    if plan.start_date != trip.start_date or plan.end_date != trip.end_date:
        miss(f"dates {plan.start_date}..{plan.end_date}, task {trip.start_date}..{trip.end_date}")
    if plan.number_of_people != trip.number_of_people:
        miss(f"number_of_people {plan.number_of_people}, task {trip.number_of_people}")
    expected_dates = trip.dates()
    planned = [day.date for day in plan.daily_schedule]
    for date in expected_dates:
        count = planned.count(date)
        if count != 1:
            miss(f"{count} schedules for {date}", date)
    for date in sorted(set(planned) - set(expected_dates)):
        miss(f"schedule for {date}, outside the trip", date)

    ids = city_ids(world, [trip.origin, *(s.city for s in trip.stays)])
    required = [(ids.get(a), ids.get(b)) for a, b in trip.route()]
    legs = _legs(parsed, world)
    got = [(f, t) for _, f, t, _ in legs]
    if got != required:
        miss(f"intercity legs {got}, required {required}")
    else:
        for (date, _, _, id), want in zip(legs, trip.leg_dates()):
            if want is not None and date != want:
                miss(f"leg {id} on {date}, required on {want}", date, [id])

    transfer_days = {date for date, *_ in legs}
    for day in plan.daily_schedule:
        transfer = day.date in transfer_days or len(day_cities(day.cities)) > 1
        types = [act.type for act in day.activities]
        if not transfer and (ATTRACTION not in types or RESTAURANT not in types):
            miss("a non-transfer day needs at least one attraction and one restaurant", day.date)
        if day.date != trip.end_date and (day.hotel is None or not day.hotel.products):
            miss("no hotel (with rooms) for the night", day.date)
    return out


CHECKS: dict[str, Callable[[PlanArg, WorldView, Trip], list[Violation]]] = {
    STRUCTURAL: structural_validity,
    POI: poi_validity,
    COMPLETENESS: information_completeness,
    TRANSPORT: transport_validity,
}
