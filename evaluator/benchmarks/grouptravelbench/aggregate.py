"""From one finished chat to the four rule metrics, and from trials to tasks to summaries.

A trial is scored as the reference scores one result line:
- a failed run (`success` False) or one without an effective table: every metric is an
  error;
- otherwise PC is computed (it needs no plan); GU, GF and PV need `plan_generated` (the
  protocol's flag: the agent ended the chat with a plan, or its forced final plan passed the
  structural gate) and a plan found by `plan.extract_plan`, else they are errors.
Trials of a task are averaged over the trials where the metric is not an error (a task with
one trial keeps its values; PV becomes the share of valid trials). A summary averages tasks,
counting a task whose metric is an error as 0; PC and PV are ratios in [0, 1] (x100 for the
paper's percentages), GU is points per user, GF is 0..100; averages, minima and maxima are
rounded to 2 decimals. The reference summarises all tasks and each difficulty_type.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import msgspec

from .completeness import CompletenessResult, preference_completeness
from .plan import extract_plan
from .poi import PoiLookup
from .utility import FairnessResult, UtilityResult, group_fairness, group_utility
from .validity import ValidityResult, plan_validity

PLAN_METRICS = ("utility", "fairness", "validity")
NO_RUN = "inference failed (no effective preferences)"
NO_PLAN = "plan not generated"
NO_PLAN_FOUND = "failed to extract plan from conversation"


class TrialMetrics(msgspec.Struct, omit_defaults=True):
    """The four metrics of one trial; `errors` names each metric that could not be computed
    (key: "completeness", "utility", "fairness", "validity") and why."""

    task_id: str
    trial: int = 0
    subset: str = ""
    plan_generated: bool = False
    completeness: CompletenessResult | None = None
    utility: UtilityResult | None = None
    fairness: FairnessResult | None = None
    validity: ValidityResult | None = None
    errors: dict[str, str] = {}

    @property
    def pc(self) -> float | None:
        return self.completeness.recall if self.completeness is not None else None

    @property
    def gu(self) -> float | None:
        return self.utility.per_user_average if self.utility is not None else None

    @property
    def gf(self) -> float | None:
        return self.fairness.fairness if self.fairness is not None else None

    @property
    def pv(self) -> float | None:
        return (1.0 if self.validity.valid else 0.0) if self.validity is not None else None


def score_trial(*, task_id: str, history: Sequence[Mapping[str, Any]], agent_table: Any,
                effective: Mapping[str, Any], users: Sequence[str], plan_generated: bool,
                success: bool = True, trial: int = 0, subset: str = "",
                poi: PoiLookup | None = None) -> TrialMetrics:
    """Score one finished chat. `history` is the chat record (see `chat`), `agent_table` the
    agent's last preference table, `effective` the effective table, `users` the members in
    task order."""
    out = TrialMetrics(task_id=task_id, trial=trial, subset=subset,
                       plan_generated=plan_generated)
    if success is False or not effective:
        out.errors = {name: NO_RUN for name in ("completeness", *PLAN_METRICS)}
        return out
    out.completeness = preference_completeness(agent_table, effective)
    plan = extract_plan(history) if plan_generated else None
    if plan is None:
        out.errors = {name: NO_PLAN if not plan_generated else NO_PLAN_FOUND
                      for name in PLAN_METRICS}
        return out
    out.utility = group_utility(plan, effective, users, poi)
    out.fairness = group_fairness(plan, effective, users, poi)
    out.validity = plan_validity(plan, users, poi)
    return out


class TaskMetrics(msgspec.Struct, frozen=True):
    """A task's metrics over its trials; None when no trial produced the metric."""

    task_id: str
    subset: str
    trials: int
    plan_generated: bool
    pc: float | None
    gu: float | None
    gu_total: float | None
    gf: float | None
    pv: float | None


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def average_trials(trials: Iterable[TrialMetrics]) -> list[TaskMetrics]:
    """One record per (subset, task_id), in order of first appearance."""
    groups: dict[tuple[str, str], list[TrialMetrics]] = {}
    for trial in trials:
        groups.setdefault((trial.subset, trial.task_id), []).append(trial)
    out = []
    for (subset, task_id), group in groups.items():
        def values(metric: Callable[[TrialMetrics], float | None],
                   _group: list[TrialMetrics] = group) -> list[float]:
            return [v for v in map(metric, _group) if v is not None]
        out.append(TaskMetrics(
            task_id=task_id, subset=subset, trials=len(group),
            plan_generated=any(t.plan_generated for t in group),
            pc=_mean(values(lambda t: t.pc)), gu=_mean(values(lambda t: t.gu)),
            gu_total=_mean(values(lambda t: t.utility.total if t.utility else None)),
            gf=_mean(values(lambda t: t.gf)), pv=_mean(values(lambda t: t.pv))))
    return out


class MetricStats(msgspec.Struct, frozen=True):
    count: int  # tasks
    valid_count: int  # tasks where the metric was computed
    average: float
    minimum: float
    maximum: float


class Summary(msgspec.Struct, frozen=True):
    tasks: int
    pc: MetricStats  # ratio of collected preference items
    gu: MetricStats  # points per user
    gf: MetricStats  # 0..100
    pv: MetricStats  # ratio of valid plans


def _stats(values: list[float | None]) -> MetricStats:
    filled = [0.0 if v is None else v for v in values]
    if not filled:
        return MetricStats(0, 0, 0.0, 0.0, 0.0)
    return MetricStats(len(filled), sum(v is not None for v in values),
                       round(sum(filled) / len(filled), 2), round(min(filled), 2),
                       round(max(filled), 2))


def summarise(tasks: Sequence[TaskMetrics]) -> Summary:
    """Average over tasks; a task without the metric counts 0."""
    return Summary(len(tasks), _stats([t.pc for t in tasks]), _stats([t.gu for t in tasks]),
                   _stats([t.gf for t in tasks]), _stats([t.pv for t in tasks]))


def summarise_by(tasks: Sequence[TaskMetrics],
                 key: Callable[[TaskMetrics], str]) -> dict[str, Summary]:
    """One summary per group (e.g. per difficulty_type), groups in sorted order."""
    groups: dict[str, list[TaskMetrics]] = {}
    for task in tasks:
        groups.setdefault(key(task), []).append(task)
    return {name: summarise(groups[name]) for name in sorted(groups)}


def difficulty_key(difficulty: Mapping[str, str]) -> Callable[[TaskMetrics], str]:
    """Group key from a task_id -> difficulty_type map ("unknown" when missing)."""
    return lambda task: difficulty.get(task.task_id, "unknown")
