"""VitaBench's judging and scoring: the sliding-window rubric evaluator in the layout the
options choose, which episodes it judges, how a judgement becomes a unit score, and which
trials the run must play again (the reference reruns a trial whose judge answer it cannot
use, and drops it after its reruns; docs/vitabench.md, "Trial reruns").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from backends.types import ChatMessage
from bench_data.types import Task
from evaluator.benchmarks.base import (
    JudgeInput,
    JudgementLookup,
    ScoreContext,
    Unjudgeable,
)
from evaluator.judges.settings import JudgeSettings
from evaluator.judges.sliding_window import (
    SLIDING_WINDOW_KIND,
    judge_sliding_window,
    llm_window_judge,
    settings_version,
)
from evaluator.judges.transcript import conversation_turns, trajectory_hash
from evaluator.records import EpisodeRecord, Judgement, UnitScore
from evaluator.scoring import base_unit_score

from .judge_reference import TRIAL_RERUN, judge_reference_layout
from .options import VitaOptions, options_of
from .prompting import prompt_set

UNJUDGED_ZERO = ("max_steps", "invalid_agent_message")
"""Terminations the reference scores 0 without judging."""
DROPPED = "trial dropped"


def judge_version(settings: JudgeSettings, prompts: Any, options: Any) -> str:
    """The judgement key's prompt version: the window geometry, final state and rubric list
    (`settings_version`), the options that change what the judge sees or how its answer is
    read, and the prompt set when it is not the built-in one."""
    opts = options_of(options)
    base = settings_version(settings)
    if opts.reference:
        base += "+ref"
    if opts.judge_reader == "reference":
        base += "+refread"
    if opts.user_change_keeps_met:
        base += "+keepmet"
    return prompts.version(base) if prompts is not None else base


def final_state(record: EpisodeRecord) -> str:
    """What `judge.window_final_state` shows the judge (project layout): the database records
    the episode created or changed (`extra["db_changes"]`, per table) as JSON; the rest of
    the database is as the task file gives it."""
    changes = record.extra.get("db_changes") or {}
    if not changes:
        return "No database records were created or changed."
    return ("Database records created or changed (per table, as they were left):\n"
            + json.dumps(changes, ensure_ascii=False, sort_keys=False))


def judged_task(task: Task, settings: JudgeSettings) -> Task:
    """The task as the judge sees it: the rubric list `judge.rubric_set` names (the loader's
    default, the state rubrics, when unset) and the user's instruction text alone (the
    reference's judge gets `instructions`, not the persona the simulator also plays)."""
    rubrics = (task.extra.get("rubric_sets") or {}).get(settings.rubric_set) or task.rubrics
    instructions = str(task.extra.get("instruction_text") or task.instructions)
    return msgspec.structs.replace(task, rubrics=rubrics, instructions=instructions)


def judged_turns(record: EpisodeRecord) -> list[ChatMessage]:
    """The messages the windows cut: the agent's greeting first (the reference's trajectory
    starts with it and its windows count it), then every non-system message."""
    turns = conversation_turns(record)
    greeting = record.extra.get("greeting")
    if isinstance(greeting, str) and greeting:
        turns = [ChatMessage(role="assistant", content=greeting), *turns]
    return turns


async def run_judge(inp: JudgeInput) -> Judgement:
    assert inp.task is not None
    opts = options_of(inp.options)
    version = judge_version(inp.settings, inp.prompts, inp.options)
    if opts.reference:
        return await judge_reference_layout(inp, opts, version)
    task = judged_task(inp.task, inp.settings)
    ps = prompt_set(inp.prompts)
    judge = llm_window_judge(task, inp.client, inp.model, inp.settings, final_state(inp.record),
                             template=ps.templates["judge_window"],
                             change_rule="keeps" if opts.user_change_keeps_met else "overturns")
    j = await judge_sliding_window(inp.record, task, judge, inp.model, inp.settings,
                                   inp.thash, turns=judged_turns(inp.record))
    return msgspec.structs.replace(j, prompt_version=version)


def judge_kinds(record: EpisodeRecord, task: Task | None, settings: JudgeSettings) -> list[str]:
    if record.termination in UNJUDGED_ZERO:  # scored 0 as it stands: no judge call is spent
        what = {"max_steps": "step limit reached"}.get(record.termination, record.termination)
        raise Unjudgeable(f"{what}: scored 0 without judging (as the reference)")
    if record.extra.get("dropped"):
        raise Unjudgeable(f"{DROPPED} after {record.termination} (as the reference)")
    if task is None:
        raise Unjudgeable("rubric task not found")
    if not judged_task(task, settings).rubrics:
        raise Unjudgeable(f"no judge for {record.benchmark}/{record.subset}")
    return [SLIDING_WINDOW_KIND]


def trial_attempt(record: EpisodeRecord) -> int:
    """Which attempt of its trial the record is (1-based; the reference's reruns)."""
    value = record.extra.get("trial_attempt", 1)
    return value if isinstance(value, int) and value >= 1 else 1


def score_record(record: EpisodeRecord, index: JudgementLookup, ctx: ScoreContext
                 ) -> UnitScore | None:
    """1 when every rubric ended satisfied; `dims`: per rubric 0/1 and `rubric_accuracy`. A
    dropped trial and one waiting for its rerun have no score (the reference leaves a
    dropped trial out of its results)."""
    opts = options_of(ctx.options)
    base = base_unit_score(record)
    if record.termination in UNJUDGED_ZERO:  # the reference scores it 0 without judging
        base.score = 0.0
        base.success = False
        return base
    if record.extra.get("dropped"):
        base.judge_error = f"{DROPPED}: {record.termination}"
        return base
    j = index.get(trajectory_hash(record), SLIDING_WINDOW_KIND,
                  judge_version(ctx.settings, ctx.prompts, ctx.options))
    if j is None:
        base.judge_error = "not judged"
        return base
    if j.score is None:
        base.judge_error = _error(j.error or "judge error", record, opts)
        return base
    base.score = j.score
    base.success = j.score >= 1.0
    base.dims = dict(j.scores)
    if j.scores:
        base.dims["rubric_accuracy"] = sum(j.scores.values()) / len(j.scores)
    return base


def _error(error: str, record: EpisodeRecord, opts: VitaOptions) -> str:
    if not error.startswith(TRIAL_RERUN) or opts.reruns == 0:
        return error
    attempt, limit = trial_attempt(record), 1 + opts.reruns
    if attempt >= limit:
        return f"{DROPPED}: {error} (attempt {attempt} of {limit})"
    return (f"awaiting its rerun (`agentsweep run --resume`): {error} "
            f"(attempt {attempt} of {limit})")


def rerun_attempts(run_dir: Path, options: Any) -> dict[str, int]:
    """Unit key -> attempts used, for every unit whose last record the run must play again:
    its judgement asks for a rerun of the trial and the trial has reruns left."""
    from evaluator.judges.pool import latest_records, read_judgements

    opts = options_of(options)
    if opts.reruns == 0 or not (run_dir / "episodes.jsonl").is_file():
        return {}
    last: dict[str, Judgement] = {}
    for j in read_judgements(run_dir):
        if j.kind == SLIDING_WINDOW_KIND:
            last[j.trajectory_hash] = j
    out: dict[str, int] = {}
    for record in latest_records(run_dir):
        if record.benchmark != "vitabench":
            continue
        j = last.get(trajectory_hash(record))
        attempt = trial_attempt(record)
        if (j is not None and j.score is None and (j.error or "").startswith(TRIAL_RERUN)
                and attempt < 1 + opts.reruns):
            out[record.unit.key] = attempt
    return out
