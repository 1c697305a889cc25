"""Verdicts a correct plan must be able to pass, on the generator's own shapes (the `small`
world is drawn city by city by the same code as the `paper` world): free attractions, set
menus by party size, hotel tiers as the tools and rubrics name them, one table of times of
day, and unfinished dialogues judged against the final requirements."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from bench_data.tripbench import Preference, TripMeta, TripStay, TripTask, TurnEvent, TurnNode
from bench_data.types import Task
from evaluator.benchmarks.base import JudgeInput
from evaluator.benchmarks.tripbench.evaluation import evaluate, rubrics
from evaluator.benchmarks.tripbench.evaluation.plan import Activity, DayPlan, Product, TripPlan
from evaluator.benchmarks.tripbench.evaluation.products import product_consistency
from evaluator.benchmarks.tripbench.evaluation.rubric_base import Ctx
from evaluator.benchmarks.tripbench.evaluation.rubrics_poi import TIERS
from evaluator.benchmarks.tripbench.evaluation.rubrics_transport import (
    TimeDepart,
    _timing_accepts,
)
from evaluator.benchmarks.tripbench.judging import eval_task, rules
from evaluator.benchmarks.tripbench.periods import PERIODS
from evaluator.benchmarks.tripbench.synthesis.planner import plan_for
from evaluator.benchmarks.tripbench.synthesis.solvability import Checker
from evaluator.benchmarks.tripbench.tools import call
from evaluator.benchmarks.tripbench.toolspec import parse_period
from evaluator.benchmarks.tripbench.world import World
from evaluator.benchmarks.tripbench.world.geo import route_estimate
from evaluator.judges.settings import JudgeSettings
from evaluator.judges.transcript import trajectory_hash
from evaluator.records import EpisodeRecord, UnitId

from .evaluation.worldkit import build_world, fixture_tables, open_test_world

STAY = {"check_in_date": "2025-10-02", "check_out_date": "2025-10-04"}


def one_visit(kind: str, id_: str, products: list[tuple[str, int]], people: int) -> TripPlan:
    act = Activity(time="10:00-11:00", type=kind, id=id_,
                   products=[Product(p, q) for p, q in products])
    return TripPlan("2025-10-02", "2025-10-02", people,
                    [DayPlan("2025-10-02", "Shanghai", None, [act])])


def ok(world: World, tool: str, **args) -> dict:
    out = json.loads(call(world, tool, args))
    assert "error" not in out, out
    return out


# -- 1. free attractions --------------------------------------------------------------------


def test_free_attractions_are_planned_with_no_products(world: World) -> None:
    """The generator sells no ticket at a free attraction, so `products: []` (the prompt's
    rule) passes; a paid one needs a ticket per traveller."""
    rows = world.query("SELECT a.id, (SELECT MIN(price) FROM attraction_products p WHERE "
                       "p.attraction_id = a.id) AS low, (SELECT COUNT(*) FROM "
                       "attraction_products p WHERE p.attraction_id = a.id) AS n "
                       "FROM attractions a ORDER BY a.id")
    free = [r for r in rows if r["n"] == 0]
    assert 0.25 < len(free) / len(rows) < 0.7          # the paper world: 46 %
    assert all(r["low"] is None or r["low"] > 0 for r in rows)   # no price-0 product drawn
    trip = None
    for r in rows:
        plan = one_visit("Attraction", r["id"], [], 3)
        found = product_consistency(plan, world, trip)
        assert bool(found) == (r["n"] > 0), r
        if r["n"]:
            ticket = world.query("SELECT id FROM attraction_products WHERE attraction_id = ? "
                                 "ORDER BY price LIMIT 1", (r["id"],))[0]["id"]
            assert not product_consistency(one_visit("Attraction", r["id"], [(ticket, 3)], 3),
                                           world, trip)
    listed = ok(world, "search_attractions", city="Shanghai", free_only=True, page_size=50)
    assert listed["results"] and all(a["free"] and a["min_price"] == 0
                                     for a in listed["results"])
    detail = ok(world, "get_attraction_detail_with_products", poi_id=free[0]["id"])
    assert detail["products"] == [] and "Free admission" in detail["message"]


def test_a_price_0_free_admission_product_is_free_admission_too(tmp_path: Path) -> None:
    """A world drawn by the earlier generator (a "Free admission" product at price 0): both
    `products: []` and the free product for everyone pass."""
    tables = fixture_tables()
    tables["attraction_products"].append({"id": "AP0000009", "attraction_id": "A000002",
                                          "name": "Free admission", "price": 0.0})
    world = open_test_world(build_world(tmp_path / "w.db", tables))
    assert not product_consistency(one_visit("Attraction", "A000002", [], 2), world, None)
    assert not product_consistency(one_visit("Attraction", "A000002", [("AP0000009", 2)], 2),
                                   world, None)
    assert product_consistency(one_visit("Attraction", "A000001", [], 2), world, None)


# -- 5. set menus ---------------------------------------------------------------------------


def test_set_menus_by_party_size(world: World) -> None:
    """`products: []` fails only where a set menu is for exactly the party (F.1 V: "a suitable
    set menu matching the number of travelers"); that menu once passes, and menus that
    together serve the party pass."""
    restaurants = [r["id"] for r in world.query("SELECT id FROM restaurants ORDER BY id")]
    menus: dict[str, list[dict]] = {}
    for m in world.query("SELECT * FROM restaurant_products ORDER BY id"):
        menus.setdefault(m["restaurant_id"], []).append(m)
    for people in range(1, 7):
        failing = 0
        for rid in restaurants:
            sizes = [m["people"] for m in menus.get(rid, [])]
            found = product_consistency(one_visit("Restaurant", rid, [], people), world, None)
            assert bool(found) == (people in sizes), (rid, people, sizes)
            failing += bool(found)
            for m in menus.get(rid, []):
                if m["people"] == people:
                    assert not product_consistency(
                        one_visit("Restaurant", rid, [(m["id"], 1)], people), world, None)
                elif people % m["people"] == 0:          # six one-person menus for six
                    assert not product_consistency(one_visit(
                        "Restaurant", rid, [(m["id"], people // m["people"])], people),
                        world, None)
        assert failing / len(restaurants) < 0.3, (people, failing)


# -- 3. hotel tiers ------------------------------------------------------------------------


def test_hotel_tiers_are_one_vocabulary(world: World) -> None:
    premium = ok(world, "search_hotels", city="Shanghai", **STAY, hotel_type=["premium"],
                 page_size=50)["results"]
    upscale = ok(world, "search_hotels", city="Shanghai", **STAY, hotel_type=["Upscale"],
                 page_size=50)["results"]
    assert premium and premium == upscale and all(h["star"] == 4 for h in premium)
    every = ok(world, "search_hotels", city="Shanghai", **STAY, page_size=50)["results"]
    for hotel in every:
        assert TIERS[hotel["star"]] == hotel["hotel_type"]
        for word in (hotel["hotel_type"], {"upscale": "premium", "midscale": "comfort"}.get(
                hotel["hotel_type"], hotel["hotel_type"])):
            e = rubrics.decode_spec({"type": "HOTEL_TYPE", "types": [word]})
            assert rubrics.RUBRICS["HOTEL_TYPE"].item(e, hotel["id"], world), (word, hotel)


# -- 4. times of day -------------------------------------------------------------------------


def test_tools_and_rubrics_share_the_times_of_day() -> None:
    for name, (start, end) in PERIODS.items():
        lo, hi = parse_period("t", name.replace("_", " "))
        assert (lo, hi) == (start, end)
        e = TimeDepart(period=name)
        for minute in range(0, 24 * 60, 5):
            hhmm = f"{minute // 60:02d}:{minute % 60:02d}"
            row = {"dep_time": hhmm, "arr_time": "23:59" if hhmm < "23:59" else "00:10"}
            assert (lo <= hhmm <= hi) == _timing_accepts(e, row, Ctx(None, None)), (name, hhmm)
    assert parse_period("t", "18:00-24:00") == ("18:00", "24:00")


def test_a_night_search_returns_only_what_the_rubric_calls_night(world: World) -> None:
    routes = world.query("SELECT DISTINCT f.from_city, f.to_city, f.date, a.name AS src, "
                         "b.name AS dst FROM flights f JOIN cities a ON a.id = f.from_city "
                         "JOIN cities b ON b.id = f.to_city ORDER BY 1, 2, 3")
    night = TimeDepart(period="night")
    seen = 0
    for r in routes:
        got = ok(world, "search_flights", departure_city=r["src"], arrival_city=r["dst"],
                 date=r["date"], dep_period="night", page_size=50)["results"]
        want = world.query("SELECT id FROM flights WHERE from_city = ? AND to_city = ? AND "
                           "date = ? AND dep_time >= '20:00' ORDER BY id",
                           (r["from_city"], r["to_city"], r["date"]))
        assert sorted(f["id"] for f in got) == [w["id"] for w in want]
        for f in got:
            assert _timing_accepts(night, f, Ctx(None, None))
        seen += len(got)
    assert seen > 0
    early_evening = world.query("SELECT COUNT(*) AS n FROM flights WHERE dep_time >= '18:00' "
                                "AND dep_time < '20:00'")[0]["n"]
    assert early_evening > 0       # the 18:00-20:00 flights the old filter called "night"


# -- 2. unfinished dialogues ---------------------------------------------------------------


def _record(task: TripTask, plan: str, termination: str, reached: int) -> EpisodeRecord:
    return EpisodeRecord(unit=UnitId(run="r", task=f"tripbench/easy/{task.task_id}", trial=0,
                                     seed=0), benchmark="tripbench", subset="easy",
                         task_id=task.task_id, messages=[], termination=termination,
                         extra={"final_plan": plan, "turn_reached": reached, "turns": []})


def _judge(world_path: Path, task: TripTask, record: EpisodeRecord):
    t = Task(benchmark="tripbench", subset="easy", task_id=task.task_id, payload=task,
             extra={"world": str(world_path)})
    return rules(JudgeInput(record=record, task=t, thash=trajectory_hash(record),
                            settings=JudgeSettings(), prompts=None, tools=None))


def test_an_unfinished_dialogue_is_judged_against_the_final_requirements(world: World,
                                                                         world_path: Path
                                                                         ) -> None:
    """A plan for turn 1 that passes turn 1's requirements: the episode that overflowed after
    turn 1 scores 0 (it used to score strict 1 against turn 1), the plan's counts are taken
    against the final requirements, and a finished one-turn dialogue with that plan scores 1."""
    trip = TripMeta(origin="Shanghai", stays=[TripStay("Hangzhou", 2)],
                    start_date="2025-10-02", end_date="2025-10-04", number_of_people=2)
    first = TurnNode(turn=1, trip="A", events=[], active=[])
    one_turn = TripTask(task_id="u", difficulty="easy", trips={"A": trip}, preferences={},
                        turns=[first])
    plan = plan_for(world, Checker(world, 2.0), one_turn)
    assert plan is not None
    text = json.dumps(plan)
    assert evaluate(text, eval_task(one_turn, first), world).strict
    seen = [a["id"] for d in plan["trip_plan"]["daily_schedule"] for a in d["activities"]
            if a["type"] == "Attraction"]
    exclude = Preference(id="P1", chain="c1", step=0, family="attraction",
                         rubric={"type": "EXCLUDE_ATTRACTIONS", "ids": seen[:1]},
                         text="Not that one.")
    two_turns = msgspec.structs.replace(one_turn, preferences={"P1": exclude}, turns=[
        first, TurnNode(turn=2, trip="A", events=[TurnEvent(op="add", pref="P1")],
                        active=["P1"])])
    cut = _judge(world_path, two_turns, _record(two_turns, text, "context_overflow", 1))
    assert cut.error is None and cut.score == 0.0
    assert cut.scores["finished"] == 0.0 and cut.scores["strict"] == cut.scores["loose"] == 0
    assert cut.scores["f_user"] == 1.0 and cut.reasoning["active"] == "P1"
    assert "unfinished" in cut.reasoning
    done = _judge(world_path, one_turn, _record(one_turn, text, "completed", 1))
    assert done.score == 1.0 and done.scores["finished"] == 1.0
    # finished, but the last turn's wish is broken: judged 0 by the rubric, not by the cut
    late = _judge(world_path, two_turns, _record(two_turns, text, "completed", 2))
    assert late.score == 0.0 and late.scores["finished"] == 1.0 and late.scores["loose"] == 1


# -- 12. the route estimate ---------------------------------------------------------------


def test_route_estimate_fits_the_papers_four_examples() -> None:
    """Appendix G's get_route_estimate answers: (km, minutes) for four coordinate pairs;
    round(10 + 2 x km) gives every one (round(5 + 3 x km) gave two)."""
    examples = [((31.555366, 120.302786, 31.512471, 120.281905), 5.15, 20),
                ((31.54976, 120.305988, 31.512471, 120.281905), 4.73, 19),
                ((31.499521, 120.284699, 31.584891, 120.235333), 10.56, 31),
                ((31.489489, 120.266144, 31.499521, 120.284699), 2.08, 14)]
    for points, paper_km, paper_min in examples:
        km, minutes = route_estimate(*points)
        assert abs(km - paper_km) <= 0.03 and minutes == paper_min, (points, km, minutes)
        assert round(10 + 2 * paper_km) == paper_min
