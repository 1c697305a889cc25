"""Utility and fairness edge cases beyond the worked example, each derived in a comment."""

from __future__ import annotations

import pytest

from evaluator.benchmarks.grouptravelbench.poi import PoiTable
from evaluator.benchmarks.grouptravelbench.utility import (
    fairness_of,
    group_fairness,
    group_utility,
)

USERS = ["User1", "User2"]


def _pref(city=None, **global_constraints):
    return {"preference": {"global_constraints": global_constraints,
                           "city_specific_preferences": city or {}}}


def _plan(*segments):
    return {"days": [{"day": 1, "city_segments": list(segments)}]}


@pytest.mark.parametrize(("scores", "fairness"), [
    ([], 100.0), ([3, 3], 100.0), ([-2, -2], 100.0), ([1, 4], 25.0), ([0, 4], 0.0),
    ([4, -1], 0.0), ([-1, -4], 25.0), ([0, -4], 0.0), ([2, 3, 6], 33.33),
])
def test_fairness_formula(scores, fairness):
    assert fairness_of(scores) == fairness


def test_transport_both_strong_tiers_apply(intercity):
    # 飞机 is in must (+2) and reject (-2): both apply; prefer is then ignored
    group = {"User1": _pref(transport={"must": ["飞机"], "reject": ["飞机"], "prefer": ["飞机"]})}
    plan = _plan(intercity("A", "B", "飞机", "08:00", "09:00", 0),
                 intercity("B", "A", "", "10:00", "11:00", 0))  # no mode: not scored
    items = group_utility(plan, group, ["User1"]).per_user["User1"].items
    assert [(i.field, i.score) for i in items] == [("transport.must", 2), ("transport.reject", -2)]


def test_food_category_rules(act):
    poi = PoiTable({"C": [{"name": "湘菜馆", "poi_type": "food", "custom_category": "湘菜"},
                          {"name": "家常小馆", "poi_type": "food", "custom_category": "湘菜"},
                          {"name": "米粉店", "poi_type": "food", "custom_category": "米粉"}]})
    food = {"must_eat": ["湘菜"], "reject_eat": ["湘菜"], "prefer_eat": ["中餐"], "avoid_eat": []}
    group = {"User1": _pref({"C": {"food": food}})}
    plan = _plan({"type": "city_block", "city": "C", "activities": [
        act("food", "湘菜馆", "08:00", "09:00", cost=1),  # name has must_eat 湘菜: +2 only
        act("food", "家常小馆", "10:00", "11:00", cost=1),  # category 湘菜: must +2 and reject -2
        act("food", "米粉店", "12:00", "13:00", cost=1),  # 米粉 is excluded -> reads 中餐: prefer +1
        act("food", "编造的餐厅", "14:00", "15:00", cost=1),  # unknown to the POI table: nothing
    ]})
    items = group_utility(plan, group, ["User1"], poi).per_user["User1"].items
    assert [(i.location, i.field, i.score) for i in items] == [
        ("湘菜馆", "must_eat", 2), ("家常小馆", "must_eat", 2), ("家常小馆", "reject_eat", -2),
        ("米粉店", "prefer_eat", 1)]


def test_attraction_category_passes_are_independent(act):
    poi = PoiTable({"C": [{"name": "古寺公园", "poi_type": "attractions", "custom_category": "寺庙"}]})
    attractions = {"must_visit": [], "reject_visit": [],
                   "category_pref": {"positive": ["公园"], "negative": ["寺庙"]}}
    group = {"User1": _pref({"C": {"attractions": attractions}})}
    plan = _plan({"type": "city_block", "city": "C", "activities": [
        act("attraction", "古寺公园", "08:00", "09:00"),
        act("attraction", "古寺公园", "10:00", "11:00")]})  # each visit counts again
    # each visit: +1 (name has 公园) and -1 (category 寺庙) -> 0 per visit, 4 items
    result = group_utility(plan, group, ["User1"], poi).per_user["User1"]
    assert [i.score for i in result.items] == [1, 1, -1, -1] and result.total == 0


def test_bare_string_compromise_values_match_by_character(act):
    # an accepted compromise `[...must_visit : 兵马俑]` stores the string "兵马俑"; the
    # reference iterates it character by character: 3 characters found -> +2 each
    group = {"User1": _pref({"西安市": {"attractions": {"must_visit": "兵马俑"}}})}
    plan = _plan({"type": "city_block", "city": "西安市", "activities": [
        act("attraction", "兵马俑", "08:00", "09:00")]})
    assert group_utility(plan, group, ["User1"]).per_user["User1"].total == 6


def test_city_names_must_match_exactly(act):
    group = {"User1": _pref({"西安": {"attractions": {"must_visit": ["兵马俑"]}}})}
    plan = _plan({"type": "city_block", "city": "西安市", "activities": [
        act("attraction", "兵马俑", "08:00", "09:00")]})
    assert group_utility(plan, group, ["User1"]).per_user["User1"].total == 0


def test_intensity_hours_and_budget(act, intercity):
    group = {"User1": _pref(avg_budget=100, intensity={"max_active_hours": 2})}
    plan = _plan(intercity("A", "B", "高铁", "06:00", "07:00", "60"),  # a numeric string adds
                 {"type": "city_block", "city": "B", "activities": [
                     act("attraction", "塔", "08:00", "09:30"),
                     act("intracity_transport", ("塔", "店"), "09:30", "10:00"),
                     act("attraction", "园", "10:00", "10:15", ["User2"]),  # not User1's
                     act("food", "店", "12:00", "13:00", ["User2"], cost=500),  # not User1's
                     act("hotel", "酒店", "21:00", "08:00", cost="about 50")]})  # unreadable
    # hours: 90 + 30 = 120 min = 2 h, not > 2: nothing; budget: 60 <= 100: nothing
    assert group_utility(plan, group, USERS).per_user["User1"].total == 0
    group["User1"]["preference"]["global_constraints"]["avg_budget"] = 59
    group["User1"]["preference"]["global_constraints"]["intensity"]["max_active_hours"] = 1.5
    assert group_utility(plan, group, USERS).per_user["User1"].breakdown["budget"] == -2
    assert group_utility(plan, group, USERS).per_user["User1"].breakdown["intensity"] == -2


def test_utility_skips_members_without_preferences_fairness_does_not(intercity):
    group = {"User1": _pref(transport={"must": ["高铁"]}), "User2": {"role": "朋友"}}
    plan = _plan(intercity("A", "B", "高铁", "08:00", "09:00", 1))
    gu = group_utility(plan, group, USERS)
    assert list(gu.per_user) == ["User1"] and gu.num_users == 1 and gu.per_user_average == 2
    gf = group_fairness(plan, group, USERS)
    assert gf.per_user == {"User1": 2, "User2": 0} and gf.fairness == 0.0
    # a bare preference object (no wrapper) is scored too
    bare = {"User1": group["User1"]["preference"]}
    assert group_utility(plan, bare, ["User1"]).per_user_average == 2


def test_overlapping_teams_are_not_a_split(act):
    plan = _plan({"type": "city_block", "city": "C", "activities": [
        act("attraction", "塔", "08:00", "10:00", ["User1", "User2"]),
        act("attraction", "园", "09:00", "11:00", ["User2"])]})
    result = group_utility(plan, {"User1": _pref(), "User2": _pref()}, USERS)
    assert result.split_penalty == 0  # User2 is in both: an invalid split, not a penalty
