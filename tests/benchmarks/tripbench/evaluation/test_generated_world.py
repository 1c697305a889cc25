"""The evaluation on a world of the real generator (skipped where world/ is absent): every
rubric's generator and item validator agree on real data, and an itinerary built greedily by
the agent's rules (F.1) passes all twelve checks."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from evaluator.benchmarks.tripbench.evaluation import rubrics as R
from evaluator.benchmarks.tripbench.evaluation.common import estimate_minutes
from evaluator.benchmarks.tripbench.evaluation.plan import parse_plan
from evaluator.benchmarks.tripbench.evaluation.scoring import evaluate
from evaluator.benchmarks.tripbench.evaluation.task import EvalTask, Stay

from .test_rubrics import CASES
from .worldkit import plan_text

generate = pytest.importorskip("evaluator.benchmarks.tripbench.world.generate")
db = pytest.importorskip("evaluator.benchmarks.tripbench.world.db")

PEOPLE = 2


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    path = generate.generate_world(tmp_path_factory.mktemp("gen") / "small.sqlite", "small", 0)
    return db.open_world(path)


def hm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def mins(value: str) -> int:
    h, m = value.split(":")
    return int(h) * 60 + int(m)


class Day:
    """Appends activities of one day, moving the clock and the position."""

    def __init__(self, at: tuple[float, float] | None, clock: int):
        self.acts: list[dict] = []
        self.at, self.clock = at, clock

    def add(self, start: int, end: int, type: str, **extra) -> None:
        self.acts.append({"time": f"{hm(start)}-{hm(end)}", "type": type,
                          "description": type, **extra})
        self.clock = end

    def go(self, to: tuple[float, float]) -> None:
        if self.at is not None and self.at != to:
            minutes = estimate_minutes(self.at, to)
            self.add(self.clock, self.clock + minutes, "Local Transportation")
        self.at = to


def _fits(row: dict, start: int, minutes: int, weekday: int) -> bool:
    closed = [int(d) for d in str(row.get("closed_weekdays") or "").split(",") if d.strip()]
    open_, close = mins(row["open_time"]), mins(row["close_time"])
    close = close + 1440 if close <= open_ else close
    return weekday not in closed and open_ <= start and start + minutes <= close


def _visit(real, day: Day, city: str, when: date, used: set[str], kind: str) -> None:
    table = "attractions" if kind == "Attraction" else "restaurants"
    rows = real.query(f"SELECT * FROM {table} WHERE city_id = ? ORDER BY "
                      "dist_km(lat, lon, ?, ?)", (city, *day.at))
    for row in rows:
        minutes = 60 if kind == "Restaurant" else min(max(row["duration_min"], 60), 240)
        travel = estimate_minutes(day.at, (row["lat"], row["lon"]))
        if row["id"] in used or not _fits(row, day.clock + travel, minutes, when.weekday()):
            continue
        day.go((row["lat"], row["lon"]))
        products = []
        if kind == "Attraction":
            tickets = real.query("SELECT id FROM attraction_products WHERE attraction_id = ? "
                                 "ORDER BY price", (row["id"],))
            products = [{"id": tickets[0]["id"], "quantity": PEOPLE}] if tickets else []
        else:
            menus = real.query("SELECT id, people FROM restaurant_products WHERE "
                               "restaurant_id = ? ORDER BY people DESC", (row["id"],))
            fit = [m for m in menus if PEOPLE % m["people"] == 0]
            products = [{"id": fit[0]["id"], "quantity": PEOPLE // fit[0]["people"]}] if fit else []
        day.add(day.clock, day.clock + minutes, kind, id=row["id"], products=products)
        used.add(row["id"])
        return
    raise AssertionError(f"no {kind} fits")


def _leg(real, start: str, end: str, when: date, after: int, before: int):
    for table, seats, key in (("flights", "flight_seats", "flight_id"),
                              ("trains", "train_seats", "train_id")):
        rows = real.query(f"SELECT * FROM {table} WHERE from_city = ? AND to_city = ? AND "
                          "date = ? ORDER BY dep_time", (start, end, when.isoformat()))
        for row in rows:
            dep, arr = mins(row["dep_time"]), mins(row["arr_time"])
            seat = real.query(f"SELECT id FROM {seats} WHERE {key} = ? AND remaining >= ? "
                              "ORDER BY price", (row["id"], PEOPLE))
            if after <= dep <= before and arr > dep and seat:
                return table, row, seat[0]["id"]
    return None


def _build(real) -> tuple[dict, EvalTask]:
    cities = {r["name"]: r["id"] for r in real.query("SELECT id, name FROM cities")}
    first = date.fromisoformat(real.meta["date_start"])
    for a, b in ((x, y) for x in cities for y in cities if x != y):
        out = _leg(real, cities[a], cities[b], first, 7 * 60, 11 * 60)
        back = _leg(real, cities[b], cities[a], first + timedelta(days=1), 16 * 60, 21 * 60)
        if out and back:
            break
    else:
        pytest.skip("no suitable city pair in the generated world")
    hotel = real.query("SELECT h.*, r.id AS room FROM hotels h JOIN hotel_rooms r ON "
                       "r.hotel_id = h.id WHERE h.city_id = ? AND r.capacity >= ? LIMIT 1",
                       (cities[b], PEOPLE))[0]
    stay = {"id": hotel["id"], "products": [{"id": hotel["room"], "room_num": 1}]}
    used: set[str] = set()
    schedule = []
    for number, (mode, row, seat) in enumerate((out, back)):
        when = first + timedelta(days=number)
        dep, arr = mins(row["dep_time"]), mins(row["arr_time"])
        leg = {"id": row["id"], "products": [{"id": seat, "quantity": PEOPLE}]}
        hotel_at = (hotel["lat"], hotel["lon"])
        if number == 0:
            day = Day(None, dep - 120)
            if mode == "flights":
                day.add(dep - 120, dep, "Flight Check-in")
            day.add(dep, arr, "Intercity Transportation", **leg)
            day.at = (row["to_lat"], row["to_lon"])
            day.go(hotel_at)
            day.add(day.clock, day.clock + 30, "Hotel Check-in")
            _visit(real, day, cities[b], when, used, "Restaurant")
            _visit(real, day, cities[b], when, used, "Attraction")
            day.go(hotel_at)
            schedule.append({"date": when.isoformat(), "cities": f"{a} -> {b}",
                             "hotel": stay, "activities": day.acts})
        else:
            day = Day(hotel_at, 9 * 60)
            _visit(real, day, cities[b], when, used, "Attraction")
            _visit(real, day, cities[b], when, used, "Restaurant")
            station = (row["from_lat"], row["from_lon"])
            travel = estimate_minutes(day.at, station)
            ready = dep - (120 if mode == "flights" else 20)
            assert day.clock + travel <= ready, "the morning ran into the departure"
            day.clock = ready - travel
            day.go(station)
            if mode == "flights":
                day.add(dep - 120, dep, "Flight Check-in")
            day.add(dep, arr, "Intercity Transportation", **leg)
            schedule.append({"date": when.isoformat(), "cities": f"{b} -> {a}",
                             "activities": day.acts})
    plan = {"trip_plan": {"start_date": first.isoformat(),
                          "end_date": (first + timedelta(days=1)).isoformat(),
                          "number_of_people": PEOPLE, "daily_schedule": schedule}}
    task = EvalTask(task_id="gen", origin=a, stays=[Stay(b, 1)], start_date=first.isoformat(),
                    end_date=(first + timedelta(days=1)).isoformat(), number_of_people=PEOPLE)
    return plan, task


def test_rule_built_plan_passes_every_check(real):
    plan, task = _build(real)
    result = evaluate(plan_text(plan), task, real)
    assert result.violations == [], result.violations
    assert result.strict and result.loose


@pytest.mark.parametrize("name", sorted(R.RUBRICS))
def test_generator_and_validators_agree_on_generated_world(name, real):
    plan, task = _build(real)
    raw = next(raw for raw, ok in CASES if ok and raw["type"] == name)
    if "ids" in raw:
        first = real.query("SELECT a.id FROM attractions a JOIN cities c ON c.id = a.city_id "
                           "WHERE c.name = ? ORDER BY a.id LIMIT 1", (task.stays[0].city,))
        raw = {**raw, "ids": [first[0]["id"]]}
    e = R.decode_spec(raw)
    definition = R.RUBRICS[name]
    result = R.generate(e, real, task)
    assert result.candidates, "empty selection range"
    for id in result.candidates:
        assert definition.item(e, id, real, task) is (id in result.feasible), id
    assert isinstance(R.validate(e, parse_plan(plan_text(plan)).plan, real, task), bool)
