"""perf.judge_prefix counts what a prefix cache can serve: the longest prefix a call shares
with any earlier one, over the sample's TravelBench judge prompts and GroupTravelBench's, in
both layouts."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench_data.registry import load_tasks
from evaluator import benchmarks  # noqa: F401
from perf.judge_prefix import LAYOUTS, group_prompts, prompts, shared_prefixes

GROUP_TASKS = (Path(__file__).resolve().parents[2].parent / "shared" / "data" /
               "grouptravelbench" / "test_sample.jsonl")


def test_shared_prefixes_take_the_best_earlier_call():
    assert shared_prefixes([[1, 2, 3], [1, 2, 4], [1, 9], [1, 2, 4, 5]]) == [0, 2, 1, 3]


def test_the_prefix_layout_shares_more_of_every_later_call():
    taskset = load_tasks("sample", subsets=["single_turn", "multi_turn"], limit=2)
    chars = {}
    for layout in LAYOUTS:
        texts = prompts(layout, list(taskset.tasks), taskset.tool_schemas)
        assert len(texts) == 2 * len(taskset.tasks)          # a rubric and a meta prompt each
        chars[layout] = shared_prefixes([list(t) for t in texts])
    assert all(p > r for p, r in zip(chars["prefix"][2:], chars["reference"][2:], strict=True))


def test_grouptravelbench_judge_calls_share_the_fixed_sections_only_in_the_prefix_layout():
    if not GROUP_TASKS.exists():
        pytest.skip(f"no GroupTravelBench tasks at {GROUP_TASKS}")
    tasks = list(load_tasks(str(GROUP_TASKS), limit=3, benchmark="grouptravelbench").tasks)
    shared = {}
    for layout in LAYOUTS:
        calls = group_prompts(layout, tasks)
        assert [m[0]["role"] for m in calls] == ["system"] * 2 * len(tasks)
        texts = [m[0]["content"] + m[1]["content"] for m in calls]
        shared[layout] = shared_prefixes([list(t) for t in texts])
    # the judge calls of later tasks (every other call) share the rules in the prefix layout
    for later in range(2, 2 * len(tasks), 2):
        assert shared["prefix"][later] > shared["reference"][later] + 10_000
