"""Overall_strict and Overall_loose (paper 3.5) on constructed answers."""

from __future__ import annotations

import json

import msgspec
import pytest

from evaluator.benchmarks.tripbench.evaluation import feasibility, soundness
from evaluator.benchmarks.tripbench.evaluation.plan import parse_plan
from evaluator.benchmarks.tripbench.evaluation.rubrics import decode_spec
from evaluator.benchmarks.tripbench.evaluation.scoring import Evaluation, evaluate, overall
from evaluator.benchmarks.tripbench.evaluation.task import EvalTask

from .worldkit import baseline_plan, day, plan_text

PASS = {"type": "STAR", "bound": {"min": 4}}
FAIL_1 = {"type": "HEAT_SCORE", "bound": {"min": 4}}           # A000002 has heat 3
FAIL_2 = {"type": "EXCLUDE_CUISINE", "values": ["Japanese"]}   # R000004 is Japanese


def with_rubrics(task: EvalTask, *raws) -> EvalTask:
    return msgspec.structs.replace(task, rubrics=[decode_spec(r) for r in raws])


@pytest.mark.parametrize(("counts", "strict", "loose"), [
    ((0, 0, 0), True, True), ((0, 2, 1), False, True), ((0, 3, 0), False, False),
    ((0, 0, 2), False, False), ((1, 0, 0), False, False), ((0, 1, 0), False, True)])
def test_overall_definitions(counts, strict, loose):
    assert overall(*counts) == (strict, loose)


def test_clean_plan_is_strict_and_loose(world, task):
    result = evaluate(plan_text(baseline_plan()), with_rubrics(task, PASS), world)
    assert (result.f_feas, result.f_sound, result.f_user) == (0, 0, 0)
    assert result.strict and result.loose and result.violations == []
    assert set(result.feasibility) == set(feasibility.CHECKS) and len(result.feasibility) == 4
    assert set(result.soundness) == set(soundness.CHECKS) and len(result.soundness) == 8


def test_one_user_violation_is_loose_only(world, task):
    result = evaluate(plan_text(baseline_plan()), with_rubrics(task, PASS, FAIL_1), world)
    assert [r.passed for r in result.rubrics] == [True, False]
    assert (result.f_user, result.strict, result.loose) == (1, False, True)
    result = evaluate(plan_text(baseline_plan()), with_rubrics(task, FAIL_1, FAIL_2), world)
    assert (result.f_user, result.strict, result.loose) == (2, False, False)


def _two_soundness_failures():
    plan = baseline_plan()
    day(plan, 1)["activities"][5]["id"] = "A000001"    # repeated attraction (diversity), no
    day(plan, 1)["activities"][7]["id"] = "R000001"    # ticket; repeated restaurant whose duo
    day(plan, 1)["activities"][7]["products"] = []     # menu fits but is not chosen (products)
    return plan


def test_findings_count_once_per_check(world, task):
    result = evaluate(plan_text(_two_soundness_failures()), task, world)
    assert result.soundness["experience_diversity"] == 2
    assert result.soundness["product_consistency"] == 2
    assert (result.f_feas, result.f_sound) == (0, 2)
    assert (result.strict, result.loose) == (False, True)


def test_three_soundness_failures_break_loose(world, task):
    plan = _two_soundness_failures()
    day(plan, 2)["activities"][0]["time"] = "07:00-08:45"     # transfer way off the estimate
    result = evaluate(plan_text(plan), task, world)
    assert result.f_sound == 3 and result.soundness["local_transfer"] == 1
    assert (result.strict, result.loose) == (False, False)


def test_any_feasibility_violation_breaks_loose(world, task):
    plan = baseline_plan()
    day(plan, 0)["activities"][0]["gate"] = "B12"             # a field the format lacks
    result = evaluate(plan_text(plan), with_rubrics(task, PASS), world)
    assert result.feasibility["structural_validity"] == 1
    assert (result.f_feas, result.f_sound, result.f_user) == (1, 0, 0)
    assert (result.strict, result.loose) == (False, False)


def test_unparsed_answer_fails_everything(world, task):
    result = evaluate("Sorry, no plan today.", with_rubrics(task, PASS, FAIL_1), world)
    assert not result.parsed and result.parse_error
    assert (result.f_feas, result.f_sound, result.f_user) == (4, 8, 2)
    assert all(n == 1 for n in (*result.feasibility.values(), *result.soundness.values()))
    assert not any(r.passed for r in result.rubrics)
    assert (result.strict, result.loose) == (False, False)


def test_no_change_answer_is_judged_on_the_previous_plan(world, task):
    previous = parse_plan(plan_text(baseline_plan())).plan
    answer = json.dumps({"trip_plan": {"start_date": "2025-05-02", "end_date": "2025-05-04",
                                       "number_of_people": 2, "daily_schedule": []}})
    assert evaluate(answer, task, world, previous=previous).strict
    alone = evaluate(answer, task, world)
    assert alone.feasibility["information_completeness"] > 0 and not alone.loose


def test_evaluation_round_trips_as_json(world, task):
    result = evaluate(plan_text(_two_soundness_failures()), with_rubrics(task, FAIL_1), world)
    again = msgspec.json.decode(msgspec.json.encode(result), type=Evaluation)
    assert again == result


def test_task_file_decodes(world):
    raw = {"task_id": "t9", "origin": "Beijing", "stays": [{"city": "Shanghai", "nights": 2}],
           "start_date": "2025-05-02", "end_date": "2025-05-04", "number_of_people": 2,
           "rubrics": [PASS, FAIL_1]}
    task = msgspec.json.decode(json.dumps(raw), type=EvalTask)
    result = evaluate(plan_text(baseline_plan()), task, world)
    assert [r.type for r in result.rubrics] == ["STAR", "HEAT_SCORE"]
    assert result.f_user == 1


POOL = ["", "25:00-26:00", "23:00-01:00", "A000001", "R000006", "F0000003", "T0000001",
        "HR0000002", "X", 0, -3, 7, None, [], {}, "Attraction", "Restaurant",
        "Intercity Transportation", "Flight Check-in", "Hotel Check-in", "Shanghai -> Beijing",
        "2025-05-09", [{"id": "AP0000001", "quantity": 0}], [{"id": "RP0000003"}]]


def test_mutated_plans_never_raise(world, task):
    import random

    rng = random.Random(11)
    task = with_rubrics(task, PASS, FAIL_1, {"type": "DISTANCE", "max_km": 3,
                                             "reference": "hotel"},
                        {"type": "COST", "bound": {"max": 900}, "level": "person_total"},
                        {"type": "COST_TRANSPORT", "max": 2000, "level": "round_trip"},
                        {"type": "TIME_RETURN", "period": "evening"})
    for _ in range(300):
        plan = baseline_plan()
        for _ in range(rng.randint(1, 4)):
            target = day(plan, rng.randrange(3))
            acts = target.get("activities")
            if rng.random() < 0.7 and isinstance(acts, list) and acts:
                act = rng.choice(acts)
                act[rng.choice(["time", "type", "id", "products"])] = rng.choice(POOL)
            else:
                target[rng.choice(["date", "cities", "hotel", "activities"])] = rng.choice(POOL)
        result = evaluate(plan_text(plan), task, world)
        assert result.f_feas <= 4 and result.f_sound <= 8 and result.f_user <= 6
        assert not (result.strict and not result.loose)
