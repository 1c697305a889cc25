"""Product consistency (paper B.4.2: "required tickets/reservations should be reflected in
products; restaurant quantities and hotel room capacity must satisfy party-size
requirements"), the eighth soundness check, and the two rules the agent's prompt, the
reference planner and the check share: when tickets are owed, and which set menu suits the
party."""

from __future__ import annotations

from typing import Any

from .common import Trip, Violation, WorldView, transport
from .plan import ATTRACTION, INTERCITY, RESTAURANT, Activity, ParsedPlan, TripPlan, as_plan

PRODUCTS = "product_consistency"
PlanArg = ParsedPlan | TripPlan


def suitable_menus(menus: list[dict[str, Any]], people: int) -> list[str]:
    """The set menus that suit the party (F.1 V: "a suitable set menu matching the number of
    travellers"): those for exactly `people`."""
    return [m["id"] for m in menus if m["people"] == people]


def _restaurant_products(world: WorldView, act: Activity, people: int) -> str | None:
    menus = world.query("SELECT * FROM restaurant_products WHERE restaurant_id = ?", (act.id,))
    if not act.products:
        fitting = suitable_menus(menus, people)
        return (f"set menu {fitting[0]} is for {people}, the party, but none was chosen"
                if fitting else None)
    sizes = {m["id"]: m["people"] for m in menus}
    chosen = [(sizes[p.id], p.quantity) for p in act.products if p.id in sizes]
    if not chosen:
        return None
    covered = sum(size * qty for size, qty in chosen)
    if covered < people or covered - min(size for size, _ in chosen) >= people:
        return f"set menus serve {covered} for {people} travellers"
    return None


def tickets_required(world: WorldView, attraction_id: str) -> bool:
    """Whether a visit needs tickets: the attraction sells them and admission is not free (F.1
    IV: "if free and no proof required, products = []"; a free-admission product at price 0
    is free admission too)."""
    sold = world.query("SELECT price FROM attraction_products WHERE attraction_id = ?",
                       (attraction_id,))
    return bool(sold) and min(r["price"] for r in sold) > 0


def product_consistency(parsed: PlanArg, world: WorldView, trip: Trip) -> list[Violation]:
    """Tickets for every traveller where admission is not free; set menus, when chosen, serve
    the party without a superfluous menu, and a menu for exactly the party's size is chosen
    where the restaurant sells one (F.1 V); every night's rooms hold the party; intercity
    seats are one per traveller and available."""
    plan = as_plan(parsed)
    people = plan.number_of_people
    out: list[Violation] = []
    for day in plan.daily_schedule:
        def bad(message: str, ids: list[str], _date: str = day.date) -> None:
            out.append(Violation(PRODUCTS, message, _date, ids))

        for act in day.activities:
            if not act.id:
                continue
            if act.type == ATTRACTION and world.attraction(act.id):
                tickets = sum(p.quantity for p in act.products or [])
                if tickets_required(world, act.id) and tickets != people:
                    bad(f"{tickets} ticket(s) for {people} travellers", [act.id])
            elif act.type == RESTAURANT and world.restaurant(act.id):
                problem = _restaurant_products(world, act, people)
                if problem:
                    bad(problem, [act.id])
            elif act.type == INTERCITY and transport(world, act.id):
                seats = sum(p.quantity for p in act.products or [])
                if seats != people:
                    bad(f"{seats} seat(s) for {people} travellers", [act.id])
                for prod in act.products or []:
                    row = world.flight_seat(prod.id) or world.train_seat(prod.id)
                    if row is not None and prod.quantity > (row.get("remaining") or 0):
                        bad(f"{prod.quantity} of {prod.id}, {row.get('remaining')} left",
                            [act.id, prod.id])
        if day.hotel is not None and world.hotel(day.hotel.id):
            rooms = [(world.room(r.id), r.room_num) for r in day.hotel.products]
            beds = sum((row["capacity"] or 0) * num for row, num in rooms if row)
            if beds < people:
                bad(f"rooms hold {beds} for {people} travellers", [day.hotel.id])
    return out
