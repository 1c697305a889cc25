"""Plan validity, one check at a time, with the reference's edge cases."""

from __future__ import annotations

from evaluator.benchmarks.grouptravelbench.poi import PoiTable
from evaluator.benchmarks.grouptravelbench.validity import plan_validity, same_city

USERS = ["User1", "User2"]


def _block(city, *acts):
    return {"type": "city_block", "city": city, "activities": list(acts)}


def _plan(*days):
    return {"days": [{"day": i + 1, "city_segments": list(segs)} for i, segs in enumerate(days)]}


def _counts(plan, poi=None):
    return plan_validity(plan, USERS, poi).issue_counts


def test_city_names_match_without_suffix():
    assert same_city("合肥", "合肥市") and same_city("恩施土家族苗族自治州", "恩施土家族苗族")
    assert not same_city("市", "") and not same_city("北京市", "上海市")


def test_intercity_within_and_across_days(act, intercity):
    food = act("food", "店", "12:00", "13:00", cost=1)
    plan = _plan([_block("西安市", food), _block("咸阳", food)],  # switch without transport
                 [_block("北京市", food)])  # a new day in another city without transport
    assert _counts(plan)["missing_intercity_transport"] == 2
    fine = _plan([intercity("北京", "西安市", "高铁", "08:00", "10:00", 1), _block("西安", food)],
                 [intercity("西安", "北京", "飞机", "08:00", "10:00", 1), _block("北京市", food)])
    assert "missing_intercity_transport" not in _counts(fine)


def test_hotels(act):
    hotel = act("hotel", "酒店", "21:00", "08:00", cost=1)
    food = act("food", "店", "18:00", "19:00", cost=1)
    plan = _plan([_block("A", hotel, food)],  # hotel not last
                 [_block("A", food)],  # no hotel
                 [_block("A")],  # empty last block
                 [{"type": "intercity_transport", "to_city": "A", "start_time": "08:00",
                   "end_time": "09:00", "avg_cost": 1}],  # no block at all
                 [_block("A", food)])  # the last day needs no hotel
    counts = _counts(plan)
    assert counts["hotel_not_last_activity"] == 1 and counts["missing_hotel"] == 3
    assert "missing_hotel" not in _counts(_plan([_block("A", food)]))  # one-day plan


def test_times(act, intercity):
    plan = _plan([
        intercity("A", "B", "飞机", "21:20", "00:10", 1),  # overnight intercity: fine
        intercity("B", "C", "飞机", "9点", "10:00", 1),  # unparseable
        _block("C", act("food", "店", "12:00", "12:00", cost=1),  # equal times fail
               act("attraction", "塔", "25:00", "26:00"),
               act("hotel", "酒店", "晚上", "早上", cost=1)),  # hotels are not checked
    ])
    counts = _counts(plan)
    assert counts["invalid_time_format"] == 2 and counts["invalid_time_range"] == 1


def test_overlap_one_issue_per_user_and_pair(act):
    plan = _plan([_block("A", act("attraction", "塔", "09:00", "11:00"),
                         act("attraction", "园", "10:00", "12:00"),
                         act("attraction", "馆", "10:30", "11:30", ["User1"]),
                         act("hotel", "酒店", "09:00", "12:00", cost=1))])
    # everyone: (塔, 园); User1 also (塔, 馆) and (园, 馆) -> User1 3, User2 1
    issues = [i for i in plan_validity(plan, USERS).issues if i.type == "time_overlap"]
    assert sorted(i.user for i in issues) == ["User1", "User1", "User1", "User2"]


def test_opening_hours_need_a_date_and_known_data(act):
    poi = PoiTable({"A": [
        {"name": "博物馆", "poi_type": "attractions", "custom_category": "博物馆",
         "opening_hours": {"rules": [{"weekdays": [2, 3, 4, 5, 6, 7],
                                      "time_windows": [{"open": "09:00", "close": "17:00"}]}]}},
        {"name": "夜市", "poi_type": "attractions", "custom_category": "公园",
         "opening_hours": {"rules": [{"date_range": {"start": "11-01", "end": "03-31"},
                                      "time_windows": [{"open": "18:00", "close": "23:00"}]}]}},
    ]})
    monday = {"day": 1, "date": "2025-09-01", "city_segments": [
        _block("A", act("attraction", "博物馆", "10:00", "11:00"),  # closed on Mondays
               act("attraction", "夜市", "19:00", "20:00"),  # no rule covers September
               act("attraction", "不存在的景点", "03:00", "04:00"))]}  # unknown: skipped
    tuesday = {"day": 2, "date": "2025-09-02", "city_segments": [
        _block("A", act("attraction", "博物馆", "16:00", "17:30"))]}  # runs past closing
    undated = {"day": 3, "city_segments": [_block("A", act("attraction", "博物馆", "1", "2"))]}
    result = plan_validity({"days": [monday, tuesday, undated]}, USERS, poi)
    hours = [i for i in result.issues if i.type == "outside_opening_hours"]
    assert [i.day for i in hours] == [1, 2]
    assert "closed that day" in hours[0].message and "09:00-17:00" in hours[1].message


def test_continuity_resets_daily_not_per_block(act, intercity):
    plan = _plan([
        _block("A", act("attraction", "塔", "09:00", "10:00")),
        _block("A", act("attraction", "园", "11:00", "12:00")),  # moved across blocks: issue
        intercity("A", "B", "高铁", "13:00", "14:00", 1),
        _block("B", act("rest", "", "14:00", "14:30"),  # rest neither checks nor moves
               act("food", "店", "15:00", "16:00", cost=1),  # from the hub: needs transport
               act("intracity_transport", ("别处", "酒店"), "16:00", "16:30"),  # wrong origin
               act("hotel", "酒店", "21:00", "08:00", cost=1)),
    ])
    counts = _counts(plan)
    assert counts["missing_intracity_transport"] == 4  # (园 + from hub) x 2 users
    assert counts["intracity_transport_origin_mismatch"] == 2


def test_timeline_hotels_and_overnight_do_not_move_the_clock(act, intercity):
    plan = _plan([
        intercity("A", "B", "飞机", "22:00", "01:00", 1),  # overnight: the clock stays unset
        _block("B", act("food", "店", "08:00", "09:00", cost=1),
               act("hotel", "酒店", "08:30", "20:00", cost=1),  # starts before 09:00: issue
               act("attraction", "塔", "09:30", "10:00")),  # the hotel did not move the clock
    ])
    assert _counts(plan)["timeline_order_violation"] == 2


def test_costs_and_participants(act, intercity):
    seg = intercity("A", "B", "飞机", "08:00", "09:00", None)
    plan = _plan([seg, _block("B",
                              act("food", "店", "10:00", "11:00", ["All", "User1"], cost=0),
                              act("hotel", "酒店", "21:00", "08:00", []),
                              act("attraction", "塔", "12:00", "13:00", []),
                              act("attraction", "园", "14:00", "15:00", "User1"),
                              act("attraction", "馆", "16:00", "17:00", ["User3", "Bob"]))])
    result = plan_validity(plan, USERS)
    # intercity without cost and a hotel without cost; cost 0 is fine
    assert result.issue_counts["missing_avg_cost"] == 2
    # [] (hotel exempt) 1, a string 1, two unknown names 2; ["All", "User1"] passes
    assert result.issue_counts["invalid_participants"] == 4
