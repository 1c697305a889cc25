"""perf.judge_prefix counts what a prefix cache can serve: the longest prefix a call shares
with any earlier one, over the sample's judge prompts in both layouts."""

from __future__ import annotations

from bench_data.registry import load_tasks
from evaluator import benchmarks  # noqa: F401
from perf.judge_prefix import LAYOUTS, prompts, shared_prefixes


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
