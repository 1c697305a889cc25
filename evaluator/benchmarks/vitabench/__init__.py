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

from evaluator.benchmarks.base import (
    Benchmark,
    DeferredEnvironment,
    JudgeSpec,
    ReportSection,
    deferred,
)
from evaluator.benchmarks.vitabench.data import FORMAT
from evaluator.judges.sliding_window import SLIDING_WINDOW_KIND

from .names import SUBSET_DOMAINS, TERMINATIONS
from .options import VitaOptions
from .prompting import ROLES
from .settings import PROFILES

__all__ = ["BENCHMARK"]

# the tools, protocol, judge and report are imported when first used: registering VitaBench
# costs a run of another benchmark nothing at start-up
_JUDGE, _REPORT = f"{__name__}.judge", f"{__name__}.report"
_ENVIRONMENT = f"{__name__}.environment"
run_episode = deferred(f"{__name__}.protocol", "run_episode")
_settings_version = deferred("evaluator.judges.sliding_window", "settings_version")
_rerun_attempts = deferred(_JUDGE, "rerun_attempts")
import_reference = deferred(f"{__name__}.prompt_import", "import_reference")
# without a `prompt_source` file, `prompts import` asks each importer whether it recognises a
# checkout
import_reference.recognises = deferred(  # type: ignore[attr-defined]
    f"{__name__}.prompt_import", "recognises")


def _reruns(run_dir: Path, options: Any) -> set[str]:
    return set(_rerun_attempts(run_dir, options))


BENCHMARK = Benchmark(
    name="vitabench",
    title="VitaBench",
    data=FORMAT,
    protocols={subset: run_episode for subset in SUBSET_DOMAINS},
    environment=DeferredEnvironment(_ENVIRONMENT, "ENVIRONMENT"),
    judges={SLIDING_WINDOW_KIND: JudgeSpec(
        kind=SLIDING_WINDOW_KIND, version=lambda s, p: _settings_version(s),
        options_version=deferred(_JUDGE, "judge_version"), run=deferred(_JUDGE, "run_judge"),
        prompt_files=("../../judges/prompts/sliding_window.txt",
                      "prompts/judge_window_system.txt", "prompts/judge_window_user.txt"),
        pass_threshold=1.0)},
    judge_kinds=deferred(_JUDGE, "judge_kinds"),
    score=deferred(_JUDGE, "score_record"),
    report=ReportSection.deferred(_REPORT, plots="plots", episodes=True),
    ok_terminations=TERMINATIONS,
    profiles=PROFILES,
    prompts=ROLES,
    prompt_importer=import_reference,
    domains=deferred(_ENVIRONMENT, "select_domains"),
    options=VitaOptions,
    reruns=_reruns,
    description="stateful life-service tools (delivery, in-store, travel agency, cross-domain) "
                "with a simulated user, judged by the sliding-window rubric evaluator",
)
