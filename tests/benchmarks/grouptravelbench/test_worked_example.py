"""The conftest group, POI table and plan, every metric derived by hand.

The plan (users User1, User2; city 西安市):
day 1 (2025-09-01, a Monday)
  S0 intercity 北京市->西安市 高铁 08:00-12:30, 500
  S1 block 西安市:
    A0 intracity 西安北站->老孙家羊肉泡馍 12:40-13:10 (everyone)
    A1 food 老孙家羊肉泡馍 13:10-14:00 ["All"], 60
    A2 intracity 老孙家羊肉泡馍->秦始皇兵马俑博物馆 14:00-15:00 (everyone)
    A3 attraction 秦始皇兵马俑博物馆 15:00-18:00 ["User1"]
    A4 attraction 大唐芙蓉园 15:30-17:30 ["User2"]
    A5 food 小龙坎火锅 18:30-19:30 (everyone), 100
    A6 hotel 西安W酒店 21:00-08:00, 800
day 2 (2025-09-02, a Tuesday)
  S0 block 西安市: B0 attraction 大雁塔 09:00-11:00, B1 attraction 陕西历史博物馆 10:30-12:00,
                  B2 food 蜀香川菜馆 12:00-13:00, 80 (all everyone)
  S1 intercity 西安市->北京市 飞机 15:00-17:00, 900

Invalid split: B0 and B1 overlap (10:30 < 11:00) for both users -> both excluded from
attraction/food scoring. Touching ranges (A0 ends 13:10, A1 starts 13:10) do not overlap.
Split: A3 {User1} and A4 {User2} overlap and are disjoint -> 2 teams -> penalty 1.
"""

from __future__ import annotations

import pytest

from evaluator.benchmarks.grouptravelbench.completeness import preference_completeness
from evaluator.benchmarks.grouptravelbench.planview import invalid_split_keys, split_events
from evaluator.benchmarks.grouptravelbench.utility import group_fairness, group_utility
from evaluator.benchmarks.grouptravelbench.validity import plan_validity

from .conftest import USERS


def test_invalid_split_and_split_penalty(plan):
    assert invalid_split_keys(plan, USERS) == {(2, "大雁塔", "09:00"), (2, "陕西历史博物馆", "10:30")}
    events = split_events(plan)
    assert [(e["day"], e["teams"], e["penalty"]) for e in events] == [(1, 2, 1)]


def test_group_utility_by_hand(plan, group, poi):
    # User1
    #  attractions: joins A3 only (B0/B1 invalid): must_visit 兵马俑 in 秦始皇兵马俑博物馆 +2;
    #    reject_visit 大雁塔 not scheduled for him (B0 excluded) 0; A3 is strong-matched so no
    #    category points                                                        = +2
    #  food: A1 name has must_eat 羊肉泡馍 +2; A5 name has prefer_eat 火锅 +1; B2 name has
    #    reject_eat 川菜 -2                                                       = +1
    #  transport: 高铁 in must +2; 飞机: not must/reject, not prefer, in avoid -1   = +1
    #  hotel: 西安W酒店 is 豪华型: not prefer, in avoid -1                          = -1
    #  intensity (max 1 POI/day, 6 h): day 1: 1 attraction, 180+30+60 min = 4.5 h ok;
    #    day 2: 2 attractions (invalid ones count here) > 1 -> -2; 3.5 h ok       = -2
    #  budget 3000: 500 + 900 + 800 + food 60 + 100 + 80 = 2440 <= 3000           = 0
    #  total 2 + 1 + 1 - 1 - 2 + 0 = 1
    # User2
    #  attractions: A4 大唐芙蓉园: must_visit 大雁塔 not joined (B0 excluded) 0; category 公园 (the
    #    name lacks "公园") is positive +1                                        = +1
    #  food: A1 西北菜: nothing; A5 name has avoid_eat 火锅 -1; B2 name has prefer_eat 川菜 +1 = 0
    #  transport: 高铁 in reject -2; 飞机 in prefer +1                              = -1
    #  hotel: 豪华型 in prefer +1                                                   = +1
    #  intensity (max 3 POI/day, no hour cap): 1 and 2 attractions                 = 0
    #  budget 2000: 2440 > 2000 -> -2                                              = -2
    #  total 1 + 0 - 1 + 1 + 0 - 2 = -1
    # GU = (1 + (-1) - 1) / 2 = -0.5
    result = group_utility(plan, group, USERS, poi)
    assert result.per_user["User1"].breakdown == {
        "attractions": 2, "food": 1, "transport": 1, "hotel": -1, "intensity": -2, "budget": 0}
    assert result.per_user["User2"].breakdown == {
        "attractions": 1, "food": 0, "transport": -1, "hotel": 1, "intensity": 0, "budget": -2}
    assert (result.total_before_penalty, result.split_penalty, result.total) == (0, 1, -1)
    assert result.num_users == 2 and result.per_user_average == -0.5
    items = {(i.field, i.item, i.score) for i in result.per_user["User1"].items}
    assert ("must_visit", "兵马俑", 2) in items and ("reject_eat", "川菜", -2) in items
    budget = [i for i in result.per_user["User2"].items if i.dimension == "budget"]
    assert budget[0].actual == 2440 and budget[0].limit == 2000


def test_group_fairness_by_hand(plan, group, poi):
    # users score 1 and -1 before the split penalty: max > 0 and min < 0 -> 0
    result = group_fairness(plan, group, USERS, poi)
    assert result.per_user == {"User1": 1, "User2": -1}
    assert (result.max_score, result.min_score, result.fairness) == (1, -1, 0.0)


def test_without_poi_table_only_name_matches_score(plan, group):
    # With no POI table every restaurant is unknown (food 0) and no category/hotel points:
    # User1: attractions +2 (must_visit is a name match), transport +1, intensity -2 -> 1
    # User2: attractions 0, transport -1, budget -2 -> -3;  GU = (1 - 3 - 1) / 2 = -1.5
    result = group_utility(plan, group, USERS)
    assert {u: r.total for u, r in result.per_user.items()} == {"User1": 1, "User2": -3}
    assert result.per_user_average == -1.5


def test_plan_validity_by_hand(plan, poi):
    # 1 intercity: the city never changes without an intercity segment               0
    # 2 hotel: day 1 ends with the hotel; the last day needs none                      0
    # 3 times: all parse; activities end after they start; intercity may not matter   0
    # 4 overlap: B0/B1 for User1 and for User2                                          2
    # 5 opening hours: A3 15:00-18:00 vs 08:30-17:00 (Monday) -> outside; 大唐芙蓉园 is
    #   always open; 大雁塔 09:00-11:00 inside 08:00-17:00; 陕西历史博物馆 is closed on
    #   Mondays only and day 2 is a Tuesday, 10:30-12:00 inside 09:00-17:30             1
    # 6 continuity: day 1 both arrive at the hub, A0 is intracity (ok) -> 老孙家; A1 ok;
    #   A2 from 老孙家 ok -> 秦始皇兵马俑博物馆; A3 User1 ok; A4 User2 at 兵马俑 != 大唐芙蓉园 (1);
    #   A5 both elsewhere (2); A6 both at 小龙坎火锅 (2); day 2 positions reset: B0 ok,
    #   B1 (2), B2 (2)                                                                  9
    # 7 timeline: day 1 monotonic for both (the hotel starts 21:00 after 19:30); day 2
    #   B1 starts 10:30 before B0 ends 11:00, for each user                             2
    # 8 costs present; 9 participants valid                                            0
    result = plan_validity(plan, USERS, poi)
    assert result.issue_counts == {"time_overlap": 2, "outside_opening_hours": 1,
                                   "missing_intracity_transport": 9,
                                   "timeline_order_violation": 2}
    assert result.total_issues == 14 and not result.valid
    users = [i.user for i in result.issues if i.type == "missing_intracity_transport"]
    assert users == ["User2", "User1", "User2", "User1", "User2",
                     "User1", "User2", "User1", "User2"]


AGENT_TABLE = {
    "User1": {
        "global_constraints": {
            "avg_budget": 3000,
            "transport": {"must": ["高铁"], "prefer": ["火车"], "avoid": []},
            "intensity": {"max_poi_per_day": "1"},
            "hotel_preference": {"prefer": ["舒适型", "经济型"]},
        },
        "city_specific_preferences": {
            "西安市": {"attractions": {"must_visit": ["兵马俑", "华清宫"], "category_pref": "博物馆"},
                    "food": {"must_eat": ["羊肉泡馍"], "prefer_eat": ["火锅"]}},
            "成都市": {"food": {"must_eat": ["火锅"]}},
        },
    },
}


def test_preference_completeness_by_hand(group):
    # User1 (reference row: collected/possible; precision contribution correct/agent items):
    #   avg_budget 3000 == 3000          1/1   scalar given: 1/1
    #   transport.must [高铁]             1/1   1/1
    #   transport.prefer: reference empty -> skipped (the spurious 火车 costs nothing)
    #   transport.avoid [飞机] vs []      0/1   0/0
    #   max_poi_per_day 1 vs "1"          0/1   scalar given: 0/1 (a string never equals 1)
    #   max_active_hours 6 vs omitted=0   0/1   scalar given (0 is not null): 0/1
    #   hotel.prefer [舒适型]              1/1   precision 1/2 -> int(0.5 x 2) = 1 of 2
    #   hotel.avoid [豪华型] vs missing    0/1   0/0
    #   must_visit [兵马俑]                1/1   int(0.5 x 2) = 1 of 2
    #   reject_visit, category positive, negative: missing / not an object  0/1 each
    #   must_eat 1/1 (1/1), prefer_eat 1/1 (1/1), reject_eat 0/1; avoid_eat ref empty: skip
    #   成都市 is not in the reference: ignored
    #   collected 6, possible 14; precision 6/10; F1 = 2(3/5)(3/7)/(3/5 + 3/7) = 1/2
    # User2 (no agent entry; omitted scalars read as 0): rows budget, transport.prefer,
    #   transport.reject, max_poi_per_day, hotel.prefer, must_visit, positive, prefer_eat,
    #   avoid_eat (max_active_hours 0 and empty lists skipped): 0/9; precision 0/2; F1 0
    # pooled: recall 6/23, precision 6/12, F1 = 2(1/2)(6/23)/(1/2 + 6/23) = 12/35
    result = preference_completeness(AGENT_TABLE, group)
    one, two = result.per_user["User1"], result.per_user["User2"]
    assert (one.collected, one.possible) == (6, 14)
    assert one.precision == pytest.approx(0.6) and one.f1 == pytest.approx(0.5)
    assert (two.collected, two.possible, two.precision, two.f1) == (0, 9, 0.0, 0.0)
    assert (result.collected, result.possible) == (6, 23)
    assert result.recall == pytest.approx(6 / 23)
    assert result.precision == pytest.approx(0.5)
    assert result.f1 == pytest.approx(12 / 35)
    rows = {row.path: row for row in one.fields}
    assert "global_constraints.transport.prefer" not in rows
    assert rows["city_specific_preferences.西安市.attractions.must_visit"].spurious == ["华清宫"]
    assert not any("成都市" in path for path in rows)
