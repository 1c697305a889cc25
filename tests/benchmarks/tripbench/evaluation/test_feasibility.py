"""The four basic-feasibility checks on the baseline plan and on plans built to break them."""

from __future__ import annotations

import msgspec

from evaluator.benchmarks.tripbench.evaluation import feasibility as F
from evaluator.benchmarks.tripbench.evaluation.plan import parse_plan
from evaluator.benchmarks.tripbench.evaluation.task import EvalTask, Stay

from .worldkit import act, baseline_plan, day, plan_text


def run(check, plan, world, task):
    return check(parse_plan(plan_text(plan)), world, task)


def test_baseline_passes_every_feasibility_check(world, task):
    for name, check in F.CHECKS.items():
        assert run(check, baseline_plan(), world, task) == [], name


def test_structural_validity_reports_reader_issues(world, task):
    plan = baseline_plan()
    day(plan, 0)["activities"][2]["products"] = []   # Local Transportation with products
    found = run(F.structural_validity, plan, world, task)
    assert [v.check for v in found] == ["structural_validity"]
    assert "must not carry products" in found[0].message


def test_poi_validity_unknown_and_wrong_city(world, task):
    plan = baseline_plan()
    acts = day(plan, 1)["activities"]
    acts[1]["id"] = "A999999"                    # not in the sandbox
    acts[5]["id"] = "A000007"                    # a Hangzhou attraction on a Shanghai day
    found = run(F.poi_validity, plan, world, task)
    assert [v.ids for v in found] == [["A999999"], ["A000007"]]
    assert all(v.day == "2025-05-03" for v in found)


def test_poi_validity_products_must_belong(world, task):
    plan = baseline_plan()
    day(plan, 0)["activities"][7]["products"] = [{"id": "AP0000003", "quantity": 2}]
    day(plan, 1)["hotel"] = {"id": "H000001", "products": [{"id": "HR0000003", "room_num": 1}]}
    found = run(F.poi_validity, plan, world, task)
    assert [v.ids for v in found] == [["A000001", "AP0000003"], ["H000001", "HR0000003"]]


def test_poi_validity_hotel_city(world, task):
    plan = baseline_plan()
    day(plan, 1)["hotel"] = {"id": "H000003", "products": [{"id": "HR0000004", "room_num": 1}]}
    found = run(F.poi_validity, plan, world, task)
    assert [v.ids for v in found] == [["H000003"]]


def test_poi_validity_origin_is_no_planning_city(world, task):
    plan = baseline_plan()
    day(plan, 1)["cities"] = "Beijing"           # the day names only the origin
    found = run(F.poi_validity, plan, world, task)
    assert len(found) == 5                       # 4 POIs and the hotel


def test_completeness_party_dates_and_days(world, task):
    plan = baseline_plan()
    plan["trip_plan"]["number_of_people"] = 3
    plan["trip_plan"]["end_date"] = "2025-05-05"
    found = run(F.information_completeness, plan, world, task)
    assert len(found) == 2
    plan = baseline_plan()
    del plan["trip_plan"]["daily_schedule"][1]
    messages = [v.message for v in run(F.information_completeness, plan, world, task)]
    assert messages == ["0 schedules for 2025-05-03"]


def test_completeness_legs(world, task):
    plan = baseline_plan()
    del day(plan, 2)["activities"][5]           # no return train
    found = run(F.information_completeness, plan, world, task)
    assert len(found) == 1 and "intercity legs" in found[0].message


def test_completeness_leg_dates_follow_nights(world):
    task = EvalTask(origin="Beijing", stays=[Stay("Shanghai", 2)], start_date="2025-05-02",
                    end_date="2025-05-04", number_of_people=2)
    assert task.leg_dates() == ["2025-05-02", "2025-05-04"]
    three = EvalTask(origin="A", stays=[Stay("B", 2), Stay("C", 1)], start_date="2025-05-02",
                     end_date="2025-05-05", number_of_people=1)
    assert three.route() == [("A", "B"), ("B", "C"), ("C", "A")]
    assert three.leg_dates() == ["2025-05-02", "2025-05-04", "2025-05-05"]
    loose = EvalTask(origin="A", stays=[Stay("B"), Stay("C")], start_date="2025-05-02",
                     end_date="2025-05-05", number_of_people=1)
    assert loose.leg_dates() == ["2025-05-02", None, "2025-05-05"]


def test_completeness_daily_poi_and_hotels(world, task):
    plan = baseline_plan()
    acts = day(plan, 1)["activities"]
    day(plan, 1)["activities"] = [a for a in acts if a["type"] != "Restaurant"]
    del day(plan, 0)["hotel"]
    found = run(F.information_completeness, plan, world, task)
    assert [(v.day, v.message) for v in found] == [
        ("2025-05-02", "no hotel (with rooms) for the night"),
        ("2025-05-03", "a non-transfer day needs at least one attraction and one restaurant")]


def test_completeness_transfer_day_needs_no_poi(world, task):
    plan = baseline_plan()
    acts = day(plan, 0)["activities"]
    day(plan, 0)["activities"] = acts[:4]        # flight, transfer, check-in only
    assert run(F.information_completeness, plan, world, task) == []


def test_transport_validity(world, task):
    plan = baseline_plan()
    flight = day(plan, 0)["activities"][1]
    flight["time"] = "09:00-11:00"               # timetable says 09:00-11:15
    flight["products"] = [{"id": "FS0000003", "quantity": 2}]   # a seat of F0000002
    found = run(F.transport_validity, plan, world, task)
    assert [v.message for v in found] == [
        "F0000001 is timetabled 09:00-11:15, planned 09:00-11:00",
        "F0000001 product FS0000003 is not a seat of it"]


def test_transport_validity_unknown_date_and_direction(world, task):
    plan = baseline_plan()
    day(plan, 0)["activities"][1]["id"] = "F9999999"
    found = run(F.transport_validity, plan, world, task)
    assert [v.message for v in found] == ["F9999999 is no flight or train"]
    plan = baseline_plan()
    day(plan, 0)["activities"][1] = act("19:00-21:15", "Intercity Transportation", "F0000003",
                                        [{"id": "FS0000004", "quantity": 2}])
    messages = [v.message for v in run(F.transport_validity, plan, world, task)]
    assert messages == ["F0000003 runs on 2025-05-04",
                        ("F0000003 goes C0002->C0001, not as the day's cities "
                        "'Beijing -> Shanghai'")]


def test_checks_take_a_bare_trip_plan(world, task):
    plan = parse_plan(plan_text(baseline_plan())).plan
    for name, check in F.CHECKS.items():
        assert check(plan, world, task) == [], name
    broken = msgspec.structs.replace(plan, start_date="2025/05/02")
    found = F.structural_validity(broken, world, task)
    assert [v.message for v in found] == ["start_date '2025/05/02' is not YYYY-MM-DD"]


def test_city_names_are_matched_tolerantly(world, task):
    plan = baseline_plan()
    day(plan, 0)["cities"] = "beijing -> Shanghai City"
    day(plan, 1)["cities"] = "Shanghai (Pudong)"
    for check in (F.poi_validity, F.transport_validity, F.information_completeness):
        assert run(check, plan, world, task) == []
    day(plan, 1)["cities"] = "Shanghai or Hangzhou"           # two cities: no match
    assert len(run(F.poi_validity, plan, world, task)) == 5
