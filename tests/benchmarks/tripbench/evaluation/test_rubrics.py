"""User-constraint rubrics: each validator on the baseline plan (and variants) with outcomes
worked out by hand from the fixture, generator/validator agreement for every registered
rubric, and the task-file encoding of the parameters.

Baseline selection: attractions A000001 (museum, heat 8, 5A, ticket 50, 2 km N),
A000002 (park, heat 3, 50 comments, free, 3 km N), A000003 (temple, score 4.8, ticket 100),
A000004 (park, score 3.5, 3A, free), A000005 (shopping, heat 9.5, ticket 300, 5 km N);
restaurants Shanghai 80 / 4.5, Sichuan 150 / 4.0, Cantonese 60, Japanese 200 / 4.8,
Hunan 40 / 3.8; hotel H000001 (5 stars, pet-friendly, at the centre), one twin room at 500 for
two nights; flight F0000001 09:00-11:15 China Eastern at 800, train T0000001 12:50-17:20 at 550.
"""

from __future__ import annotations

import msgspec
import pytest

from evaluator.benchmarks.tripbench.evaluation import rubrics as R
from evaluator.benchmarks.tripbench.evaluation.plan import parse_plan

from .worldkit import baseline_plan, day, plan_text

CASES = [  # (rubric, expected on the baseline plan)
    ({"type": "INCLUDE_CATEGORIES", "values": ["park", "temple"]}, True),
    ({"type": "INCLUDE_CATEGORIES", "values": ["park", "zoo"]}, False),
    ({"type": "EXCLUDE_CATEGORIES", "values": ["zoo"]}, True),
    ({"type": "EXCLUDE_CATEGORIES", "values": ["Shopping"]}, False),
    ({"type": "INCLUDE_ATTRACTIONS", "ids": ["A000001", "A000003"]}, True),
    ({"type": "INCLUDE_ATTRACTIONS", "ids": ["A000001", "A000006"]}, False),
    ({"type": "EXCLUDE_ATTRACTIONS", "ids": ["A000006"]}, True),
    ({"type": "EXCLUDE_ATTRACTIONS", "ids": ["A000002"]}, False),
    ({"type": "HEAT_SCORE", "bound": {"min": 2}}, True),
    ({"type": "HEAT_SCORE", "bound": {"min": 4}}, False),
    ({"type": "HEAT_SCORE", "bound": {"max": 2}, "exclude": True}, True),
    ({"type": "HEAT_SCORE", "bound": {"min": 9}, "exclude": True}, False),
    ({"type": "COMMENT_SCORE", "bound": {"min": 3.5}}, True),
    ({"type": "COMMENT_SCORE", "bound": {"min": 4.0}}, False),
    ({"type": "COMMENT_COUNT", "bound": {"min": 50}}, True),
    ({"type": "COMMENT_COUNT", "bound": {"min": 100}}, False),
    ({"type": "PRICE_ATTRACTION", "bound": {"max": 300}}, True),
    ({"type": "PRICE_ATTRACTION", "bound": {"max": 100}}, False),
    ({"type": "SIGHT_LEVEL", "bound": {"min": 5}}, True),
    ({"type": "SIGHT_LEVEL", "bound": {"min": 1, "max": 2}}, False),
    ({"type": "DISTANCE", "max_km": 6}, True),
    ({"type": "DISTANCE", "max_km": 4}, False),
    ({"type": "DISTANCE", "max_km": 6, "reference": "hotel"}, True),
    ({"type": "DISTANCE", "max_km": 4, "reference": "hotel"}, False),
    ({"type": "CATEGORY_PRIORITY", "values": ["park", "museum"]}, True),
    ({"type": "CATEGORY_PRIORITY", "values": ["museum", "park"]}, False),
    ({"type": "CATEGORY_PRIORITY", "values": ["zoo", "park"]}, False),
    ({"type": "COST", "bound": {"max": 500}}, True),
    ({"type": "COST", "bound": {"max": 400}}, False),
    ({"type": "COST", "bound": {"max": 250}, "level": "person_night"}, True),
    ({"type": "COST", "bound": {"max": 200}, "level": "person_night"}, False),
    ({"type": "COST", "bound": {"around": 520}, "level": "night_total"}, True),
    ({"type": "COST", "bound": {"around": 600}, "level": "night_total"}, False),
    ({"type": "COST", "bound": {"max": 500}, "level": "person_total"}, True),
    ({"type": "COST", "bound": {"max": 999}, "level": "trip_total"}, False),
    ({"type": "COST", "bound": {"min": 900, "max": 1000}, "level": "trip_total"}, True),
    ({"type": "HOTEL_TYPE", "types": ["luxury"]}, True),
    ({"type": "HOTEL_TYPE", "types": ["Luxury"], "exclude": True}, False),
    ({"type": "STAR", "bound": {"min": 4}}, True),
    ({"type": "STAR", "bound": {"max": 4}}, False),
    ({"type": "PET_FRIENDLY"}, True),
    ({"type": "LOCATION", "max_km": 1}, True),
    ({"type": "PRICE", "bound": {"max": 200}}, True),
    ({"type": "PRICE", "bound": {"max": 150}}, False),
    ({"type": "PRICE", "bound": {"min": 190}, "exclude": True}, False),
    ({"type": "RATING", "bound": {"min": 3.8}}, True),
    ({"type": "RATING", "bound": {"min": 4.0}}, False),
    ({"type": "INCLUDE_CUISINE", "values": ["Sichuan", "hunan"]}, True),
    ({"type": "INCLUDE_CUISINE", "values": ["Sichuan", "Thai"]}, False),
    ({"type": "EXCLUDE_CUISINE", "values": ["Thai"]}, True),
    ({"type": "EXCLUDE_CUISINE", "values": ["japanese"]}, False),
    ({"type": "TIME_DEPART", "period": "morning"}, True),
    ({"type": "TIME_DEPART", "after": "10:00"}, False),
    ({"type": "TIME_DEPART", "target": "arrive", "before": "11:15"}, True),
    ({"type": "TIME_DEPART", "target": "arrive", "before": "11:14"}, False),
    ({"type": "TIME_RETURN", "after": "12:00", "before": "14:00"}, True),
    ({"type": "TIME_RETURN", "period": "evening"}, False),
    ({"type": "TIME_RETURN", "target": "arrive", "before": "18:00"}, True),
    ({"type": "COST_TRANSPORT", "max": 800}, True),
    ({"type": "COST_TRANSPORT", "max": 700}, False),
    ({"type": "COST_TRANSPORT", "max": 1350, "level": "round_trip"}, True),
    ({"type": "COST_TRANSPORT", "max": 1300, "level": "round_trip"}, False),
    ({"type": "COST_TRANSPORT", "max": 2700, "level": "total"}, True),
    ({"type": "COST_TRANSPORT", "max": 2699, "level": "total"}, False),
    ({"type": "AIRLINE", "excluded": ["Air China"]}, True),
    ({"type": "AIRLINE", "excluded": ["china eastern"]}, False),
    # the rubrics on reviews, ratings, rooms, reservations, platforms and punctuality
    ({"type": "REVIEW_COUNT_HOTEL", "bound": {"min": 1000}}, True),
    ({"type": "REVIEW_COUNT_HOTEL", "bound": {"min": 1500}}, False),
    ({"type": "GOOD_RATE", "bound": {"min": 95}}, True),
    ({"type": "GOOD_RATE", "bound": {"min": 97}}, False),
    ({"type": "ASPECT_RATING", "min": 8.5}, True),
    ({"type": "ASPECT_RATING", "min": 8.8}, False),
    ({"type": "ASPECT_RATING", "min": 9.1, "aspect": "product"}, True),
    ({"type": "ASPECT_RATING", "min": 8.8, "aspect": "service"}, False),
    ({"type": "CANCEL_POLICY", "at_least": "free_72h"}, True),
    ({"type": "CANCEL_POLICY", "at_least": "free_24h"}, True),
    ({"type": "CANCEL_POLICY", "at_least": "free_until_checkin"}, False),
    ({"type": "BREAKFAST_NUMBER", "bound": {"min": 2}}, True),
    ({"type": "BREAKFAST_NUMBER", "bound": {"min": 2, "max": 2}}, True),
    ({"type": "BREAKFAST_NUMBER", "bound": {"min": 3}}, False),
    ({"type": "HAS_WINDOW"}, True),
    ({"type": "REVIEW_COUNT", "bound": {"min": 60}}, True),
    ({"type": "REVIEW_COUNT", "bound": {"min": 100}}, False),
    ({"type": "OPEN", "rule": "no_mandatory"}, True),
    ({"type": "OPEN", "rule": "reservable"}, False),
    ({"type": "SUBRATING_FOOD", "bound": {"min": 8.0}}, True),
    ({"type": "SUBRATING_FOOD", "bound": {"min": 8.5}}, False),
    ({"type": "SUBRATING_ENVIRONMENT", "bound": {"min": 8.0}}, True),
    ({"type": "SUBRATING_ENVIRONMENT", "bound": {"min": 8.1}}, False),
    ({"type": "SUBRATING_SERVICE", "bound": {"min": 7.0}}, True),
    ({"type": "SUBRATING_SERVICE", "bound": {"min": 7.5}}, False),
    ({"type": "PLATFORM", "platforms": ["ctrip", "12306"]}, True),
    ({"type": "PLATFORM", "platforms": ["Ctrip"]}, False),
    ({"type": "PLATFORM", "platforms": ["Qunar"], "exclude": True}, True),
    ({"type": "PLATFORM", "platforms": ["12306"], "exclude": True}, False),
    ({"type": "ONTIME", "min_rate": 85}, True),
    ({"type": "ONTIME", "min_rate": 90}, False),
    ({"type": "ONTIME", "max_delay": 15}, True),
    ({"type": "ONTIME", "min_rate": 80, "max_delay": 10}, False),
]


@pytest.fixture(scope="module")
def plan():
    return parse_plan(plan_text(baseline_plan())).plan


@pytest.mark.parametrize(("raw", "expected"), CASES, ids=[
    f"{raw['type']}-{i}" for i, (raw, _) in enumerate(CASES)])
def test_validator_on_baseline(raw, expected, plan, world, task):
    e = R.decode_spec(raw)
    assert R.validate(e, plan, world, task) is expected


def test_every_registered_rubric_has_a_pass_and_a_fail_case():
    passing = {raw["type"] for raw, ok in CASES if ok}
    failing = {raw["type"] for raw, ok in CASES if not ok}
    assert passing == set(R.RUBRICS)
    assert failing | {"PET_FRIENDLY", "LOCATION", "HAS_WINDOW"} == set(R.RUBRICS)  # below


def _with_far_inn(nights: list[int]):
    plan = baseline_plan()
    for n in nights:
        day(plan, n)["hotel"] = {"id": "H000002", "products": [{"id": "HR0000003",
                                                               "room_num": 1}]}
    return parse_plan(plan_text(plan)).plan


def test_hotel_rubrics_on_other_hotels(world, task):
    pet = R.decode_spec({"type": "PET_FRIENDLY"})
    assert R.validate(pet, _with_far_inn([1]), world, task) is False
    near = R.decode_spec({"type": "LOCATION", "max_km": 5})
    near_but_last = R.decode_spec({"type": "LOCATION", "max_km": 5, "except_last_night": True})
    assert R.validate(near, _with_far_inn([1]), world, task) is False      # Far Inn at 12 km
    assert R.validate(near_but_last, _with_far_inn([1]), world, task) is True
    assert R.validate(near_but_last, _with_far_inn([0]), world, task) is False


def test_room_and_reservation_rubrics_on_other_choices(world, task):
    """Far Inn's twin has no window, no breakfast and no refund; R000006 must be reserved."""
    window = R.decode_spec({"type": "HAS_WINDOW"})
    assert R.validate(window, _with_far_inn([1]), world, task) is False
    cancel = R.decode_spec({"type": "CANCEL_POLICY", "at_least": "free_72h"})
    assert R.validate(cancel, _with_far_inn([1]), world, task) is False
    breakfast = R.decode_spec({"type": "BREAKFAST_NUMBER", "bound": {"min": 2}})
    assert R.validate(breakfast, _with_far_inn([1]), world, task) is False
    plan = baseline_plan()
    day(plan, 1)["activities"][3]["id"] = "R000006"
    open_ = R.decode_spec({"type": "OPEN", "rule": "no_mandatory"})
    assert R.validate(open_, parse_plan(plan_text(plan)).plan, world, task) is False
    # two rooms with two breakfasts each: four a night, not "exactly two"
    plan = baseline_plan()
    for n in (0, 1):
        day(plan, n)["hotel"]["products"][0]["room_num"] = 2
    exact = R.decode_spec({"type": "BREAKFAST_NUMBER", "bound": {"min": 2, "max": 2}})
    assert R.validate(exact, parse_plan(plan_text(plan)).plan, world, task) is False


def test_sight_level_fails_without_the_5a(world, task):
    plan = baseline_plan()
    day(plan, 0)["activities"][7]["id"] = "A000006"    # level 2 instead of the 5A
    e = R.decode_spec({"type": "SIGHT_LEVEL", "bound": {"min": 5}})
    assert R.validate(e, parse_plan(plan_text(plan)).plan, world, task) is False


def test_city_scoped_rubric(world, task):
    e = R.decode_spec({"type": "HEAT_SCORE", "bound": {"min": 4}, "city": "Hangzhou"})
    plan = parse_plan(plan_text(baseline_plan())).plan
    assert R.validate(e, plan, world, task) is True    # no Hangzhou attraction is visited
    assert R.generate(e, world, task).candidates == ["A000007"]


def test_generator_ranges_by_hand(world, task):
    heat = R.generate(R.decode_spec({"type": "HEAT_SCORE", "bound": {"min": 8}}), world, task)
    assert heat.kind == "attraction" and heat.feasible == ["A000001", "A000005"]
    assert len(heat.candidates) == 9                    # the Shanghai attractions
    depart = R.generate(R.decode_spec({"type": "TIME_DEPART", "before": "08:00"}), world, task)
    assert depart.candidates == ["F0000001", "F0000002", "T0000002"]
    assert depart.feasible == ["T0000002"]
    trip = R.generate(R.decode_spec({"type": "COST_TRANSPORT", "max": 1350,
                                     "level": "round_trip"}), world, task)
    # cheapest outbound 550 (TS0000003), cheapest return 550 (TS0000001)
    assert sorted(trip.feasible) == ["FS0000001", "FS0000003", "FS0000004", "TS0000001",
                             "TS0000003"]
    rooms = R.generate(R.decode_spec({"type": "COST", "bound": {"max": 550},
                                      "level": "night_total"}), world, task)
    assert rooms.feasible == ["HR0000001", "HR0000003"]  # two singles cost 600 a night


def _sample_rubric(name: str) -> R.RubricParams:
    return R.decode_spec(next(raw for raw, ok in CASES if ok and raw["type"] == name))


@pytest.mark.parametrize("name", sorted(R.RUBRICS))
def test_generator_and_item_validator_agree(name, world, task):
    e = _sample_rubric(name)
    definition = R.RUBRICS[name]
    result = R.generate(e, world, task)
    assert set(result.feasible) <= set(result.candidates)
    for id in result.feasible:
        assert definition.item(e, id, world, task), id
    others = [i for i in result.candidates if i not in result.feasible]
    for id in others[:: max(1, len(others) // 5)]:      # a sample of the rest
        assert not definition.item(e, id, world, task), id


@pytest.mark.parametrize("name", [n for n, d in R.RUBRICS.items() if d.mode == "all"])
def test_plan_of_feasible_items_passes(name, world, task, plan):
    """For "every item" rubrics, V(e, plan) holds exactly when the plan's items are feasible."""
    from evaluator.benchmarks.tripbench.evaluation.rubric_base import Ctx, selected

    for raw, _ in (c for c in CASES if c[0]["type"] == name):
        e = R.decode_spec(raw)
        feasible = set(R.generate(e, world, task).feasible)
        chosen = {row["id"] for row in selected(R.RUBRICS[name].kind, plan, e, Ctx(world, task))}
        assert R.validate(e, plan, world, task) is (chosen <= feasible), raw


def test_parameters_round_trip_through_json():
    for raw, _ in CASES:
        e = R.decode_spec(raw)
        again = R.decode_spec(msgspec.json.encode(e))
        assert again == e and msgspec.to_builtins(e)["type"] == raw["type"]


def test_unknown_rubric_type_is_rejected():
    with pytest.raises(msgspec.ValidationError):
        R.decode_spec({"type": "NO_SUCH_RUBRIC"})


def test_every_b2_rubric_type_is_registered():
    """The paper's 37 types: B.2.1-B.2.4 (B.2.5 repeats B.2.4's six)."""
    assert len(R.RUBRICS) == 37
    families = {d.family for d in R.RUBRICS.values()}
    assert families == {"attraction", "hotel", "restaurant", "transportation"}
    assert sum(d.family == "transportation" for d in R.RUBRICS.values()) == 6
