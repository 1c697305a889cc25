"""The real task sample (first 120 tasks of the released test file), read by path.

Every task's preference tables parse into the typed model, agree with the task metadata, and
take a compromise at a real path; every metric is computable on a plan built from the task
(each destination visited in order, all must-visit places and must-eat foods scheduled), with
the name-matched attraction points checked against an independent count."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from evaluator.benchmarks.grouptravelbench.aggregate import score_trial
from evaluator.benchmarks.grouptravelbench.chat import message
from evaluator.benchmarks.grouptravelbench.compromise import CompromiseTracker
from evaluator.benchmarks.grouptravelbench.data import GroupTravelTask, load_grouptravel_file
from evaluator.benchmarks.grouptravelbench.plan import extract_plan, is_travel_plan, validate_plan
from evaluator.benchmarks.grouptravelbench.preferences import parse_group
from evaluator.benchmarks.grouptravelbench.scheduler import ScheduleConfig


@pytest.fixture(scope="module")
def tasks(sample_path):
    loaded = load_grouptravel_file(sample_path).tasks
    assert len(loaded) == 120
    return [t.payload for t in loaded]


def _clock(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def build_plan(task: GroupTravelTask) -> dict:
    """One day per destination: arrive by the first user's required (or preferred) mode,
    visit every member's must-visit places and eat every must-eat food, sleep; go home."""
    first = next(iter(task.user_preferences.values()))["preference"]["global_constraints"]
    mode = (first["transport"]["must"] or first["transport"]["prefer"] or ["高铁"])[0]
    cities, home = task.metadata["cities"], task.metadata["departure_city"]
    days, here = [], home
    for number, city in enumerate(cities, start=1):
        wanted = {"attraction": [], "food": []}
        for entry in task.user_preferences.values():
            prefs = entry["preference"]["city_specific_preferences"][city]
            wanted["attraction"] += prefs["attractions"]["must_visit"]
            wanted["food"] += prefs["food"]["must_eat"]
        acts, minute = [], 13 * 60
        for kind, names in wanted.items():
            for name in dict.fromkeys(names):
                act = {"type": kind, "location": name, "start_time": _clock(minute % 1440),
                       "end_time": _clock((minute + 20) % 1440), "participants": ["All"]}
                if kind == "food":
                    act["avg_cost"] = 50
                acts.append(act)
                minute += 20
        acts.append({"type": "hotel", "location": f"{city}酒店", "start_time": "23:30",
                     "end_time": "08:00", "avg_cost": 300})
        days.append({"day": number, "date": task.time, "city_segments": [
            {"type": "intercity_transport", "from_city": here, "to_city": city,
             "transport_mode": mode, "start_time": "08:00", "end_time": "12:00", "avg_cost": 400},
            {"type": "city_block", "city": city, "activities": acts}]})
        here = city
    days[-1]["city_segments"].append(
        {"type": "intercity_transport", "from_city": here, "to_city": home,
         "transport_mode": mode, "start_time": "23:00", "end_time": "23:59", "avg_cost": 400})
    days[-1]["city_segments"][1]["activities"].pop()  # no hotel on the last day
    return {"days": days}


def expected_attraction_points(task: GroupTravelTask, user: str) -> int:
    """Must/reject-visit points when everyone visits every must-visit place, each block a
    distinct city, without a POI table (so no category points)."""
    points = 0
    cities = task.user_preferences[user]["preference"]["city_specific_preferences"]
    for city, prefs in cities.items():
        places = [name for entry in task.user_preferences.values()
                  for name in entry["preference"]["city_specific_preferences"][city]
                  ["attractions"]["must_visit"]]
        for name in prefs["attractions"]["must_visit"]:
            points += 2 * any(name in place for place in places)
        for name in prefs["attractions"]["reject_visit"]:
            points -= 2 * any(name in place for place in places)
    return points


def test_preference_tables_parse(tasks):
    sizes = Counter()
    for task in tasks:
        group = parse_group(task.user_preferences)
        sizes[len(group)] += 1
        assert {u for u, m in group.items() if m.compromisable} == set(
            task.metadata["compromise_pattern"]), task.trace_id
        for member in group.values():
            assert set(member.preference.city_specific_preferences) == set(
                task.metadata["cities"]), task.trace_id
        assert {m["role"] for m in task.initial_messages} == set(group)
        config = ScheduleConfig.for_difficulty(list(group), task.difficulty_type)
        assert config.max_rounds in (15, 20, 25)
    assert set(sizes) <= {2, 3, 4, 5, 6} and sum(sizes.values()) == 120


def test_compromise_at_real_paths(tasks):
    for task in tasks:
        tracker = CompromiseTracker(task.user_preferences)
        user, city = tracker.users[-1], task.metadata["cities"][0]
        ask = message("Agent", f"大家意见不一，@{user} 能让一下吗？")
        step = tracker.begin_reply(user, ask, 1).submit(
            f"行吧。[city_specific_preferences.{city}.food.must_eat : []]")
        assert step.action == "commit" and step.applied and step.text == "行吧。"
        assert tracker.effective[user]["preference"]["city_specific_preferences"][city][
            "food"]["must_eat"] == []
        assert task.user_preferences[user]["preference"]["city_specific_preferences"][city][
            "food"]["must_eat"] == tracker.original[user]["preference"][
            "city_specific_preferences"][city]["food"]["must_eat"]


def test_every_metric_on_a_constructed_plan(tasks):
    for task in tasks:
        users = list(task.user_preferences)
        plan = build_plan(task)
        assert validate_plan(plan, users) == [], task.trace_id
        history = [message(m["role"], m["content"]) for m in task.initial_messages]
        history.append(message("Agent", "方案如下：\n```json\n" + json.dumps(
            plan, ensure_ascii=False) + "\n```"))
        assert is_travel_plan(history[-1]["content"]) and extract_plan(history) == plan
        agent_table = {u: e["preference"] for u, e in task.user_preferences.items()}
        trial = score_trial(task_id=task.trace_id, history=history, agent_table=agent_table,
                            effective=task.user_preferences, users=users, plan_generated=True)
        assert not trial.errors, task.trace_id
        assert trial.pc == 1.0 and trial.completeness.precision == 1.0
        assert trial.completeness.possible > 0
        assert trial.utility.num_users == len(users)
        assert trial.utility.split_penalty == 0
        for user in users:
            got = trial.utility.per_user[user].breakdown["attractions"]
            assert got == expected_attraction_points(task, user), (task.trace_id, user)
        assert 0.0 <= trial.gf <= 100.0
        assert trial.fairness.per_user == {u: r.total for u, r in trial.utility.per_user.items()}
        # no intracity legs from the station: every user misses one per day at least
        assert trial.validity.issue_counts["missing_intracity_transport"] >= len(users) * len(
            task.metadata["cities"])
