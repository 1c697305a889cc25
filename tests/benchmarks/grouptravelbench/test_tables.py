"""The typed preference model, dotted paths, and the POI table's lookups."""

from __future__ import annotations

import json

import pytest

from evaluator.benchmarks.grouptravelbench.poi import PoiTable, within_opening_hours
from evaluator.benchmarks.grouptravelbench.preferences import (
    CITY_FIELDS,
    GLOBAL_FIELDS,
    PreferenceTableError,
    Tier,
    compared_fields,
    get_path,
    leaf_paths,
    parse_group,
    parse_preference,
    set_path,
)


def test_parse_group(group):
    members = parse_group(group)
    assert list(members) == ["User1", "User2"]
    one = members["User1"]
    assert one.compromisable and one.role == "哥哥"
    assert one.preference.global_constraints.transport.must == ["高铁"]
    assert one.preference.city_specific_preferences["西安市"].food.reject_eat == ["川菜"]


def test_parse_group_names_the_bad_field(group):
    group["User2"]["preference"]["global_constraints"]["transport"]["must"] = "高铁"
    with pytest.raises(PreferenceTableError, match=r"User2.*transport\.must"):
        parse_group(group)
    group["User2"]["preference"]["global_constraints"]["transport"]["must"] = []
    group["User2"]["preference"]["global_constraints"]["budget"] = 1
    with pytest.raises(PreferenceTableError, match="budget"):
        parse_group(group)
    with pytest.raises(PreferenceTableError):
        parse_group({})
    with pytest.raises(PreferenceTableError, match="where"):
        parse_preference([], "where")


def test_tiers():
    assert [t.weight for t in Tier] == [2, -2, 1, -1]
    assert {spec.tier for spec in GLOBAL_FIELDS + CITY_FIELDS if spec.kind == "list"} == set(Tier)


def test_paths(group):
    pref = group["User1"]["preference"]
    assert get_path(pref, "global_constraints.intensity.max_poi_per_day") == 1
    assert get_path(pref, "global_constraints.nope.x", "d") == "d"
    assert set_path(pref, "global_constraints.avg_budget", 2500)
    assert not set_path(pref, "global_constraints.nope.x", 1)
    paths = dict(leaf_paths(pref))
    assert paths["city_specific_preferences.西安市.food.must_eat"] == ["羊肉泡馍"]
    assert len(paths) == 9 + 8
    compared = [(spec.kind, path) for spec, path, _ in compared_fields(pref)]
    assert len(compared) == 9 + 8
    assert compared[-1] == ("list", "city_specific_preferences.西安市.food.reject_eat")


def test_poi_lookup_and_category_rules(tmp_path):
    table = {"C": [
        {"name": "大唐不夜城步行街", "poi_type": "attractions", "custom_category": "旅游景点"},
        {"name": "大唐不夜城", "poi_type": "attractions", "custom_category": "步行街"},
        {"name": "如家酒店", "poi_type": "hotels", "custom_category": "连锁"},
        {"name": "空白", "poi_type": "food", "custom_category": ""},
    ]}
    path = tmp_path / "all_poi_by_city.json"
    path.write_text(json.dumps(table, ensure_ascii=False), encoding="utf-8")
    poi = PoiTable.from_file(path)
    assert len(poi) == 4
    assert poi.category("大唐不夜城", "C") == "步行街"  # exact name first
    assert poi.category("不夜城步行", "C") == "公园"  # best substring ratio; excluded -> 公园
    assert poi.category("如家", "C") == "商务酒店"  # not a preference hotel category
    assert poi.category("空白", "C") == "中餐"  # blank category: the type's fallback
    assert poi.category("大唐不夜城", "西安市") is None and poi.category(None, "C") is None
    with pytest.raises(FileNotFoundError, match="POI table not found"):
        PoiTable.from_file(tmp_path / "missing.json")


def test_opening_windows():
    hours = {"rules": [
        {"date_range": {"start": "11-01", "end": "03-31"}, "weekdays": [1, 2, 3, 4, 5],
         "time_windows": [{"open": "10:00", "close": "16:00"}]},
        {"time_windows": [{"open": "08:00", "close": "12:00"}, {"open": "14:00", "close": "18:00"}]},
    ]}
    poi = PoiTable({"C": [{"name": "馆", "opening_hours": hours}]})
    # a Saturday in winter: the first rule covers the date but not the weekday -> closed,
    # even though the next rule would open it (the first rule covering the date decides)
    assert poi.opening_windows("馆", "C", "2025-01-04") == []
    assert poi.opening_windows("馆", "C", "2025-07-05") == [{"open": "08:00", "close": "12:00"},
                                                           {"open": "14:00", "close": "18:00"}]
    assert poi.opening_windows("馆", "C", "2025-01-06") == [{"open": "10:00", "close": "16:00"}]
    assert poi.opening_windows("馆", "C", "bad") is None
    assert within_opening_hours(poi, "馆", "C", "2025-07-01", "14:30", "18:00") is True
    assert within_opening_hours(poi, "馆", "C", "2025-07-01", "11:00", "15:00") is False
    assert within_opening_hours(poi, "别的", "C", "2025-07-01", "11:00", "15:00") is None
