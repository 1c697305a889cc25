"""VitaBench (stateful life-service tasks: delivery, in-store, travel agency): the benchmark.

Built so far: its data (bench_data/vitabench.py: tasks with atomic rubrics and a per-task
environment database kept in `Task.extra`), its judge (the generic rubric-based sliding-window
evaluator, `evaluator/judges/sliding_window.py`, paper section 3.3) and its scoring (a task
succeeds when every rubric ends satisfied; rubric-level accuracy beside it). Its environment
(stateful per-episode databases, `env/`) and protocols are not wired in yet: a run of its tasks
stops with "no episode protocol", while `agentsweep judge` and `report` work on its records.
"""

from __future__ import annotations

import msgspec

from bench_data.types import Task
from bench_data.vitabench import FORMAT
from evaluator.benchmarks.base import (
    Benchmark,
    JudgeInput,
    JudgementLookup,
    JudgeSpec,
    ReportSection,
    ScoreContext,
    Unjudgeable,
)
from evaluator.judges.settings import JudgeSettings
from evaluator.judges.sliding_window import (
    SLIDING_WINDOW_KIND,
    judge_sliding_window,
    llm_window_judge,
)
from evaluator.judges.sliding_window import prompt_version as window_version
from evaluator.judges.transcript import trajectory_hash
from evaluator.records import EpisodeRecord, Judgement, UnitScore
from evaluator.scoring import base_unit_score


async def _window(inp: JudgeInput) -> Judgement:
    assert inp.task is not None
    judge = llm_window_judge(inp.task, inp.client, inp.model, inp.settings)
    return await judge_sliding_window(inp.record, inp.task, judge, inp.model, inp.settings,
                                      inp.thash)


def judge_kinds(record: EpisodeRecord, task: Task | None, settings: JudgeSettings) -> list[str]:
    if task is None:
        raise Unjudgeable("rubric task not found")
    if not task.rubrics:
        raise Unjudgeable(f"no judge for {record.benchmark}/{record.subset}")
    return [SLIDING_WINDOW_KIND]


def score_record(record: EpisodeRecord, index: JudgementLookup, ctx: ScoreContext
                 ) -> UnitScore | None:
    """1 when every rubric ended satisfied; `dims`: per rubric 0/1 and `rubric_accuracy`."""
    s = ctx.settings
    base = base_unit_score(record)
    j = index.get(trajectory_hash(record), SLIDING_WINDOW_KIND,
                  window_version(s.window_turns, s.window_overlap))
    if j is None:
        base.judge_error = "not judged"
        return base
    if j.score is None:
        base.judge_error = j.error or "judge error"
        return base
    base.score = j.score
    base.success = j.score >= 1.0
    base.dims = dict(j.scores)
    if j.scores:
        base.dims["rubric_accuracy"] = sum(j.scores.values()) / len(j.scores)
    return base


class RubricSummary(msgspec.Struct):
    """Units, scored units, successes (every rubric satisfied) and the mean rubric accuracy."""

    n_units: int
    n_scored: int
    successes: int
    rubric_accuracy: float | None


def summarize(units: list[UnitScore]) -> RubricSummary | None:
    if not units:
        return None
    scored = [u for u in units if u.score is not None]
    acc = [u.dims["rubric_accuracy"] for u in scored if "rubric_accuracy" in u.dims]
    return RubricSummary(n_units=len(units), n_scored=len(scored),
                         successes=sum(1 for u in scored if u.success),
                         rubric_accuracy=sum(acc) / len(acc) if acc else None)


def judge_lines(s: RubricSummary) -> list[str]:
    line = (f"  rubric tasks: success {s.successes}/{s.n_scored} scored "
            f"({s.n_units - s.n_scored} unscored)")
    if s.rubric_accuracy is not None:
        line += f", rubric accuracy {100 * s.rubric_accuracy:.1f}%"
    return [line]


BENCHMARK = Benchmark(
    name="vitabench",
    title="VitaBench",
    data=FORMAT,
    protocols={},
    judges={SLIDING_WINDOW_KIND: JudgeSpec(
        kind=SLIDING_WINDOW_KIND, version=lambda s, p: window_version(s.window_turns,
                                                                       s.window_overlap),
        run=_window, prompt_files=("../../judges/prompts/sliding_window.txt",),
        pass_threshold=1.0)},
    judge_kinds=judge_kinds,
    score=score_record,
    report=ReportSection(summarize=summarize, judge_lines=judge_lines),
    description="stateful life-service tools, judged by the sliding-window rubric evaluator "
                "(environment and protocols not built yet)",
)
