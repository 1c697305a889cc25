"""A scripted "oracle" agent for GroupTravelBench: it knows each task's preference tables and
answers in exactly the formats the built-in agent prompt describes, taking the shape of every
JSON object from the prompt's own examples (`prompts/agent_system.txt`): the preference table
(from its table example) and a travel plan (from its plan example: the intercity trip, the
city block and each activity type) that schedules every traveller's must-see sights and dishes,
a shared hotel of a preferred category, within the budgets, the daily limits and the opening
hours, moving between places by intracity transport. `poi_table` writes a POI table of the same
places (the reference's layout), so restaurants, categories and hotels score.

As a server (`python -m tests.benchmarks.grouptravelbench.oracle --data FILE`) it is an
OpenAI-compatible agent endpoint: a request offering tools gets the plan, a request without
tools gets the table when it ends with a user message (the table refresh) and the plan otherwise
(a forced reply). The task is the one whose query, context and date are in the
system prompt. Prints `ORACLE LISTENING <url>` when it accepts connections (oracle_http.py).
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import sys
from pathlib import Path
from typing import Any

from evaluator.benchmarks.grouptravelbench.prompting import PROMPT_DIR

_FENCE = re.compile(r"```json\n(.*?)\n[ \t]*```", re.DOTALL)
_NUMBERS = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
            "九": 9, "十": 10}
MODES = ("高铁", "飞机", "火车", "自驾")
HOTEL_TYPES = ("舒适型", "经济型", "高档型", "民宿", "商务酒店", "豪华型", "快捷酒店", "旅馆", "客栈",
               "度假酒店", "电竞酒店", "公寓式酒店", "主题酒店")


def prompt_examples(text: str | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the table example, the plan example) of the built-in agent prompt."""
    text = text if text is not None else (PROMPT_DIR / "agent_system.txt").read_text("utf-8")
    blocks = []
    for b in _FENCE.findall(text):
        try:
            blocks.append(json.loads(b))
        except ValueError:  # the split example shows two activities, not one object
            continue
    table = next(b for b in blocks if "days" not in b)
    plan = next(b for b in blocks if "days" in b)
    return table, plan


def _shapes(plan: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """One example object per kind: "intercity_transport", "city_block", each activity type,
    and "day"."""
    day = plan["days"][0]
    shapes = {"day": {k: v for k, v in day.items() if k != "city_segments"}}
    for seg in day["city_segments"]:
        if "activities" in seg:
            shapes["city_block"] = {k: v for k, v in seg.items() if k != "activities"}
            for act in seg["activities"]:
                shapes.setdefault(act["type"], act)
        else:
            shapes[seg["type"]] = seg
    return shapes


def _fill(shape: dict[str, Any], **values: Any) -> dict[str, Any]:
    """An object with the example's keys (and only those), values replaced."""
    unknown = set(values) - set(shape)
    assert not unknown, f"the prompt's example has no {unknown}"
    out = copy.deepcopy(shape)
    out.update(values)
    return out


def oracle_table(prefs: dict[str, Any], example: dict[str, Any]) -> dict[str, Any]:
    """Each traveller's table in the example's structure, with the task's values."""
    shape = next(iter(example.values()))
    out = {}
    for user, entry in prefs.items():
        pref = entry["preference"]
        g = pref["global_constraints"]
        table = {"global_constraints": {k: g[k] for k in shape["global_constraints"]},
                 "city_specific_preferences": {}}
        city_shape = next(iter(shape["city_specific_preferences"].values()))
        for city, c in pref["city_specific_preferences"].items():
            table["city_specific_preferences"][city] = {k: c[k] for k in city_shape}
        out[user] = table
    return out


def days_of(text: str) -> int:
    m = re.search(r"([一二两三四五六七八九十]+)天", text)
    if not m:
        return 2
    chars = m.group(1)
    if chars.startswith("十"):
        return 10 + (_NUMBERS.get(chars[1:], 0) if len(chars) > 1 else 0)
    return _NUMBERS.get(chars, 2)


def _all(prefs: dict[str, Any], city: str, group: str, tier: str) -> list[str]:
    items: list[str] = []
    for entry in prefs.values():
        c = entry["preference"]["city_specific_preferences"].get(city, {})
        block = c.get(group, {})
        values = block.get(tier, []) if tier in block else block.get("category_pref", {}).get(
            tier, [])
        items.extend(v for v in values if v not in items)
    return items


def _bad(prefs: dict[str, Any], city: str, group: str) -> list[str]:
    tiers = ("reject_visit",) if group == "attractions" else ("reject_eat", "avoid_eat")
    return [x for t in tiers for x in _all(prefs, city, group, t)]


def _mode(prefs: dict[str, Any]) -> str:
    def points(mode: str) -> int:
        total = 0
        for entry in prefs.values():
            t = entry["preference"]["global_constraints"]["transport"]
            total += 2 * (mode in t["must"]) - 2 * (mode in t["reject"])
            if mode not in t["must"] and mode not in t["reject"]:
                total += (mode in t["prefer"]) - (mode in t["avoid"])
        return total
    return max(MODES, key=points)


def _hotel_category(prefs: dict[str, Any]) -> str:
    cats = HOTEL_TYPES

    def points(cat: str) -> int:
        return sum((cat in e["preference"]["global_constraints"]["hotel_preference"]["prefer"])
                   - (cat in e["preference"]["global_constraints"]["hotel_preference"]["avoid"])
                   for e in prefs.values())
    return max(cats, key=points)


def _limit(prefs: dict[str, Any], key: str, default: float) -> float:
    values = [e["preference"]["global_constraints"]["intensity"][key] for e in prefs.values()]
    values = [v for v in values if isinstance(v, int | float) and v > 0]
    return min(values) if values else default


def restaurant(keyword: str) -> str:
    return f"{keyword}馆"


def hotel(city: str, category: str) -> str:
    return f"{city}{category}酒店"


def _clock(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def oracle_plan(payload: Any, example: dict[str, Any]) -> dict[str, Any]:
    """A plan in the example's format that meets the group's wishes (module doc)."""
    shapes = _shapes(example)
    prefs = payload.user_preferences
    meta = payload.metadata
    cities = list(meta.get("cities") or next(iter(prefs.values()))["preference"][
        "city_specific_preferences"])
    home = meta.get("departure_city") or "北京市"
    n_days = max(days_of(str(meta.get("date", "")) + payload.query), len(cities))
    per_city = [n_days // len(cities) + (i < n_days % len(cities)) for i in range(len(cities))]
    mode = _mode(prefs)
    category = _hotel_category(prefs)
    hours = _limit(prefs, "max_active_hours", 8)
    pois_per_day = max(1, min(int(_limit(prefs, "max_poi_per_day", 3)), int(hours * 60) // 90))
    import datetime as dt

    start = dt.date.fromisoformat(payload.time)
    days = []
    day_no = 0
    for ci, city in enumerate(cities):
        sights = [s for s in _all(prefs, city, "attractions", "must_visit")
                  if s not in _bad(prefs, city, "attractions")]
        dishes = [d for d in _all(prefs, city, "food", "must_eat") + _all(
            prefs, city, "food", "prefer_eat") if d not in _bad(prefs, city, "food")]
        for k in range(per_city[ci]):
            segments: list[dict[str, Any]] = []
            t = 8 * 60
            place = None
            if k == 0:
                origin = home if ci == 0 else cities[ci - 1]
                segments.append(_fill(shapes["intercity_transport"], from_city=origin,
                                      to_city=city, transport_mode=mode, start_time="07:00",
                                      end_time="08:00", avg_cost=100))
                place = f"{city}站"
            acts: list[dict[str, Any]] = []

            def go(to: str, acts: list = acts) -> None:
                nonlocal t, place
                if place is not None and place != to:
                    acts.append(_fill(shapes["intracity_transport"], transport_mode="公共交通",
                                      **{"from": place, "to": to}, start_time=_clock(t),
                                      end_time=_clock(t + 15), participants=["All"]))
                    t += 15
                place = to

            today = sights[:pois_per_day]
            sights = sights[pois_per_day:]
            meals = dishes[:2] if dishes else []
            dishes = dishes[2:]
            for i, sight in enumerate(today):
                go(sight)
                acts.append(_fill(shapes["attraction"], location=sight, start_time=_clock(t),
                                  end_time=_clock(t + 60), participants=["All"]))
                t += 60
                if i < len(meals):
                    go(restaurant(meals[i]))
                    acts.append(_fill(shapes["food"], location=restaurant(meals[i]),
                                      start_time=_clock(t), end_time=_clock(t + 45),
                                      participants=["All"], avg_cost=30))
                    t += 45
            for dish in meals[len(today):]:
                go(restaurant(dish))
                acts.append(_fill(shapes["food"], location=restaurant(dish),
                                  start_time=_clock(t), end_time=_clock(t + 45),
                                  participants=["All"], avg_cost=30))
                t += 45
            last_day = day_no == n_days - 1
            if not last_day:
                go(hotel(city, category))
                acts.append(_fill(shapes["hotel"], location=hotel(city, category),
                                  start_time=_clock(max(t, 20 * 60)), end_time="08:00",
                                  avg_cost=80))
            elif not acts:
                acts.append(_fill(shapes["rest"], start_time=_clock(t),
                                  end_time=_clock(t + 30), participants=["All"]))
                t += 30
            segments.append({**_fill(shapes["city_block"], city=city), "activities": acts})
            if last_day:
                segments.append(_fill(shapes["intercity_transport"], from_city=city,
                                      to_city=home, transport_mode=mode,
                                      start_time=_clock(t + 60), end_time=_clock(t + 120),
                                      avg_cost=100))
            days.append({**_fill(shapes["day"], day=day_no + 1,
                                 date=(start + dt.timedelta(days=day_no)).isoformat()),
                         "city_segments": segments})
            day_no += 1
    return {"days": days}


def poi_table(tasks: list[Any]) -> dict[str, list[dict[str, Any]]]:
    """The reference's POI layout with every place the oracle visits: each must-see sight
    (open 08:00-20:00 every day), a restaurant per dish (its category the dish) and a hotel
    per category and city."""
    hours = {"always_open": False,
             "rules": [{"weekdays": [1, 2, 3, 4, 5, 6, 7],
                        "time_windows": [{"open": "08:00", "close": "20:00"}]}]}
    table: dict[str, dict[str, dict[str, Any]]] = {}
    for task in tasks:
        prefs = task.payload.user_preferences
        for entry in prefs.values():
            for city, c in entry["preference"]["city_specific_preferences"].items():
                places = table.setdefault(city, {})
                for s in c["attractions"]["must_visit"] + c["attractions"]["reject_visit"]:
                    places[s] = {"name": s, "poi_type": "attractions",
                                 "custom_category": "公园", "opening_hours": hours}
                for tier in ("must_eat", "prefer_eat", "avoid_eat", "reject_eat"):
                    for d in c["food"][tier]:
                        places[restaurant(d)] = {"name": restaurant(d), "poi_type": "food",
                                                 "custom_category": d, "opening_hours": None}
                for cat in HOTEL_TYPES:
                    places[hotel(city, cat)] = {"name": hotel(city, cat), "poi_type": "hotels",
                                                "custom_category": cat, "opening_hours": None}
    return {city: list(places.values()) for city, places in table.items()}


# ---------------------------------------------------------------- the server


def serve(data: Path, port: int) -> None:
    from evaluator.benchmarks.grouptravelbench.data import load_grouptravel_file

    from ..oracle_http import serve as serve_answers

    tasks = load_grouptravel_file(data).tasks
    table_example, plan_example = prompt_examples()

    def find(system: str) -> Any:
        for task in tasks:
            p = task.payload
            if p.query in system and p.context in system and p.time in system:
                return p
        return None

    def answer(body: dict[str, Any]) -> str | None:
        messages = body["messages"]
        payload = find(messages[0]["content"])
        if payload is None:
            return None
        if not body.get("tools") and messages[-1]["role"] == "user":  # the table refresh
            return json.dumps(oracle_table(payload.user_preferences, table_example),
                              ensure_ascii=False)
        return "```json\n" + json.dumps(oracle_plan(payload, plan_example),
                                        ensure_ascii=False, indent=1) + "\n```"

    serve_answers(answer, port)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    serve(args.data, args.port)


if __name__ == "__main__":
    sys.exit(main())
