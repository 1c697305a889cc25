"""Preference completeness edge cases: truncation, explicit null, odd agent values."""

from __future__ import annotations

import pytest

from evaluator.benchmarks.grouptravelbench.completeness import (
    compare_user,
    preference_completeness,
)


def _ref(**global_constraints):
    return {"global_constraints": global_constraints, "city_specific_preferences": {}}


def test_precision_truncates_like_the_reference():
    # 1 correct item among 49: precision 1/49, and int((1/49) * 49) == int(0.99999...) == 0
    ref = _ref(transport={"prefer": ["高铁"]})
    agent = _ref(transport={"prefer": ["高铁"] + [f"x{i}" for i in range(48)]})
    user = compare_user(agent, ref)
    assert (user.collected, user.possible, user.recall) == (1, 1, 1.0)
    assert user.precision == 0.0 and user.f1 == 0.0
    # 15 correct among 22 truncates as well: int((15/22) * 22) == 14
    ref = _ref(transport={"prefer": [f"y{i}" for i in range(15)]})
    agent = _ref(transport={"prefer": [f"y{i}" for i in range(15)] + [f"z{i}" for i in range(7)]})
    assert compare_user(agent, ref).precision == pytest.approx(14 / 22)


def test_explicit_null_scalar_stays_out_of_precision():
    ref = _ref(avg_budget=3000, intensity={"max_poi_per_day": 3})
    null = compare_user(_ref(avg_budget=None, intensity={"max_poi_per_day": 3}), ref)
    omitted = compare_user(_ref(intensity={"max_poi_per_day": 3}), ref)
    assert (null.collected, null.possible, null.precision) == (1, 2, 1.0)  # 1 of 1 counted
    assert (omitted.collected, omitted.possible, omitted.precision) == (1, 2, 0.5)  # 0 counts


def test_bool_and_float_equality_follow_python():
    ref = _ref(avg_budget=1, intensity={"max_active_hours": 8})
    user = compare_user(_ref(avg_budget=True, intensity={"max_active_hours": 8.0}), ref)
    assert user.collected == 2


def test_string_agent_list_matches_by_substring():
    # an agent that writes "飞机" instead of ["飞机"]: membership is substring, precision counts
    # the string's characters (none of which is a reference item)
    ref = _ref(transport={"must": ["飞机"]})
    user = compare_user(_ref(transport={"must": "飞机"}), ref)
    row = user.fields[0]
    assert (row.collected, row.agent_total, row.precision) == (1, 2, 0.0)


def test_missing_reference_data_is_perfect_recall():
    result = preference_completeness({}, {"User1": {"role": "x"}})
    assert (result.possible, result.recall, result.precision) == (0, 1.0, 1.0)
    assert result.f1 == 1.0


def test_non_object_agent_values_are_empty():
    ref = {"global_constraints": {}, "city_specific_preferences": {
        "A": {"attractions": {"must_visit": ["塔"]}, "food": {"must_eat": ["面"]}}}}
    agent = {"global_constraints": "不知道", "city_specific_preferences": {
        "A": {"attractions": ["塔"], "food": None}}}
    user = compare_user(agent, ref)
    assert (user.collected, user.possible) == (0, 2)
    result = preference_completeness({"User1": "garbage"}, {"User1": {"preference": ref}})
    assert result.possible == 2 and result.collected == 0
