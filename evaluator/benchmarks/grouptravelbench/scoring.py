"""GroupTravelBench's rule judge, unit scores and report section.

The rule judge (`gtb_metrics`, no model) scores one chat with `aggregate.score_trial` from the
record's `extra` (chat, agent table, effective table, plan_generated): PC, GU, GF, PV go to
`Judgement.scores`, with the plan-validity issue counts by type under `pv:<type>` (a metric
that could not be computed is left out; the reason is in `reasoning`). No POI table ships
with the data here, so opening hours and hotel stars are not checked (`poi=None`). The LLM
judge and its meta-judge are in `judges.py`.

A unit's score is PV (1 when the final plan is valid); `dims` holds the four metrics, the
judge score `lj` (S / 100, calibrated when the meta-judge ran) with its dimensions
`lj:<dimension>` (normalised, 0..1), the validity issue counts and the compromise statistics
(`cmp:solicited|accepted|refused|invalid`); `labels` holds the task's difficulty. The report
averages trials per task, then tasks (a task without a metric counts 0), overall, per subset
and per difficulty, as the benchmark's summary does; the judge score averages the units the
judge rated (the reference drops the others from its statistics).
"""

from __future__ import annotations

import time
from typing import Any

import msgspec

from evaluator.benchmarks.base import JudgeInput, JudgementLookup, ReportSection, ScoreContext
from evaluator.judges.settings import JudgeSettings
from evaluator.judges.transcript import trajectory_hash
from evaluator.records import EpisodeRecord, Judgement, UnitScore
from evaluator.report.tables import Table, num
from evaluator.scoring import base_unit_score

from .aggregate import Summary, TaskMetrics, score_trial, summarise
from .judges import JUDGE_KIND, JUDGE_VERSION, META_KIND, META_VERSION
from .rubric import DIMENSION_KEYS, JudgeScores, score_values

METRICS = "gtb_metrics"
METRICS_VERSION = "gtb-metrics-v2"
DIMS = ("pc", "gu", "gf", "pv")
PV_PREFIX = "pv:"
CMP_PREFIX = "cmp:"
CMP_KEYS = ("solicited", "accepted", "refused", "invalid")
LJ = "lj"
DIFFICULTY = "difficulty"


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
    if trial.validity is not None:
        scores.update({PV_PREFIX + t: float(n) for t, n in trial.validity.issue_counts.items()})
    return Judgement(unit=record.unit, trajectory_hash=inp.thash, judge_model="rule",
                     prompt_version=METRICS_VERSION, kind=METRICS, score=scores.get("pv", 0.0),
                     scores=scores, reasoning=dict(trial.errors), created_at=time.time())


def judge_kinds(record: EpisodeRecord, task: Any, settings: JudgeSettings) -> list[str]:
    kinds = [METRICS, JUDGE_KIND]
    if settings.meta_judge:
        kinds.append(META_KIND)
    return kinds


def score(record: EpisodeRecord, judgements: JudgementLookup, ctx: ScoreContext
          ) -> UnitScore | None:
    unit = base_unit_score(record)
    unit.labels = {DIFFICULTY: str(record.extra.get(DIFFICULTY) or "unknown")}
    stats = record.extra.get("compromise_stats") or {}
    thash = trajectory_hash(record)
    found = judgements.get(thash, METRICS, METRICS_VERSION)
    if found is None:
        unit.judge_error = "not judged"
        return unit
    scores = found.scores or {}
    unit.dims = {k: v for k, v in scores.items() if k in DIMS or k.startswith(PV_PREFIX)}
    unit.dims.update({CMP_PREFIX + k: float(stats.get(k, 0)) for k in CMP_KEYS})
    judged = judgements.get(thash, JUDGE_KIND, JUDGE_VERSION)
    meta = (judgements.get(thash, META_KIND, META_VERSION) if ctx.settings.meta_judge
            else None)
    lj = judge_score(judged, meta)
    if lj is not None:
        unit.dims[LJ] = lj.final_average / 100
        unit.dims.update({f"{LJ}:{k}": v / 100 for k, v in lj.final.items() if v is not None})
    unit.score = unit.dims.get("pv", 0.0)
    unit.success = unit.score == 1.0
    return unit


def judge_score(judged: Judgement | None, meta: Judgement | None) -> JudgeScores | None:
    """`rubric.score_values` of the stored judgements: S and its dimensions, calibrated by the
    meta-judge's rating when it succeeded; None when the judge never gave a rating."""
    if judged is None or judged.score is None:
        return None
    rating = meta.scores.get("meta") if meta is not None and meta.score is not None else None
    return score_values(judged.scores, rating)


class JudgeSummary(msgspec.Struct):
    """The LLM judge over the units it rated: S (0..100) and each dimension (0..100)."""

    rated: int
    score: float
    dimensions: dict[str, float]


class GroupSummary(msgspec.Struct):
    overall: Summary
    subsets: dict[str, Summary] = {}
    difficulties: dict[str, Summary] = {}
    judge: JudgeSummary | None = None
    judge_by_difficulty: dict[str, JudgeSummary] = {}
    judge_by_subset: dict[str, JudgeSummary] = {}
    validity_issues: dict[str, int] = {}   # issues by type, over every trial's final plan
    compromises: dict[str, int] = {}       # solicited, accepted, refused, invalid


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


def _judge(units: list[UnitScore]) -> JudgeSummary | None:
    rated = [u for u in units if LJ in u.dims]
    if not rated:
        return None
    dims = {}
    for key in DIMENSION_KEYS:
        vals = [u.dims[f"{LJ}:{key}"] for u in rated if f"{LJ}:{key}" in u.dims]
        if vals:
            dims[key] = round(100 * sum(vals) / len(vals), 2)
    return JudgeSummary(len(rated), round(100 * sum(u.dims[LJ] for u in rated) / len(rated), 2),
                        dims)


def _counts(units: list[UnitScore], prefix: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for u in units:
        for k, v in u.dims.items():
            if k.startswith(prefix):
                out[k[len(prefix):]] = out.get(k[len(prefix):], 0) + int(v)
    return dict(sorted(out.items()))


def summarize(units: list[UnitScore]) -> GroupSummary | None:
    units = [u for u in units if u.judge_error is None]
    if not units:
        return None
    tasks = _tasks(units)
    subsets = sorted({t.subset for t in tasks})
    level = {(u.subset, u.task_id): u.labels.get(DIFFICULTY, "unknown") for u in units}
    levels = sorted(set(level.values()))
    by_level = {d: [u for u in units if level[(u.subset, u.task_id)] == d] for d in levels}
    judged_levels = {d: j for d in levels if (j := _judge(by_level[d])) is not None}
    judged_subsets = {s: j for s in subsets
                      if (j := _judge([u for u in units if u.subset == s])) is not None}
    return GroupSummary(
        summarise(tasks),
        {s: summarise([t for t in tasks if t.subset == s]) for s in subsets},
        {d: summarise([t for t in tasks if level[(t.subset, t.task_id)] == d]) for d in levels},
        _judge(units), judged_levels, judged_subsets, _counts(units, PV_PREFIX),
        _counts(units, CMP_PREFIX))


def _row(label: str, name: str, s: Summary, j: JudgeSummary | None) -> list[str]:
    return [label, name, str(s.tasks), num(s.pc.average * 100, 1), num(s.gu.average, 2),
            num(s.gf.average, 2), num(s.pv.average * 100, 1),
            num(j.score, 1) if j is not None else "—"]


def tables(runs: list[tuple[str, GroupSummary | None]]) -> list[Table]:
    main = Table("GroupTravelBench (rule metrics and LLM judge)",
                 ["run", "group", "tasks", "PC %", "GU / user", "GF", "PV %", "judge S"])
    dims = Table("GroupTravelBench LLM judge by dimension (0-100)",
                 ["run", "rated", *DIMENSION_KEYS])
    issues = Table("GroupTravelBench plan-validity issues by type", ["run", "type", "issues"])
    comp = Table("GroupTravelBench compromises", ["run", *CMP_KEYS])
    for label, s in runs:
        if s is None:
            continue
        main.rows.append(_row(label, "overall", s.overall, s.judge))
        for name, sub in s.subsets.items():
            main.rows.append(_row(label, f"subset {name}", sub, s.judge_by_subset.get(name)))
        for name, sub in s.difficulties.items():
            main.rows.append(_row(label, f"difficulty {name}", sub,
                                  s.judge_by_difficulty.get(name)))
        if s.judge is not None:
            dims.rows.append([label, str(s.judge.rated),
                              *(num(s.judge.dimensions.get(k), 1) for k in DIMENSION_KEYS)])
        issues.rows.extend([label, t, str(n)] for t, n in s.validity_issues.items())
        comp.rows.append([label, *(str(s.compromises.get(k, 0)) for k in CMP_KEYS)])
    return [t for t in (main, dims, issues, comp) if t.rows]


def judge_lines(s: GroupSummary) -> list[str]:
    o = s.overall
    line = (f"  grouptravelbench  PC {num(o.pc.average * 100)}%  GU {num(o.gu.average)}  "
            f"GF {num(o.gf.average)}  PV {num(o.pv.average * 100)}% over {o.tasks} tasks")
    if s.judge is not None:
        line += f"; LLM judge S {num(s.judge.score)} over {s.judge.rated} units"
    return [line]


SECTION = ReportSection(summarize=summarize, tables=tables, judge_lines=judge_lines)
