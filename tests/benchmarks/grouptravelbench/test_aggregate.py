"""Trials -> tasks -> summaries, and the judge rubric's arithmetic."""

from __future__ import annotations

import json

import msgspec
import pytest

from evaluator.benchmarks.grouptravelbench import rubric
from evaluator.benchmarks.grouptravelbench.aggregate import (
    NO_PLAN,
    NO_PLAN_FOUND,
    NO_RUN,
    average_trials,
    difficulty_key,
    score_trial,
    summarise,
    summarise_by,
)
from evaluator.benchmarks.grouptravelbench.chat import message

from .conftest import USERS


def _trials(group, plan, poi):
    perfect = {user: entry["preference"] for user, entry in group.items()}
    with_plan = [message("User1", "开场"),
                 message("Agent", "```json\n" + json.dumps(plan, ensure_ascii=False) + "\n```")]
    common = {"effective": group, "users": USERS, "poi": poi}
    return [
        # T1: a plan (GU -0.5, GF 0, invalid: see the worked example), a perfect table: PC 1
        score_trial(task_id="T1", trial=0, history=with_plan, agent_table=perfect,
                    plan_generated=True, **common),
        # T1: no plan; an empty table: PC 0
        score_trial(task_id="T1", trial=1, history=with_plan[:1], agent_table={},
                    plan_generated=False, **common),
        # T1: the run crashed: every metric is an error
        score_trial(task_id="T1", trial=2, history=[], agent_table={}, plan_generated=False,
                    success=False, **common),
        # T2: flagged as planned, but no plan can be found in the chat; PC 1
        score_trial(task_id="T2", history=with_plan[:1], agent_table=perfect,
                    plan_generated=True, **common),
    ]


def test_trial_errors(group, plan, poi):
    t0, t1, t2, t3 = _trials(group, plan, poi)
    assert (t0.pc, t0.gu, t0.gf, t0.pv) == (1.0, -0.5, 0.0, 0.0) and not t0.errors
    assert t1.pc == 0.0 and t1.errors == dict.fromkeys(("utility", "fairness", "validity"), NO_PLAN)
    assert t2.pc is None and set(t2.errors.values()) == {NO_RUN} and len(t2.errors) == 4
    assert t3.errors["validity"] == NO_PLAN_FOUND and t3.pc == 1.0
    json.loads(msgspec.json.encode(t0))  # records serialise


def test_tasks_and_summaries(group, plan, poi):
    tasks = average_trials(_trials(group, plan, poi))
    one, two = tasks
    # T1: PC over the trials that have it: (1 + 0) / 2; the plan metrics from trial 0 only
    assert (one.trials, one.pc, one.gu, one.gu_total, one.gf, one.pv) == (3, 0.5, -0.5, -1, 0, 0)
    assert (two.trials, two.pc, two.gu, two.pv) == (1, 1.0, None, None)
    summary = summarise(tasks)
    # PC (0.5 + 1) / 2; GU (-0.5 + 0) / 2 with T2 counted as 0; GF and PV 0
    assert (summary.pc.average, summary.pc.minimum, summary.pc.maximum) == (0.75, 0.5, 1.0)
    assert (summary.gu.average, summary.gu.valid_count, summary.gu.minimum) == (-0.25, 1, -0.5)
    assert summary.gu.count == 2 and summary.pv.average == 0.0 and summary.gf.average == 0.0
    by = summarise_by(tasks, difficulty_key({"T1": "easy"}))
    assert list(by) == ["easy", "unknown"]
    assert by["easy"].gu.average == -0.5 and by["unknown"].pc.average == 1.0
    assert summarise([]).pc.count == 0


def test_rating_words():
    assert rubric.rating_to_score("评级：较好") == 4
    assert rubric.rating_to_score(" 优秀 ") == 5
    assert rubric.rating_to_score("介于一般和较好之间") == 3  # first word in scale order
    assert rubric.rating_to_score("good") is None and rubric.rating_to_score(None) is None


def test_judge_scores():
    ratings = dict(zip(rubric.DIMENSION_KEYS, ["优秀", "较好", "一般", "较差", "bad"],
                       strict=True))
    scores = rubric.score_ratings(ratings)
    # parsed 5, 4, 3, 2 -> average 3.5 -> (3.5 - 1) / 4 x 100 = 62.5
    assert scores.average == 3.5 and scores.normalised_average == 62.5
    assert scores.normalised["hallucination_factuality"] == 100.0
    assert scores.normalised["plan_humanization"] is None and scores.final_average == 62.5
    meta = rubric.score_ratings(ratings, meta_rating="较好")  # x 4/5
    assert meta.meta == 4 and meta.final_average == 50.0
    assert meta.final["tool_usage_reasoning"] == 60.0
    assert rubric.score_ratings({}) is None
    crashed = rubric.crashed_run()
    assert crashed.crashed and crashed.average == 1.0 and crashed.final_average == 0.0
    stats = rubric.judge_statistics([scores, meta, crashed])
    assert stats["raw_average_1_5"] == pytest.approx(round((3.5 + 3.5 + 1) / 3, 2))
    assert stats["final_average_0_100"] == round((62.5 + 50 + 0) / 3, 2)
    assert stats["meta_judge"] == {"count": 1, "mean": 4.0,
                                   "distribution": {1: 0, 2: 0, 3: 0, 4: 1, 5: 0}}
    assert stats["raw_scores_1_5"]["plan_humanization"]["count"] == 1
    assert len(rubric.DIMENSIONS) == 5
