"""VitaBench (stateful life-service tasks: delivery, in-store, travel agency): the benchmark.

    data          bench_data/vitabench.py        tasks, rubrics (state then overall), databases
    environment   environment.py, env/           per-episode copy-on-write task databases
    protocols     protocol.py, prompting.py      greeting, user simulator, agent tool loop
    judges        (generic) sliding_window.py    the rubric sliding-window evaluator
    scoring       here                           all rubrics satisfied; max_steps scores 0
    report        report.py                      Avg@k/Pass@k/Pass^k per domain, rubrics, tools
    settings      settings.py                    the paper profile
    prompts       prompts/                       agent and user-simulator system prompts

See docs/vitabench.md.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from backends.types import ChatMessage
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
    settings_version,
)
from evaluator.judges.transcript import conversation_turns, trajectory_hash
from evaluator.records import EpisodeRecord, Judgement, UnitScore
from evaluator.scoring import base_unit_score

from .env.database import SUBSET_DOMAINS
from .environment import ENVIRONMENT, select_domains
from .protocol import TERMINATIONS, run_episode
from .settings import PROFILES


def _report(name: str) -> Any:
    """report.py's function `name`, imported when first called: the report needs numpy and
    the kernels, a run does not."""
    def call(*args: Any, **kwargs: Any) -> Any:
        from . import report

        return getattr(report, name)(*args, **kwargs)
    return call


def final_state(record: EpisodeRecord) -> str:
    """What `judge.window_final_state` shows the judge: the database records the episode
    created or changed (`extra["db_changes"]`, per table) as JSON; the rest of the database
    is as the task file gives it."""
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


async def _window(inp: JudgeInput) -> Judgement:
    assert inp.task is not None
    task = judged_task(inp.task, inp.settings)
    judge = llm_window_judge(task, inp.client, inp.model, inp.settings,
                             final_state(inp.record))
    return await judge_sliding_window(inp.record, task, judge, inp.model, inp.settings,
                                      inp.thash, turns=judged_turns(inp.record))


def judge_kinds(record: EpisodeRecord, task: Task | None, settings: JudgeSettings) -> list[str]:
    if record.termination == "max_steps":  # scored 0 as it stands: no judge call is spent
        raise Unjudgeable("step limit reached: scored 0 without judging (as the reference)")
    if task is None:
        raise Unjudgeable("rubric task not found")
    if not judged_task(task, settings).rubrics:
        raise Unjudgeable(f"no judge for {record.benchmark}/{record.subset}")
    return [SLIDING_WINDOW_KIND]


def score_record(record: EpisodeRecord, index: JudgementLookup, ctx: ScoreContext
                 ) -> UnitScore | None:
    """1 when every rubric ended satisfied; `dims`: per rubric 0/1 and `rubric_accuracy`."""
    s = ctx.settings
    base = base_unit_score(record)
    if record.termination == "max_steps":  # the reference scores it 0 without judging
        base.score = 0.0
        base.success = False
        return base
    j = index.get(trajectory_hash(record), SLIDING_WINDOW_KIND, settings_version(s))
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


BENCHMARK = Benchmark(
    name="vitabench",
    title="VitaBench",
    data=FORMAT,
    protocols={subset: run_episode for subset in SUBSET_DOMAINS},
    environment=ENVIRONMENT,
    judges={SLIDING_WINDOW_KIND: JudgeSpec(
        kind=SLIDING_WINDOW_KIND, version=lambda s, p: settings_version(s),
        run=_window, prompt_files=("../../judges/prompts/sliding_window.txt",),
        pass_threshold=1.0)},
    judge_kinds=judge_kinds,
    score=score_record,
    report=ReportSection(summarize=_report("summarize"), tables=_report("tables"),
                         plots=_report("plots"), judge_lines=_report("judge_lines"),
                         episodes=True),
    ok_terminations=TERMINATIONS,
    profiles=PROFILES,
    domains=select_domains,
    description="stateful life-service tools (delivery, in-store, travel agency, cross-domain) "
                "with a simulated user, judged by the sliding-window rubric evaluator",
)
