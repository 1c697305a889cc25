"""GroupTravelBench: one agent plans a trip for a group chat of 2-6 simulated users.

The deterministic mechanics live here as pure modules (no model calls, no I/O beyond reading
a POI table by path): preference tables and compromises (`preferences`, `compromise`), the
chat's speaking order (`chat`, `scheduler`), the plan JSON (`plan`), the rule metrics
(`completeness`, `utility`, `validity`), their aggregation (`aggregate`) and the judge's
rubric data (`rubric`). docs/grouptravelbench.md describes them. The episode
(`protocol`: the scheduled chat, one simulator per user, no tools) and the rule judge with its
scores and report section (`scoring`) make `BENCHMARK`.
"""

from __future__ import annotations

from bench_data.grouptravelbench import FORMAT
from evaluator.benchmarks.base import Benchmark, JudgeSpec

from .protocol import NoToolsFactory, run_group_chat
from .scoring import METRICS, METRICS_VERSION, SECTION, judge_kinds, metrics, score

BENCHMARK = Benchmark(
    name="grouptravelbench",
    title="GroupTravelBench",
    data=FORMAT,
    protocols={"test": run_group_chat},
    environment=NoToolsFactory(),
    judges={METRICS: JudgeSpec(kind=METRICS, version=lambda s, p: METRICS_VERSION,
                               run=metrics, rule=True, pass_threshold=1.0)},
    judge_kinds=judge_kinds,
    score=score,
    report=SECTION,
    ok_terminations=("plan", "no_plan"),
    description="one agent plans a group trip in a chat with 2-6 simulated users",
)
