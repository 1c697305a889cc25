"""GroupTravelBench's rule judge, unit scores and report section.

The rule judge (`gtb_metrics`, no model) scores one chat with `aggregate.score_trial` from the
record's `extra` (chat, agent table, effective table, plan_generated): PC, GU, GF, PV go to
`Judgement.scores` (a metric that could not be computed is left out; the reason is in
`reasoning`). No POI table ships with the data here, so opening hours and hotel stars are
not checked (`poi=None`). A unit's score is PV (1 when the final plan is valid); `dims`
holds the four metrics. The report averages trials per task, then tasks (a task without a
metric counts 0), overall and per subset, as the benchmark's summary does.
"""

from __future__ import annotations

import time
from typing import Any

import msgspec

from evaluator.benchmarks.base import JudgeInput, JudgementLookup, ReportSection, ScoreContext
from evaluator.judges.transcript import trajectory_hash
from evaluator.records import EpisodeRecord, Judgement, UnitScore
from evaluator.report.tables import Table, num
from evaluator.scoring import base_unit_score

from .aggregate import Summary, TaskMetrics, score_trial, summarise

METRICS = "gtb_metrics"
METRICS_VERSION = "gtb-metrics-v1"
DIMS = ("pc", "gu", "gf", "pv")


def metrics(inp: JudgeInput) -> Judgement:
    record = inp.record
    extra = record.extra
    trial = score_trial(
        task_id=record.task_id, history=extra.get("chat") or [],
        agent_table=extra.get("agent_table"), effective=extra.get("effective") or {},
        users=extra.get("users") or [], plan_generated=bool(extra.get("plan_generated")),
        success=record.termination not in ("agent_error", "user_error", "context_overflow"),
        trial=record.unit.trial, subset=record.subset)
    values = {"pc": trial.pc, "gu": trial.gu, "gf": trial.gf, "pv": trial.pv}
    scores = {k: float(v) for k, v in values.items() if v is not None}
    return Judgement(unit=record.unit, trajectory_hash=inp.thash, judge_model="rule",
                     prompt_version=METRICS_VERSION, kind=METRICS, score=scores.get("pv", 0.0),
                     scores=scores, reasoning=dict(trial.errors), created_at=time.time())


def judge_kinds(record: EpisodeRecord, task: Any, settings: Any) -> list[str]:
    return [METRICS]


def score(record: EpisodeRecord, judgements: JudgementLookup, ctx: ScoreContext
          ) -> UnitScore | None:
    unit = base_unit_score(record)
    found = judgements.get(trajectory_hash(record), METRICS, METRICS_VERSION)
    if found is None:
        unit.judge_error = "not judged"
        return unit
    unit.dims = {k: v for k, v in (found.scores or {}).items() if k in DIMS}
    unit.score = unit.dims.get("pv", 0.0)
    unit.success = unit.score == 1.0
    return unit


class GroupSummary(msgspec.Struct):
    overall: Summary
    subsets: dict[str, Summary] = {}


def _tasks(units: list[UnitScore]) -> list[TaskMetrics]:
    groups: dict[tuple[str, str], list[UnitScore]] = {}
    for u in units:
        groups.setdefault((u.subset, u.task_id), []).append(u)

    def mean(group: list[UnitScore], key: str) -> float | None:
        vals = [u.dims[key] for u in group if key in u.dims]
        return sum(vals) / len(vals) if vals else None

    return [TaskMetrics(task_id=task, subset=subset, trials=len(g),
                        plan_generated=any("gu" in u.dims for u in g), pc=mean(g, "pc"),
                        gu=mean(g, "gu"), gu_total=None, gf=mean(g, "gf"), pv=mean(g, "pv"))
            for (subset, task), g in groups.items()]


def summarize(units: list[UnitScore]) -> GroupSummary | None:
    units = [u for u in units if u.judge_error is None]
    if not units:
        return None
    tasks = _tasks(units)
    subsets = sorted({t.subset for t in tasks})
    return GroupSummary(summarise(tasks),
                        {s: summarise([t for t in tasks if t.subset == s]) for s in subsets})


def _row(label: str, name: str, s: Summary) -> list[str]:
    return [label, name, str(s.tasks), num(s.pc.average * 100), num(s.gu.average),
            num(s.gf.average), num(s.pv.average * 100)]


def tables(runs: list[tuple[str, GroupSummary | None]]) -> list[Table]:
    t = Table("GroupTravelBench (rule metrics)",
              ["run", "subset", "tasks", "PC %", "GU / user", "GF", "PV %"])
    for label, s in runs:
        if s is None:
            continue
        t.rows.append(_row(label, "overall", s.overall))
        for name, sub in s.subsets.items():
            t.rows.append(_row(label, name, sub))
    return [t] if t.rows else []


def judge_lines(s: GroupSummary) -> list[str]:
    o = s.overall
    line = (f"  grouptravelbench  PC {num(o.pc.average * 100)}%  GU {num(o.gu.average)}  "
            f"GF {num(o.gf.average)}  PV {num(o.pv.average * 100)}% over {o.tasks} tasks")
    return [line]


SECTION = ReportSection(summarize=summarize, tables=tables, judge_lines=judge_lines)
