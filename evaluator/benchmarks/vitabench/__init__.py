"""VitaBench (stateful life-service tasks: delivery, in-store, travel agency): the benchmark.

    data          data.py                        tasks, rubrics (state then overall), databases
    environment   environment.py, env/           per-episode copy-on-write task databases
    protocols     protocol.py, dialogue.py       greeting, user simulator, agent tool loop,
                                                 trial reruns
    prompts       prompting.py, prompts/         prompt roles, the built-in texts
    import        prompt_import.py               `agentsweep prompts import` of the reference's
    judges        judge.py, judge_reference.py,  the rubric sliding-window evaluator (project or
                  judge_read.py                  reference layout, the reference's reading)
    scoring       judge.py                       all rubrics satisfied; max_steps scores 0
    report        report.py                      Avg@k/Pass@k/Pass^k per domain, rubrics, tools
    settings      settings.py, options.py        the paper profile, the `[options]` table

See docs/vitabench.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evaluator.benchmarks.base import Benchmark, JudgeSpec, ReportSection, deferred
from evaluator.benchmarks.vitabench.data import FORMAT
from evaluator.judges.sliding_window import SLIDING_WINDOW_KIND, settings_version

from .env.database import SUBSET_DOMAINS
from .environment import ENVIRONMENT, select_domains
from .judge import (
    final_state,
    judge_kinds,
    judge_version,
    judged_task,
    judged_turns,
    rerun_attempts,
    run_judge,
    score_record,
)
from .options import VitaOptions
from .prompt_import import import_reference
from .prompting import ROLES
from .protocol import TERMINATIONS, run_episode
from .settings import PROFILES

__all__ = ["BENCHMARK", "final_state", "judged_task", "judged_turns"]


_REPORT = f"{__name__}.report"  # imported when first called: a run needs none of it


def _reruns(run_dir: Path, options: Any) -> set[str]:
    return set(rerun_attempts(run_dir, options))


BENCHMARK = Benchmark(
    name="vitabench",
    title="VitaBench",
    data=FORMAT,
    protocols={subset: run_episode for subset in SUBSET_DOMAINS},
    environment=ENVIRONMENT,
    judges={SLIDING_WINDOW_KIND: JudgeSpec(
        kind=SLIDING_WINDOW_KIND, version=lambda s, p: settings_version(s),
        options_version=judge_version, run=run_judge,
        prompt_files=("../../judges/prompts/sliding_window.txt",
                      "prompts/judge_window_system.txt", "prompts/judge_window_user.txt"),
        pass_threshold=1.0)},
    judge_kinds=judge_kinds,
    score=score_record,
    report=ReportSection(summarize=deferred(_REPORT, "summarize"),
                         tables=deferred(_REPORT, "tables"), plots=deferred(_REPORT, "plots"),
                         judge_lines=deferred(_REPORT, "judge_lines"), episodes=True),
    ok_terminations=TERMINATIONS,
    profiles=PROFILES,
    prompts=ROLES,
    prompt_importer=import_reference,
    domains=select_domains,
    options=VitaOptions,
    reruns=_reruns,
    description="stateful life-service tools (delivery, in-store, travel agency, cross-domain) "
                "with a simulated user, judged by the sliding-window rubric evaluator",
)
