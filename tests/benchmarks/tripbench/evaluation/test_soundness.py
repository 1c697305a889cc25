"""The eight planning-soundness checks: the baseline passes each, and each rule of F.1 / B.4.2
is broken on purpose (expected findings worked out by hand from the fixture's coordinates:
in-city minutes = round(10 + 2 x km), the baseline's POIs lie on a north-south line)."""

from __future__ import annotations

from evaluator.benchmarks.tripbench.evaluation import soundness as S
from evaluator.benchmarks.tripbench.evaluation.plan import parse_plan

from .worldkit import LOCAL, act, baseline_plan, day, fixture_tables, plan_text, shanghai_world


def run(check, plan, world, task):
    return check(parse_plan(plan_text(plan)), world, task)


def messages(check, plan, world, task):
    return [v.message for v in run(check, plan, world, task)]


def test_baseline_passes_every_soundness_check(world, task):
    for name, check in S.CHECKS.items():
        assert run(check, baseline_plan(), world, task) == [], name


def test_continuity_overlap(world, task):
    plan = baseline_plan()
    day(plan, 1)["activities"][3]["time"] = "11:50-12:50"    # starts before 12:00
    assert messages(S.time_continuity, plan, world, task) == [
        "Restaurant 11:50-12:50 overlaps the previous activity"]


def test_continuity_gap_only_on_non_transfer_days(world, task):
    plan = baseline_plan()
    day(plan, 1)["activities"][7]["time"] = "18:31-19:31"    # 16:30 -> 18:31: 121 min
    day(plan, 1)["activities"][8]["time"] = "19:31-19:46"
    assert messages(S.time_continuity, plan, world, task) == [
        "gap of 121 min before Restaurant 18:31-19:31"]
    plan = baseline_plan()
    day(plan, 1)["activities"][7]["time"] = "18:30-19:30"    # exactly two hours: allowed
    day(plan, 1)["activities"][8]["time"] = "19:30-19:45"
    assert run(S.time_continuity, plan, world, task) == []
    plan = baseline_plan()                                   # day 1 is a transfer day
    day(plan, 0)["activities"][11]["time"] = "20:00-21:00"
    day(plan, 0)["activities"][12]["time"] = "21:00-21:15"
    assert run(S.time_continuity, plan, world, task) == []


def test_continuity_daily_bounds(world, task):
    plan = baseline_plan()
    day(plan, 1)["activities"][0]["time"] = "05:30-05:45"
    day(plan, 1)["activities"][1]["time"] = "05:45-08:45"
    day(plan, 1)["activities"][2]["time"] = "08:45-12:00"
    assert messages(S.time_continuity, plan, world, task) == [
        "Attraction 05:45-08:45 outside 06:00-24:00"]
    plan = baseline_plan()                 # dinner past midnight
    day(plan, 1)["activities"][7]["time"] = "16:30-00:15"
    assert messages(S.time_continuity, plan, world, task) == [
        "Restaurant 16:30-00:15 outside 06:00-24:00",
        "Local Transportation 17:30-17:45 overlaps the previous activity"]
    plan = baseline_plan()                 # an early check-in, a late transfer are fine
    day(plan, 0)["activities"][0]["time"] = "05:00-09:00"
    day(plan, 0)["activities"][12]["time"] = "23:50-00:20"
    assert run(S.time_continuity, plan, world, task) == []


def test_attraction_durations(world, task):
    plan = baseline_plan()                 # A000003 suggests 180 minutes
    a3 = day(plan, 1)["activities"][1]
    a3["time"] = "08:45-10:15"             # 90 min: 90 away from 180, allowed
    assert run(S.activity_duration, plan, world, task) == []
    a3["time"] = "08:45-10:14"             # 89 min: 91 away
    assert messages(S.activity_duration, plan, world, task) == [
        "visit of 89 min (suggested 180)"]
    plan = baseline_plan()                 # A000002 suggests 60 minutes
    day(plan, 0)["activities"][9]["time"] = "16:30-17:00"   # 30 min is not more than 30
    assert messages(S.activity_duration, plan, world, task) == [
        "visit of 30 min (suggested 60)"]


def test_meal_durations(world, task):
    plan = baseline_plan()
    meal = day(plan, 1)["activities"][3]
    for time, ok in (("12:00-12:45", True), ("12:00-13:30", True), ("12:00-12:44", False),
                     ("12:00-13:31", False)):
        meal["time"] = time
        assert (run(S.activity_duration, plan, world, task) == []) is ok, time


def test_opening_hours_buffer(world, task):
    plan = baseline_plan()                 # A000003 opens 08:00: 07:30 is the earliest start
    a3 = day(plan, 1)["activities"][1]
    a3["time"] = "07:30-10:30"
    assert run(S.opening_hours, plan, world, task) == []
    a3["time"] = "07:29-10:29"
    assert messages(S.opening_hours, plan, world, task) == [
        "A000003 at 07:29-10:29, open 08:00-17:00"]
    plan = baseline_plan()                 # R000004 closes 22:00: 22:30 is the latest end
    r4 = day(plan, 1)["activities"][7]
    r4["time"] = "21:30-22:30"
    assert run(S.opening_hours, plan, world, task) == []
    r4["time"] = "21:31-22:31"
    assert len(run(S.opening_hours, plan, world, task)) == 1


def test_opening_hours_closed_weekday(tmp_path, task):
    tables = fixture_tables()              # A000004 closed on Saturdays; 2025-05-03 is one
    for row in tables["attractions"]:
        if row["id"] == "A000004":
            row["closed_weekdays"] = "5,6"
    world = shanghai_world(tmp_path / "w.db", tables)
    assert messages(S.opening_hours, baseline_plan(), world, task) == [
        "A000004 is closed on 2025-05-03"]


def test_flight_check_in(world, task):
    plan = baseline_plan()
    check_in = day(plan, 0)["activities"][0]
    for time, ok in (("07:30-09:00", True), ("06:30-09:00", True), ("07:31-09:00", False),
                     ("06:29-09:00", False), ("07:00-08:50", False)):
        check_in["time"] = time
        assert (run(S.intercity_buffer, plan, world, task) == []) is ok, time
    del day(plan, 0)["activities"][0]
    assert messages(S.intercity_buffer, plan, world, task) == [
        "no Flight Check-in before F0000001"]


def test_train_station_buffer(world, task):
    plan = baseline_plan()                 # the train leaves 12:50
    to_station = day(plan, 2)["activities"][4]
    for time, ok in (("12:00-12:35", True), ("12:00-12:20", True), ("12:00-12:36", False),
                     ("12:00-12:19", False)):
        to_station["time"] = time
        assert (run(S.intercity_buffer, plan, world, task) == []) is ok, time
    day(plan, 2)["activities"].insert(5, act("12:20-12:50", "Flight Check-in"))
    assert sorted(messages(S.intercity_buffer, plan, world, task)) == [
        "Flight Check-in not followed by a flight", "check-in activity before train T0000001"]


def test_local_transfer_missing(world, task):
    plan = baseline_plan()
    acts = day(plan, 0)["activities"]
    del acts[6]                            # R000001 -> A000001 (1 km) without transport
    assert messages(S.local_transfer, plan, world, task) == [
        "no Local Transportation to Attraction A000001 (1.0 km)"]


def test_local_transfer_duration(world, task):
    plan = baseline_plan()                 # hotel -> A000005: 5 km, estimate 20 min
    first = day(plan, 2)["activities"][0]
    first["time"] = "08:05-08:45"          # 40 min: 20 off, allowed
    assert run(S.local_transfer, plan, world, task) == []
    first["time"] = "08:04-08:45"          # 41 min
    assert messages(S.local_transfer, plan, world, task) == [
        "41 min of transfer to Attraction A000005, estimate 20 min for 5.0 km"]


def test_local_transfer_day_ends_at_hotel(world, task):
    plan = baseline_plan()
    del day(plan, 1)["activities"][8]      # no return to the hotel after dinner
    assert messages(S.local_transfer, plan, world, task) == ["the day does not end at the hotel"]


def test_spatial_restaurant_distance(world, task):
    plan = baseline_plan()                 # R000006 is 40 km north; A000002 at 3 km
    day(plan, 0)["activities"][11]["id"] = "R000006"
    found = run(S.spatial_logic, plan, world, task)
    assert [v.ids for v in found] == [["R000006"], ["R000006"]]   # both neighbours > 20 km


def test_spatial_detour(world, task):
    plan = baseline_plan()                 # 25 N, 25 S, 30 N, 30 S and back: 220 km vs 120
    day(plan, 1)["activities"] = [
        act("08:00-08:30", LOCAL), act("08:30-10:00", "Attraction", "A000008", []),
        act("10:00-10:30", LOCAL), act("10:30-12:00", "Attraction", "A000009", []),
        act("12:00-12:30", LOCAL), act("12:30-14:00", "Attraction", "A000006", []),
        act("14:00-14:30", LOCAL), act("14:30-16:00", "Attraction", "A000010", []),
        act("16:00-16:30", LOCAL)]
    found = run(S.spatial_logic, plan, world, task)
    assert len(found) == 1 and found[0].message.startswith("attraction order covers 220.0 km")
    good = baseline_plan()
    day(good, 1)["activities"] = [day(plan, 1)["activities"][i] for i in (0, 3, 4, 7, 6, 1, 2,
                                                                          5, 8)]
    assert run(S.spatial_logic, good, world, task) == []


def test_experience_diversity(world, task):
    plan = baseline_plan()
    day(plan, 1)["activities"][5]["id"] = "A000001"
    day(plan, 1)["activities"][7]["id"] = "R000001"
    found = run(S.experience_diversity, plan, world, task)
    assert [v.message for v in found] == ["A000001 already on 2025-05-02",
                                          "R000001 already on 2025-05-02"]


def test_products_tickets_and_menus(world, task):
    plan = baseline_plan()
    acts = day(plan, 0)["activities"]
    acts[7]["products"] = [{"id": "AP0000001", "quantity": 1}]   # one ticket for two
    acts[5]["products"] = []               # the 2-person set menu fits two: must be chosen
    found = run(S.product_consistency, plan, world, task)
    assert [v.ids for v in found] == [["R000001"], ["A000001"]]
    acts[5]["products"] = [{"id": "RP0000001", "quantity": 2}]   # serves 4: one too many
    acts[7]["products"] = [{"id": "AP0000001", "quantity": 2}]
    assert messages(S.product_consistency, plan, world, task) == [
        "set menus serve 4 for 2 travellers"]


def test_products_rooms_and_seats(world, task):
    plan = baseline_plan()
    day(plan, 1)["hotel"] = {"id": "H000001", "products": [{"id": "HR0000002", "room_num": 1}]}
    day(plan, 0)["activities"][1]["products"] = [{"id": "FS0000002", "quantity": 2}]
    assert messages(S.product_consistency, plan, world, task) == [
        "2 of FS0000002, 1 left", "rooms hold 1 for 2 travellers"]
    day(plan, 1)["hotel"]["products"][0]["room_num"] = 2
    day(plan, 0)["activities"][1]["products"] = [{"id": "FS0000001", "quantity": 1}]
    assert messages(S.product_consistency, plan, world, task) == [
        "1 seat(s) for 2 travellers"]
