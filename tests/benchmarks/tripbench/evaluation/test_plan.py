"""The itinerary reader: where it finds the JSON, what it tolerates, what it rejects."""

from __future__ import annotations

import json

from evaluator.benchmarks.tripbench.evaluation.plan import parse_plan, with_previous

from .worldkit import baseline_plan, day, plan_text


def test_fenced_plan_parses_without_issues():
    parsed = parse_plan(plan_text(baseline_plan()))
    assert parsed.error is None and parsed.issues == []
    assert parsed.plan.number_of_people == 2
    assert [d.date for d in parsed.plan.daily_schedule] == ["2025-05-02", "2025-05-03",
                                                            "2025-05-04"]
    assert parsed.plan.daily_schedule[2].hotel is None


def test_plan_in_prose_with_braces_in_strings_and_trailing_comma():
    plan = baseline_plan()
    day(plan, 0)["activities"][0]["description"] = "gate {B} } closes"
    text = "Sure! {not json} " + json.dumps(plan)[:-2] + "},} Enjoy {your} trip."
    parsed = parse_plan(text)
    assert parsed.error is None, parsed.error
    assert parsed.plan.daily_schedule[0].activities[0].description == "gate {B} } closes"


def test_lax_numbers_and_unwrapped_plan_are_structural_issues_only():
    plan = baseline_plan()["trip_plan"]
    plan["number_of_people"] = "2"
    parsed = parse_plan(json.dumps(plan))
    assert parsed.plan.number_of_people == 2
    assert parsed.issues == ["plan object is not wrapped in a top-level `trip_plan` key"]


def test_format_issues_are_listed():
    plan = baseline_plan()
    acts = day(plan, 1)["activities"]
    acts[0]["id"] = "X1"                       # Local Transportation must not carry an id
    acts[1]["time"] = "8:45-11:45"             # not HH:MM
    acts[3]["rating"] = 5                      # unknown field
    del acts[5]["products"]                    # an attraction must carry products
    acts[8]["type"] = "Shopping"               # unknown type
    day(plan, 2)["activities"][1]["products"][0]["quantity"] = 0
    issues = parse_plan(plan_text(plan)).issues
    assert len(issues) == 6, issues
    assert any("must not carry an id" in i for i in issues)
    assert any("'8:45-11:45' is not HH:MM-HH:MM" in i for i in issues)
    assert any("unknown field(s) ['rating']" in i for i in issues)
    assert any("missing products" in i for i in issues)
    assert any("unknown activity type" in i for i in issues)
    assert any("quantity 0" in i for i in issues)


def test_unsorted_days_and_activities():
    plan = baseline_plan()
    schedule = plan["trip_plan"]["daily_schedule"]
    schedule[0], schedule[1] = schedule[1], schedule[0]
    acts = day(plan, 2)["activities"]
    acts[0], acts[1] = acts[1], acts[0]
    issues = parse_plan(plan_text(plan)).issues
    assert "daily_schedule is not sorted by date" in issues
    assert "day 2025-05-04: activities are not sorted by time" in issues


def test_unreadable_answers_are_parse_failures():
    assert parse_plan("").error == "empty answer"
    assert "no JSON object" in parse_plan("I could not find flights.").error
    broken = baseline_plan()
    del broken["trip_plan"]["start_date"]
    assert "start_date" in parse_plan(plan_text(broken)).error
    broken = baseline_plan()
    day(broken, 0)["activities"][0]["time"] = 830
    error = parse_plan(plan_text(broken)).error
    assert "daily_schedule[0].activities[0].time" in error


def test_empty_schedule_keeps_the_previous_days():
    previous = parse_plan(plan_text(baseline_plan())).plan
    answer = {"trip_plan": {"start_date": "2025-05-02", "end_date": "2025-05-04",
                            "number_of_people": 2, "daily_schedule": []}}
    parsed = with_previous(parse_plan(json.dumps(answer)), previous)
    assert parsed.plan.daily_schedule == previous.daily_schedule
    assert with_previous(parse_plan(json.dumps(answer)), None).plan.daily_schedule == []
