"""Finding the plan JSON in agent messages, the agent's preference table, shape validation."""

from __future__ import annotations

import json

import pytest

from evaluator.benchmarks.grouptravelbench.chat import message
from evaluator.benchmarks.grouptravelbench.plan import (
    PlanShapeError,
    extract_plan,
    extract_plan_from_text,
    is_travel_plan,
    parse_agent_table,
    require_valid_plan,
    validate_plan,
)

SMALL = {"query": "西安两日游", "days": [{"day": 1, "city_segments": [{"type": "city_block"}]}]}
TEXT = json.dumps(SMALL, ensure_ascii=False)


def test_fenced_and_bare_plans():
    assert extract_plan_from_text(f"最终方案如下：\n```json\n{TEXT}\n```\n祝旅途愉快") == SMALL
    assert extract_plan_from_text(f"方案：{TEXT} 以上。") == SMALL
    # the brace walk starts at the nearest "{" before the first "days": the plan's own here
    assert extract_plan_from_text('{"plan": ' + TEXT + "}") == SMALL
    # braces are counted raw: a "{" inside a string before "days" derails the walk
    odd = dict(SMALL, query="西安{两日游")
    assert extract_plan_from_text(json.dumps(odd, ensure_ascii=False)) is None


def test_fenced_block_that_is_not_a_plan_falls_back_to_the_brace_walk():
    text = '```json\n{"days": []}\n```\n正式版：' + TEXT
    # the fenced object fails the gate; the brace walk finds the first "days" (in the fence)
    # whose object is also not a plan -> None
    assert extract_plan_from_text(text) is None
    assert extract_plan_from_text("```json\n{bad json}\n```\n" + TEXT) == SMALL


def test_gate_rejects_plans_without_segments():
    for bad in ({"days": []}, {"days": [1]}, {"days": [{"city_segments": []}]}, {"day": []}):
        assert extract_plan_from_text(json.dumps(bad)) is None


def test_extract_plan_takes_the_latest_agent_plan():
    older = dict(SMALL, query="旧方案")
    history = [
        message("Agent", json.dumps(older, ensure_ascii=False)),
        message("User1", TEXT),  # users' messages are never plans
        message("Agent", "我们讨论一下 days 和 city_segments 的安排"),  # mentions, no JSON
    ]
    assert extract_plan(history) == older
    history.append(message("Agent", f"```json\n{TEXT}\n```"))
    assert extract_plan(history) == SMALL
    assert extract_plan([message("Agent", None)]) is None


def test_chat_stop_rule():
    assert is_travel_plan(f"```json\n{TEXT}\n```")
    assert is_travel_plan(f"好的：{TEXT}")
    # the first fence decides, whatever its language
    assert not is_travel_plan(f"```python\nprint(1)\n```\n{TEXT}")
    assert not is_travel_plan('{"days": [{"city_segments": []}]}')


def test_agent_table():
    table = {"User1": {"global_constraints": {"avg_budget": 3000}},
             "User2": {"city_specific_preferences": {}}}
    assert parse_agent_table("更新：```json\n" + json.dumps(table) + "\n```") == table
    assert parse_agent_table(json.dumps(table)) == table
    assert parse_agent_table(TEXT) is None  # a plan is not a table
    assert parse_agent_table('{"User1": {"role": "x"}}') is None
    assert parse_agent_table("{}") is None


def test_validate_plan_reports_paths(plan):
    assert validate_plan(plan, ["User1", "User2"]) == []
    broken = json.loads(json.dumps(plan))
    day1 = broken["days"][0]["city_segments"]
    del day1[0]["avg_cost"]
    day1[1]["activities"][1]["participants"] = ["User3"]
    day1[1]["activities"][3]["start_time"] = "3pm"
    day1[1]["activities"].append("lunch")
    broken["days"][1]["date"] = "9月2日"
    errors = [str(e) for e in validate_plan(broken, ["User1", "User2"])]
    assert errors == [
        "days[0].city_segments[0].avg_cost: missing (a per-person number is required)",
        ("days[0].city_segments[1].activities[1].participants: unknown member(s) ['User3']; "
         'use member names or ["All"]'),
        "days[0].city_segments[1].activities[3].start_time: expected HH:MM, got '3pm'",
        "days[0].city_segments[1].activities[7]: expected an object, got str",
        "days[1].date: expected YYYY-MM-DD, got '9月2日'",
    ]
    with pytest.raises(PlanShapeError, match="5 shape error"):
        require_valid_plan(broken, ["User1", "User2"])
    assert validate_plan([])[0].path == "plan"
    assert str(validate_plan({"days": []})[0]) == "days: expected a non-empty list of days"
