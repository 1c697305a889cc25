"""A reference planner for quality control (paper 3.3: "we sample full plans, evaluate them"):
builds one itinerary for a dialogue node greedily from the solvability pools C, following the
agent's rules (F.1), so a generated task can be checked end to end with `evaluate`.

Legs: a service of C on each leg's date (outbound preferably leaving 07:00-14:00, the others
after 10:00, only the way home arriving after midnight), the cheapest seat of C with seats for the party.
Hotels: per destination a hotel of C with a room of C, enough rooms for the party. Days: the
arrival part (transfer to the hotel, check-in), the departure part (transfer to the station or
airport: 20 minutes before a train, a two-hour check-in before a flight), and between them,
from 09:00 (after the check-in on arrival days), attractions and restaurants taken in turn,
nearest first but the containment/"any" rubrics' items first, inside opening hours, each
leaving time to get back; every day but the last ends at the hotel. A regular day holds at
least one attraction and one restaurant. Returns the plan as a dict, or None when the greedy
choice finds no way (a planner failure, not proof that the task is unsolvable).
"""

from __future__ import annotations

import math
from datetime import date
from typing import Any

from bench_data.tripbench import TripTask, TurnNode

from ..evaluation import rubrics
from ..evaluation.common import city_ids, estimate_minutes, haversine_km
from ..evaluation.products import suitable_menus, tickets_required
from .meta import to_trip
from .solvability import Checker

CHECK_IN = 120
TRAIN_BUFFER = 20
HOTEL_CHECK_IN = 30
MEAL = 60
DAY_START = 9 * 60
DAY_END = 22 * 60
NEAR_KM = 19.5       # a meal and the places around it (the check allows 20 km)
MAX_WAIT = 100        # before an opening, on a regular day (gaps stay under two hours)
MAX_WAIT_TRANSFER = 240  # travel days may have longer gaps


def _m(hhmm: str) -> int:
    h, m = hhmm.split(":")
    return int(h) * 60 + int(m)


def _hm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


class DayBuilder:
    def __init__(self, at: tuple[float, float] | None, clock: int) -> None:
        self.acts: list[dict[str, Any]] = []
        self.at, self.clock = at, clock
        self.last = ""  # the kind of the last attraction or meal

    def add(self, start: int, end: int, type: str, **extra: Any) -> None:
        self.acts.append({"time": f"{_hm(start)}-{_hm(end)}", "type": type,
                          "description": type, **extra})
        self.clock = end

    def go(self, to: tuple[float, float], end: int | None = None) -> None:
        """Local Transportation to `to` (ending at `end` when given, else now + estimate)."""
        if self.at is not None and haversine_km(*self.at, *to) > 0.05:
            minutes = estimate_minutes(self.at, to)
            start = self.clock if end is None else end - minutes
            self.add(start, start + minutes, "Local Transportation")
        self.at = to


class Planner:
    def __init__(self, world: Any, checker: Checker) -> None:
        self.world = world
        self.checker = checker
        self._rows: dict[tuple[str, str], list[dict[str, Any]]] = {}

    def plan(self, task: TripTask, node: TurnNode) -> dict[str, Any] | None:
        self.why = self.why_day = ""
        self.max_wait = MAX_WAIT
        self.days_left: dict[str, int] = {}
        meta = task.trips[node.trip]
        trip = to_trip(meta)
        specs = [rubrics.decode_spec(task.preferences[p].rubric) for p in node.active]
        self.pools, needs = self.checker.pools(trip, specs)
        # CATEGORY_PRIORITY: sights of the preferred categories first, in their order
        order = next((list(e.values) for e in specs if type(e).__name__ == "CategoryPriority"),
                     [])
        self.rank = {c.lower(): i for i, c in enumerate(order)}
        self.needs = [meeting for _kind, _what, meeting in needs]
        self.people = trip.number_of_people
        self.used: set[str] = set()
        ids = city_ids(self.world, [trip.origin, *(s.city for s in trip.stays)])
        dates = trip.dates()
        legs = []
        route, leg_dates = trip.route(), trip.leg_dates()
        for index, ((a, b), day) in enumerate(zip(route, leg_dates, strict=True)):
            leg = self._leg(ids[a], ids[b], day or "", index == 0, index == len(route) - 1)
            if leg is None:
                self.why = f"no service {a} -> {b} on {day}"
                return None
            legs.append((a, b, day, leg))
        hotels = {}
        for stay in trip.stays:
            hotel = self._hotel(ids[stay.city])
            if hotel is None:
                self.why = f"no hotel in {stay.city}"
                return None
            hotels[stay.city] = hotel
        # which city each night is spent in
        night_city: list[str] = []
        for stay in trip.stays:
            night_city += [stay.city] * (stay.nights or 0)
        schedule = []
        regular = [number for number, day in enumerate(dates)
                   if 0 < number < len(dates) - 1 and day not in leg_dates]
        for number, day in enumerate(dates):
            self.days_left = {}
            for later in regular:
                if later > number:
                    c = ids[night_city[later]]
                    self.days_left[c] = self.days_left.get(c, 0) + 1
            leaving = next((leg for leg in legs if leg[2] == day and number > 0), None)
            arriving = next((leg for leg in legs if leg[2] == day and leg[1] != trip.origin),
                            None)
            last = number == len(dates) - 1
            city = night_city[number] if number < len(night_city) else None
            here_city = night_city[number - 1] if number else None
            built = self._day(day, number, hotels, here_city, city, leaving, arriving, ids)
            if built is None:
                self.why = f"day {day} does not fit: {self.why_day}"
                return None
            acts, cities = built
            entry: dict[str, Any] = {"date": day, "cities": cities}
            if not last and city is not None:
                entry["hotel"] = hotels[city]["plan"]
            entry["activities"] = acts
            schedule.append(entry)
        if any(not (need & self.used) for need in self.needs):
            missing = [what for (_k, what, meeting) in needs if not meeting & self.used]
            self.why = f"not covered: {', '.join(missing)}"
            return None
        return {"trip_plan": {"start_date": trip.start_date, "end_date": trip.end_date,
                              "number_of_people": self.people, "daily_schedule": schedule}}

    # -- choices ---------------------------------------------------------------------------
    def _leg(self, a: str, b: str, day: str, outbound: bool, home: bool
             ) -> dict[str, Any] | None:
        pool_t, pool_s = self.pools.get("transport"), self.pools.get("seat")
        options = []
        for table, seats, key, mode in (("flights", "flight_seats", "flight_id", "flight"),
                                        ("trains", "train_seats", "train_id", "train")):
            for row in self.world.query(f"SELECT * FROM {table} WHERE from_city = ? AND "
                                        "to_city = ? AND date = ? ORDER BY dep_time, id",
                                        (a, b, day)):
                if pool_t is not None and row["id"] not in pool_t:
                    continue
                dep, arr = _m(row["dep_time"]), _m(row["arr_time"])
                overnight = arr <= dep  # arrives the next day: only on the way home
                if (overnight and not home) or (mode == "flight" and dep < CHECK_IN):
                    continue
                rows = self.world.query(f"SELECT id, price FROM {seats} WHERE {key} = ? AND "
                                        "remaining >= ? ORDER BY price, id",
                                        (row["id"], self.people))
                rows = [r for r in rows if pool_s is None or r["id"] in pool_s]
                if rows:
                    good = 7 * 60 <= dep <= 14 * 60 if outbound else dep >= 10 * 60
                    options.append((not good, dep if outbound else -dep, row["id"],
                                    {**row, "mode": mode, "seat": rows[0]["id"]}))
        options.sort(key=lambda o: o[:3])
        return options[0][3] if options else None

    def _hotel(self, city: str) -> dict[str, Any] | None:
        pool_h, pool_r = self.pools["hotel"], self.pools.get("room")
        for h in self.world.query("SELECT * FROM hotels WHERE city_id = ? ORDER BY id", (city,)):
            if h["id"] not in pool_h:
                continue
            rooms = self.world.query("SELECT * FROM hotel_rooms WHERE hotel_id = ? ORDER BY "
                                     "price, id", (h["id"],))
            rooms = [r for r in rooms if pool_r is None or r["id"] in pool_r]
            if rooms:
                room = rooms[0]
                n = math.ceil(self.people / max(1, room["capacity"]))
                return {**h, "plan": {"id": h["id"], "products": [{"id": room["id"],
                                                                   "room_num": n}]}}
        return None

    def _candidates(self, kind: str, city: str, at: tuple[float, float]) -> list[dict]:
        table = "attractions" if kind == "Attraction" else "restaurants"
        pool = self.pools["attraction" if kind == "Attraction" else "restaurant"]
        key = (table, city)
        if key not in self._rows:
            self._rows[key] = self.world.query(f"SELECT * FROM {table} WHERE city_id = ? "
                                               "ORDER BY id", (city,))
        rows = [r for r in self._rows[key] if r["id"] in pool and r["id"] not in self.used]
        wanted = set().union(*[n for n in self.needs if not (n & self.used)]) \
            if self.needs else set()
        rank = self.rank if kind == "Attraction" else {}
        rows.sort(key=lambda r: (r["id"] not in wanted,
                                 rank.get(str(r.get("category", "")).lower(), len(rank)),
                                 haversine_km(*at, r["lat"], r["lon"]), r["id"]))
        return rows

    def _visit(self, day: DayBuilder, kind: str, city: str, weekday: int, until: int,
               back: tuple[float, float], only: set[str] | None = None) -> bool:
        """One attraction or meal (of `only` when given) that fits before `until`, leaving
        time to reach `back`."""
        assert day.at is not None
        for row in self._candidates(kind, city, day.at):
            if only is not None and row["id"] not in only:
                continue
            where = (row["lat"], row["lon"])
            closed = [int(x) for x in str(row.get("closed_weekdays") or "").split(",")
                      if x.strip()]
            if kind == "Attraction" and weekday in closed:
                continue
            minutes = MEAL if kind == "Restaurant" else max(45, int(row["duration_min"]))
            arrive = day.clock + (estimate_minutes(day.at, where)
                                  if haversine_km(*day.at, *where) > 0.05 else 0)
            open_, close = _m(row["open_time"]), _m(row["close_time"])
            close = close + 1440 if close <= open_ else close
            start = max(arrive, open_)
            end = start + minutes
            home = estimate_minutes(where, back) if haversine_km(*where, *back) > 0.05 else 0
            if start - arrive > self.max_wait or end > close or end + home > until or end > 23 * 60:
                continue
            if (kind == "Restaurant" or day.last == "Restaurant") and (
                    haversine_km(*day.at, *where) > NEAR_KM):
                continue  # a meal stays near the activities around it
            if kind == "Restaurant" and haversine_km(*where, *back) > NEAR_KM:
                continue
            day.go(where)
            products = self._products(kind, row["id"])
            day.add(start, end, kind, id=row["id"], products=products)
            day.last = kind
            self.used.add(row["id"])
            return True
        return False

    def _products(self, kind: str, id: str) -> list[dict[str, Any]]:
        """Tickets for everyone unless admission is free; the set menu for exactly the party
        when there is one, else order on site (F.1 IV, V)."""
        if kind == "Attraction":
            if not tickets_required(self.world, id):
                return []
            tickets = self.world.query("SELECT id FROM attraction_products WHERE "
                                       "attraction_id = ? AND price > 0 ORDER BY price, id",
                                       (id,))
            return [{"id": tickets[0]["id"], "quantity": self.people}]
        menus = self.world.query("SELECT id, people FROM restaurant_products WHERE "
                                 "restaurant_id = ? ORDER BY id", (id,))
        fit = suitable_menus(menus, self.people)
        return [{"id": fit[0], "quantity": 1}] if fit else []

    def _fill(self, day: DayBuilder, city: str, weekday: int, until: int,
              back: tuple[float, float], required: bool) -> bool:
        """A regular day: one attraction, then one meal; any day: then the items of unmet
        containment/"any" rubrics while they fit (the rest of C is kept for later days)."""
        if required:
            start = (len(day.acts), day.clock, day.at, set(self.used), day.last)
            for order in (("Attraction", "Restaurant"), ("Restaurant", "Attraction")):
                if all(self._visit(day, kind, city, weekday, until, back) for kind in order):
                    break
                del day.acts[start[0]:]
                day.clock, day.at, self.used = start[1], start[2], set(start[3])
                day.last = start[4]
            else:
                self.why_day = "no attraction and restaurant fit"
                return False
        fillers = 0
        while True:
            wanted = set().union(*[n for n in self.needs if not (n & self.used)]) \
                if self.needs else set()
            if not wanted:
                return True
            if any(self._visit(day, kind, city, weekday, until, back, wanted)
                   for kind in ("Attraction", "Restaurant")):
                continue
            # a wanted place may open later (a dinner-only restaurant): pass the time with
            # another sight, twice at most
            spare = len(self._candidates("Attraction", city, day.at or back)) \
                - self.days_left.get(city, 0)
            if fillers >= 2 or spare < 1 or not self._visit(day, "Attraction", city, weekday,
                                                            until, back):
                return True
            fillers += 1

    # -- one day ---------------------------------------------------------------------------
    def _day(self, day: str, number: int, hotels: dict[str, Any], here_city: str | None,
             city: str | None, leaving: Any, arriving: Any, ids: dict[str, str]
             ) -> tuple[list[dict[str, Any]], str] | None:
        weekday = date.fromisoformat(day).weekday()
        hotel_at = None
        if here_city is not None:
            h = hotels[here_city]
            hotel_at = (h["lat"], h["lon"])
        b = DayBuilder(hotel_at, DAY_START)
        leg = leaving if number > 0 else arriving
        self.max_wait = MAX_WAIT if leg is None else MAX_WAIT_TRANSFER
        if leg is None:  # a regular day in one city
            assert city is not None and hotel_at is not None
            if not self._fill(b, ids[city], weekday, DAY_END, hotel_at, True):
                return None
            b.go(hotel_at)
            return b.acts, city
        a_name, b_name, _, row = leg
        dep, arr = _m(row["dep_time"]), _m(row["arr_time"])
        station = (row["from_lat"], row["from_lon"])
        if number > 0:  # the morning in the city being left
            ready = dep - (CHECK_IN if row["mode"] == "flight" else TRAIN_BUFFER)
            assert here_city is not None and hotel_at is not None
            b.clock = min(DAY_START, ready - estimate_minutes(hotel_at, station))
            if b.clock < 0:
                self.why_day = "the departure is too early"
                return None
            until = ready - 5
            if b.clock < until:
                self._fill(b, ids[here_city], weekday, until, station, False)
            if b.at is not None and haversine_km(*b.at, *station) > 0.05:
                need = estimate_minutes(b.at, station)
                if b.clock + need > ready:
                    self.why_day = "no time to reach the departure"
                    return None
                b.go(station, end=ready)
        else:
            b.at = None
        if row["mode"] == "flight":
            b.add(dep - CHECK_IN, dep, "Flight Check-in")
        b.add(dep, arr, "Intercity Transportation", id=row["id"],
              products=[{"id": row["seat"], "quantity": self.people}])
        b.at = (row["to_lat"], row["to_lon"])
        if city is None:  # home
            return b.acts, f"{a_name} -> {b_name}"
        h = hotels[city]
        b.go((h["lat"], h["lon"]))
        b.add(b.clock, b.clock + HOTEL_CHECK_IN, "Hotel Check-in")
        if b.clock < DAY_END - 90:
            self._fill(b, ids[city], weekday, DAY_END, (h["lat"], h["lon"]), False)
            b.go((h["lat"], h["lon"]))
        return b.acts, f"{a_name} -> {b_name}"


def plan_for(world: Any, checker: Checker, task: TripTask,
             node: TurnNode | None = None) -> dict[str, Any] | None:
    """The reference plan of `task` at `node` (default: its last turn)."""
    return Planner(world, checker).plan(task, node or task.turns[-1])


def why_not(world: Any, checker: Checker, task: TripTask, node: TurnNode | None = None) -> str:
    """Why the reference planner finds no plan ("" when it does)."""
    planner = Planner(world, checker)
    return "" if planner.plan(task, node or task.turns[-1]) is not None else planner.why
