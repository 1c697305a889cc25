"""TravelBench (single-turn, multi-turn and unsolvable travel-planning tasks): the benchmark.

Everything TravelBench-specific is in this package; `BENCHMARK` wires it into the generic
layers (evaluator/benchmarks/base.py):

    data          data.py                        tasks (TravelBenchTask payloads), tool schemas
    environment   environment.py                 cached tool sandbox + validation.py, adcode.py
    protocols     protocols.py, prompting.py     the three episode protocols and their prompts
    judges        judges.py, unsolvable.py       rubric judge + meta-judge, unsolvable rule
    scoring       scoring.py                     instance, subset and overall scores
    report        report.py                      the TravelBench (x100) table
    settings      settings.py, options.py        paper/smoke profiles, old config key names,
                                                 the `[options]` table (rendering, answers)
    prompts       prompts/, prompt_import.py     built-in prompts, the reference's importer

The paper and its reference implementation (small-xiangcheng/TravelBench, commit 445a29d) are
what the numbers reproduce; docs/protocols.md, docs/judges.md and docs/metrics.md say how.
"""

from __future__ import annotations

from bench_data.types import Task
from evaluator.benchmarks.base import (
    Benchmark,
    DeferredEnvironment,
    JudgeInput,
    JudgeSpec,
    ReportSection,
    Unjudgeable,
    deferred,
)
from evaluator.benchmarks.travelbench.data import FORMAT
from evaluator.judges.settings import JudgeSettings
from evaluator.records import EpisodeRecord, Judgement

from .kinds import META_KIND, RUBRIC_KIND
from .options import TravelBenchOptions
from .prompting import JUDGE_DIMENSIONS as DIMENSIONS
from .prompting import PROMPT_ROLES
from .protocols import TAG_TERMINATION, run_multi_turn, run_single_turn, run_unsolvable
from .settings import CONFIG_ALIASES, PROFILES
from .unsolvable import UNSOLVABLE_KIND, judge_unsolvable, rule_version

# the judges, scores, report and prompt importer are imported when first used (a run
# without --judge needs none of them at start-up)
_JUDGES, _SCORING, _REPORT = f"{__name__}.judges", f"{__name__}.scoring", f"{__name__}.report"
judge_rubric, judge_meta = deferred(_JUDGES, "judge_rubric"), deferred(_JUDGES, "judge_meta")
rubric_version = deferred(_JUDGES, "rubric_version")
meta_version = deferred(_JUDGES, "meta_version")


async def _rubric(inp: JudgeInput) -> Judgement:
    return await judge_rubric(inp.record, inp.task, inp.client, inp.model, inp.settings,
                              inp.tools, inp.thash, inp.prompts, inp.options)


async def _meta(inp: JudgeInput) -> Judgement:
    assert inp.audited is not None
    return await judge_meta(inp.record, inp.task, inp.audited, inp.client, inp.model,
                            inp.settings, inp.tools, inp.prompts, inp.options)


def _unsolvable(inp: JudgeInput) -> Judgement:
    return judge_unsolvable(inp.record, inp.settings.abstain_tags, inp.thash)


JUDGES = {
    RUBRIC_KIND: JudgeSpec(
        kind=RUBRIC_KIND, version=lambda s, p: rubric_version(p), run=_rubric,
        prompt_files=("prompts/travel_rubric.txt", "prompts/travel_dimensions.txt"),
        view_weighted=True, options_version=lambda s, p, o: rubric_version(p, o)),
    META_KIND: JudgeSpec(
        kind=META_KIND, version=lambda s, p: meta_version(p), run=_meta,
        prompt_files=("prompts/travel_meta.txt",), audits=RUBRIC_KIND,
        options_version=lambda s, p, o: meta_version(p, o)),
    UNSOLVABLE_KIND: JudgeSpec(
        kind=UNSOLVABLE_KIND, version=lambda s, p: rule_version(s.abstain_tags),
        run=_unsolvable, rule=True, pass_threshold=1e-9),
}


def judge_kinds(record: EpisodeRecord, task: Task | None, settings: JudgeSettings) -> list[str]:
    """unsolvable -> the rule check; single/multi-turn -> the rubric judge, then the
    meta-judge when `judge.meta_judge`."""
    if record.subset == "unsolvable":
        return [UNSOLVABLE_KIND]
    if record.subset in DIMENSIONS:
        return [RUBRIC_KIND, META_KIND] if settings.meta_judge else [RUBRIC_KIND]
    raise Unjudgeable(f"no judge for {record.benchmark}/{record.subset}")


BENCHMARK = Benchmark(
    name="travelbench",
    title="TravelBench",
    data=FORMAT,
    protocols={"single_turn": run_single_turn, "multi_turn": run_multi_turn,
               "unsolvable": run_unsolvable},
    environment=DeferredEnvironment(f"{__name__}.environment", "ENVIRONMENT"),
    judges=JUDGES,
    judge_kinds=judge_kinds,
    score=deferred(_SCORING, "score_record"),
    subset_score=deferred(_SCORING, "pooled_subset_score"),
    report=ReportSection.deferred(_REPORT, tables="travel_table"),
    ok_terminations=("answer", TAG_TERMINATION, "user_finished"),
    profiles=PROFILES,
    config_aliases=CONFIG_ALIASES,
    prompts=PROMPT_ROLES,
    prompt_importer=deferred(f"{__name__}.prompt_import", "import_reference"),
    options=TravelBenchOptions,
    prompt_source="travelbench/agents/prompt.py",
    description="travel planning with cached real tools: single-turn, multi-turn (a simulated "
                "user), unsolvable (the agent should say it cannot)",
)
