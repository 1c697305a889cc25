"""Fixtures: a small hand-made group (two users, one city), its POI table and a two-day
plan whose metrics test_worked_example.py derives by hand; the real task sample, if present."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from evaluator.benchmarks.grouptravelbench.poi import PoiTable

GROUP_DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "grouptravelbench"
SAMPLE = GROUP_DATA / "test_sample.jsonl"


def _prefs(budget, transport, intensity, hotel, attractions, food):
    return {
        "global_constraints": {
            "avg_budget": budget,
            "transport": dict(zip(("must", "prefer", "avoid", "reject"), transport, strict=True)),
            "intensity": dict(zip(("max_poi_per_day", "max_active_hours"), intensity,
                                  strict=True)),
            "hotel_preference": dict(zip(("prefer", "avoid"), hotel, strict=True)),
        },
        "city_specific_preferences": {"西安市": {
            "attractions": {"must_visit": attractions[0], "reject_visit": attractions[1],
                            "category_pref": {"positive": attractions[2],
                                              "negative": attractions[3]}},
            "food": dict(zip(("must_eat", "prefer_eat", "avoid_eat", "reject_eat"), food,
                             strict=True)),
        }},
    }


GROUP = {
    "User1": {"role": "哥哥", "compromisable": True, "preference": _prefs(
        3000, (["高铁"], [], ["飞机"], []), (1, 6), (["舒适型"], ["豪华型"]),
        (["兵马俑"], ["大雁塔"], ["博物馆"], ["寺庙"]), (["羊肉泡馍"], ["火锅"], [], ["川菜"]))},
    "User2": {"role": "妹妹", "compromisable": False, "preference": _prefs(
        2000, ([], ["飞机"], [], ["高铁"]), (3, 0), (["豪华型"], []),
        (["大雁塔"], [], ["公园"], []), ([], ["川菜"], ["火锅"], []))},
}
USERS = ["User1", "User2"]


def _poi(name, kind, category, hours=None):
    return {"name": name, "poi_type": kind, "custom_category": category, "opening_hours": hours}


EVERY_DAY = [1, 2, 3, 4, 5, 6, 7]
POIS = {"西安市": [
    _poi("秦始皇兵马俑博物馆", "attractions", "博物馆",
         {"rules": [{"weekdays": EVERY_DAY, "time_windows": [{"open": "08:30", "close": "17:00"}]}]}),
    _poi("大唐芙蓉园", "attractions", "公园", {"always_open": True}),
    _poi("大雁塔", "attractions", "寺庙",
         {"rules": [{"weekdays": EVERY_DAY, "time_windows": [{"open": "08:00", "close": "17:00"}]}]}),
    _poi("陕西历史博物馆", "attractions", "博物馆",
         {"rules": [{"weekdays": [2, 3, 4, 5, 6, 7],
                     "time_windows": [{"open": "09:00", "close": "17:30"}]}]}),
    _poi("老孙家羊肉泡馍", "food", "西北菜"),
    _poi("小龙坎火锅", "food", "火锅"),
    _poi("蜀香川菜馆", "food", "川菜"),
    _poi("西安W酒店", "hotels", "豪华型"),
]}


def _act(kind, where, start, end, who=None, cost=None, **extra):
    act = {"type": kind, "start_time": start, "end_time": end, **extra}
    if kind == "intracity_transport":
        act["from"], act["to"] = where
    else:
        act["location"] = where
    if who is not None:
        act["participants"] = who
    if cost is not None:
        act["avg_cost"] = cost
    return act


def _intercity(src, dst, mode, start, end, cost):
    return {"type": "intercity_transport", "from_city": src, "to_city": dst, "from": src[:2],
            "to": dst[:2], "transport_mode": mode, "start_time": start, "end_time": end,
            "avg_cost": cost}


PLAN = {"days": [
    {"day": 1, "date": "2025-09-01", "city_segments": [
        _intercity("北京市", "西安市", "高铁", "08:00", "12:30", 500),
        {"type": "city_block", "city": "西安市", "activities": [
            _act("intracity_transport", ("西安北站", "老孙家羊肉泡馍"), "12:40", "13:10"),
            _act("food", "老孙家羊肉泡馍", "13:10", "14:00", ["All"], 60),
            _act("intracity_transport", ("老孙家羊肉泡馍", "秦始皇兵马俑博物馆"), "14:00", "15:00"),
            _act("attraction", "秦始皇兵马俑博物馆", "15:00", "18:00", ["User1"]),
            _act("attraction", "大唐芙蓉园", "15:30", "17:30", ["User2"]),
            _act("food", "小龙坎火锅", "18:30", "19:30", cost=100),
            _act("hotel", "西安W酒店", "21:00", "08:00", cost=800),
        ]},
    ]},
    {"day": 2, "date": "2025-09-02", "city_segments": [
        {"type": "city_block", "city": "西安市", "activities": [
            _act("attraction", "大雁塔", "09:00", "11:00"),
            _act("attraction", "陕西历史博物馆", "10:30", "12:00"),
            _act("food", "蜀香川菜馆", "12:00", "13:00", cost=80),
        ]},
        _intercity("西安市", "北京市", "飞机", "15:00", "17:00", 900),
    ]},
]}


@pytest.fixture
def group():
    return copy.deepcopy(GROUP)


@pytest.fixture
def plan():
    return copy.deepcopy(PLAN)


@pytest.fixture
def poi():
    return PoiTable(POIS)


@pytest.fixture
def act():
    return _act


@pytest.fixture
def intercity():
    return _intercity


@pytest.fixture(scope="session")
def sample_path() -> Path:
    if not SAMPLE.is_file():
        pytest.skip(f"GroupTravelBench task sample not present at {SAMPLE} "
                    "(read-only shared data beside the repository)")
    return SAMPLE


class FakeSandbox:
    """A tool sandbox for protocol tests: every call answers `{"ok": <name>}` and is logged."""

    def __init__(self, tools: list[dict] | None = None) -> None:
        self._tools = tools or []
        self.calls: list[tuple[str, str]] = []

    @property
    def tools(self) -> list[dict]:
        return self._tools

    async def call(self, name: str, arguments: str, *, task_time: str):
        from cache_store.types import ToolOutcome

        self.calls.append((name, arguments))
        return ToolOutcome(content=f'{{"ok": "{name}"}}', source="hit")
