"""The oracle agent's answers, built only from the built-in prompt's formats, score what the
metrics read: on the sample tasks its table collects every preference (PC 100%) and its plan
is valid (PV), with positive utility for every traveller (GU, GF) once the POI table knows its
places; and the prompt's own examples parse as a table and a plan-shaped, valid plan."""

from __future__ import annotations

import json

from bench_data.grouptravelbench import load_grouptravel_file
from evaluator.benchmarks.grouptravelbench.aggregate import score_trial
from evaluator.benchmarks.grouptravelbench.chat import message
from evaluator.benchmarks.grouptravelbench.completeness import preference_completeness
from evaluator.benchmarks.grouptravelbench.plan import (
    extract_plan,
    is_travel_plan,
    parse_agent_table,
    validate_plan,
)
from evaluator.benchmarks.grouptravelbench.poi import PoiTable
from evaluator.benchmarks.grouptravelbench.prompting import PROMPT_DIR
from evaluator.benchmarks.grouptravelbench.validity import plan_validity

from .oracle import oracle_plan, oracle_table, poi_table, prompt_examples


def test_the_prompts_examples_are_what_the_metrics_read():
    table, plan = prompt_examples()
    text = json.dumps(table, ensure_ascii=False)
    assert parse_agent_table(text) == table
    effective = {u: {"preference": v} for u, v in table.items()}
    pc = preference_completeness(table, effective)
    assert pc.recall == 1.0 and pc.possible >= 8           # every field counts
    reply = "```json\n" + json.dumps(plan, ensure_ascii=False) + "\n```"
    assert is_travel_plan(reply) and extract_plan([message("Agent", reply)]) == plan
    assert validate_plan(plan, list(table)) == []
    assert plan_validity(plan, list(table)).valid
    # the table-refresh instruction shows the same structure
    ask = (PROMPT_DIR / "agent_table_ask.txt").read_text("utf-8")
    assert prompt_examples(ask + "\n```json\n" + json.dumps(plan) + "\n```")[0] == table


def test_the_oracle_scores_on_sample_tasks(sample_path):
    tasks = load_grouptravel_file(sample_path).tasks[::6]   # 20 of 120, 2 to 6 travellers
    poi = PoiTable(poi_table(tasks))
    table_example, plan_example = prompt_examples()
    low = []
    for task in tasks:
        p = task.payload
        users = list(p.user_preferences)
        table = oracle_table(p.user_preferences, table_example)
        plan = oracle_plan(p, plan_example)
        reply = "```json\n" + json.dumps(plan, ensure_ascii=False) + "\n```"
        assert is_travel_plan(reply)
        trial = score_trial(task_id=task.task_id, history=[message("Agent", reply)],
                            agent_table=table, effective=p.user_preferences, users=users,
                            plan_generated=True, poi=poi)
        assert trial.pc == 1.0, task.task_id
        assert trial.pv == 1.0, (task.task_id, trial.validity.issues[:3])
        assert trial.gu > 0 and trial.gf > 0, task.task_id
        scores = trial.fairness.per_user
        if min(scores.values()) <= 0:
            low.append(task.task_id)
        # restaurants, hotels score only with the table: without it, utility is lower
        bare = score_trial(task_id=task.task_id, history=[message("Agent", reply)],
                           agent_table=table, effective=p.user_preferences, users=users,
                           plan_generated=True, poi=None)
        assert bare.gu < trial.gu, task.task_id
    assert not low
