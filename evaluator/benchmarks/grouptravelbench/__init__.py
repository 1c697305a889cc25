"""GroupTravelBench: one agent plans a trip for a group chat of 2-6 simulated users.

The deterministic mechanics live here as pure modules (no model calls, no I/O beyond reading
a POI table by path): preference tables and compromises (`preferences`, `compromise`), the
chat's speaking order (`chat`, `scheduler`), the plan JSON (`plan`), the rule metrics
(`completeness`, `utility`, `validity`), their aggregation (`aggregate`) and the judge's
rubric data (`rubric`). The episode (`protocol`: the scheduled chat, one simulator per user;
`agent_turn`: the agent's tool loop, repetition guard and table; `render`: what each model is
sent), the prompt roles and their importer (`prompting`, `prompt_import`), the 10 tools through
the cached sandbox and the POI table check (`environment`, `validation`, `poi_file`), the rule
judge and unit scores (`scoring`), the report section (`report`), the five-dimension LLM judge
and meta-judge (`judges`, `judge_inputs`, `judge_parse`), the options (`options`) and the
`paper` profile (`settings`) make `BENCHMARK`. docs/grouptravelbench.md describes them.
"""

from __future__ import annotations

from collections import defaultdict

from evaluator.benchmarks.base import (
    Benchmark,
    DeferredEnvironment,
    JudgeSpec,
    ReportSection,
    deferred,
)
from evaluator.benchmarks.grouptravelbench.data import FORMAT

from .kinds import JUDGE_KIND, JUDGE_VERSION, META_KIND, META_VERSION, METRICS, METRICS_VERSION
from .options import GroupOptions
from .prompting import PROMPT_ROLES
from .settings import PROFILES

# the chat, tools, judges, metrics and report are imported when first used: registering
# GroupTravelBench costs a run of another benchmark nothing at start-up
_JUDGES, _SCORING = f"{__name__}.judges", f"{__name__}.scoring"
_ENVIRONMENT, _REPORT = f"{__name__}.environment", f"{__name__}.report"
run_group_chat = deferred(f"{__name__}.protocol", "run_group_chat")
judge_version = deferred(_JUDGES, "judge_version")
meta_version = deferred(_JUDGES, "meta_version")
metrics_version = deferred(_SCORING, "metrics_version")

POI_FLAG_HELP = ("GroupTravelBench: the reference's POI table, "
                 "poi2category/all_poi_by_city.json")


def _versioned(base: str):
    return lambda settings, prompts: base if prompts is None else prompts.version(base)


BENCHMARK = Benchmark(
    name="grouptravelbench",
    title="GroupTravelBench",
    data=FORMAT,
    # every task file is one subset named after it (the release's is "test"); all share the
    # one protocol
    protocols=defaultdict(lambda: run_group_chat, {"test": run_group_chat}),
    environment=DeferredEnvironment(_ENVIRONMENT, "ENVIRONMENT"),
    judges={
        METRICS: JudgeSpec(kind=METRICS, version=lambda s, p: METRICS_VERSION,
                           run=deferred(_SCORING, "metrics"), rule=True, pass_threshold=1.0,
                           options_version=lambda s, p, o: metrics_version(o)),
        JUDGE_KIND: JudgeSpec(kind=JUDGE_KIND, version=_versioned(JUDGE_VERSION),
                              run=deferred(_JUDGES, "run_judge"),
                              prompt_files=("prompts/judge.txt",),
                              options_version=lambda s, p, o: judge_version(p, o)),
        META_KIND: JudgeSpec(kind=META_KIND, version=_versioned(META_VERSION),
                             run=deferred(_JUDGES, "run_meta"),
                             prompt_files=("prompts/meta.txt",), audits=JUDGE_KIND,
                             options_version=lambda s, p, o: meta_version(p, o)),
    },
    judge_kinds=deferred(_SCORING, "judge_kinds"),
    score=deferred(_SCORING, "score"),
    report=ReportSection.deferred(_REPORT),
    ok_terminations=("plan_generated", "max_turn_reached"),
    profiles=PROFILES,
    prompts=PROMPT_ROLES,
    prompt_importer=deferred(f"{__name__}.prompt_import", "import_reference"),
    prompt_source="group_travelbench/agents/multi_prompt.py",
    options=GroupOptions,
    deviations=deferred(_ENVIRONMENT, "deviations"),
    run_flags={"--poi-table": ("options.poi_table", POI_FLAG_HELP)},
    description="one agent plans a group trip in a chat with 2-6 simulated users, with 10 "
                "cached travel tools; rule metrics PC/GU/GF/PV and a 5-dimension LLM judge",
)
