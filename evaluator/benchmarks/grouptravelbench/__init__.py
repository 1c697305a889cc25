"""GroupTravelBench: one agent plans a trip for a group chat of 2-6 simulated users.

The deterministic mechanics live here as pure modules (no model calls, no I/O beyond reading
a POI table by path): preference tables and compromises (`preferences`, `compromise`), the
chat's speaking order (`chat`, `scheduler`), the plan JSON (`plan`), the rule metrics
(`completeness`, `utility`, `validity`), their aggregation (`aggregate`) and the judge's
rubric data (`rubric`). The episode (`protocol`: the scheduled chat, one simulator per user;
`agent_turn`: the agent's tool loop and repetition guard), the 10 tools through the cached
sandbox (`environment`, `validation`), the rule judge with unit scores and the report section
(`scoring`), the five-dimension LLM judge and meta-judge (`judges`) and the `paper` profile
(`settings`) make `BENCHMARK`. docs/grouptravelbench.md describes them.
"""

from __future__ import annotations

from collections import defaultdict

from evaluator.benchmarks.base import Benchmark, JudgeSpec
from evaluator.benchmarks.grouptravelbench.data import FORMAT

from .environment import ENVIRONMENT
from .judges import JUDGE_KIND, JUDGE_VERSION, META_KIND, META_VERSION, run_judge, run_meta
from .protocol import run_group_chat
from .scoring import METRICS, METRICS_VERSION, SECTION, judge_kinds, metrics, score
from .settings import PROFILES

BENCHMARK = Benchmark(
    name="grouptravelbench",
    title="GroupTravelBench",
    data=FORMAT,
    # every task file is one subset named after it (the release's is "test"); all share the
    # one protocol
    protocols=defaultdict(lambda: run_group_chat, {"test": run_group_chat}),
    environment=ENVIRONMENT,
    judges={
        METRICS: JudgeSpec(kind=METRICS, version=lambda s, p: METRICS_VERSION, run=metrics,
                           rule=True, pass_threshold=1.0),
        JUDGE_KIND: JudgeSpec(kind=JUDGE_KIND, version=lambda s, p: JUDGE_VERSION,
                              run=run_judge, prompt_files=("prompts/judge.txt",)),
        META_KIND: JudgeSpec(kind=META_KIND, version=lambda s, p: META_VERSION, run=run_meta,
                             prompt_files=("prompts/meta_judge.txt",), audits=JUDGE_KIND),
    },
    judge_kinds=judge_kinds,
    score=score,
    report=SECTION,
    ok_terminations=("plan_generated", "max_turn_reached"),
    profiles=PROFILES,
    description="one agent plans a group trip in a chat with 2-6 simulated users, with 10 "
                "cached travel tools; rule metrics PC/GU/GF/PV and a 5-dimension LLM judge",
)
