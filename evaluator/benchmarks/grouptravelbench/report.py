"""GroupTravelBench's report section: the rule metrics, the judge score S and the paper's
"Other" composite, overall, per subset and per difficulty.

The rule metrics average trials per task, then tasks (a task without a metric counts 0), as
the reference's summary does (`aggregate.summarise`). The judge score S follows the run's
`options.judge_average`: "tasks" (the reference's report) averages each task's rated trials
(a crashed run counts 0, a failed judgement is left out), a task never rated counts 0, then
averages the tasks (each average rounded to 2 decimals); "units" averages the rated units.
Other = (PC% + GF + PV% + S) / 4, the paper's headline next to GU, shown when the judge ran.
Judge errors count the units whose judgement or meta-judgement failed.
"""

from __future__ import annotations

import msgspec

from evaluator.records import UnitScore
from evaluator.report.tables import Table, num

from .aggregate import Summary, TaskMetrics, summarise
from .options import POI_NONE
from .rubric import DIMENSION_KEYS
from .scoring import AVERAGE, CMP_KEYS, CMP_PREFIX, DIFFICULTY, LJ, POI_LABEL, PV_PREFIX


class JudgeSummary(msgspec.Struct):
    """The LLM judge over a group: S (0..100) and each dimension (0..100)."""

    rated: int       # units with a judge score (crashed runs included)
    tasks: int       # tasks averaged ("tasks") or units ("units")
    score: float
    dimensions: dict[str, float]
    average: str = "tasks"


class GroupSummary(msgspec.Struct):
    overall: Summary
    subsets: dict[str, Summary] = {}
    difficulties: dict[str, Summary] = {}
    judge: JudgeSummary | None = None
    judge_by_difficulty: dict[str, JudgeSummary] = {}
    judge_by_subset: dict[str, JudgeSummary] = {}
    other: float | None = None  # (PC% + GF + PV% + S) / 4
    other_by_difficulty: dict[str, float] = {}
    other_by_subset: dict[str, float] = {}
    judge_errors: int = 0        # units whose judgement or meta-judgement failed
    validity_issues: dict[str, int] = {}   # issues by type, over every trial's final plan
    compromises: dict[str, int] = {}       # solicited, accepted, refused, invalid
    poi_tables: list[str] = []             # the POI tables the rule metrics read ("none")


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


def _s(u: UnitScore, key: str) -> float | None:
    """A judge value of a unit in 0..100 as the reference has it (2 decimals)."""
    v = u.dims.get(key)
    return None if v is None else round(v * 100, 2)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _judge(units: list[UnitScore]) -> JudgeSummary | None:
    """S and its dimensions over `units` (None when no unit of them was judged)."""
    rated = [u for u in units if LJ in u.dims]
    if not rated and not any(u.judge_error and u.judge_error.startswith("gtb_") for u in units):
        return None
    average = next((u.labels.get(AVERAGE, "tasks") for u in units), "tasks")
    keys = [LJ, *(f"{LJ}:{k}" for k in DIMENSION_KEYS)]
    if average == "units":
        if not rated:
            return None
        values = {k: round(_mean([v for u in rated if (v := _s(u, k)) is not None] or [0.0]), 2)
                  for k in keys}
        return JudgeSummary(len(rated), len(rated), values[LJ],
                            {k.split(":", 1)[1]: values[k] for k in keys[1:]}, average)
    by_task: dict[tuple[str, str], list[UnitScore]] = {}
    for u in units:
        by_task.setdefault((u.subset, u.task_id), []).append(u)
    per_task = []
    for group in by_task.values():
        entry = {}
        for k in keys:
            vals = [v for u in group if (v := _s(u, k)) is not None]
            entry[k] = round(_mean(vals), 2) if vals else 0.0
        per_task.append(entry)
    values = {k: round(_mean([t[k] for t in per_task]), 2) for k in keys}
    return JudgeSummary(len(rated), len(per_task), values[LJ],
                        {k.split(":", 1)[1]: values[k] for k in keys[1:]}, average)


def other(s: Summary, j: JudgeSummary | None) -> float | None:
    """(PC% + GF + PV% + S) / 4 from the group's (rounded) averages, as the reference's report
    computes it; None without a judge score."""
    if j is None:
        return None
    return (s.pc.average * 100 + s.gf.average + s.pv.average * 100 + j.score) / 4


def _counts(units: list[UnitScore], prefix: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for u in units:
        for k, v in u.dims.items():
            if k.startswith(prefix):
                out[k[len(prefix):]] = out.get(k[len(prefix):], 0) + int(v)
    return dict(sorted(out.items()))


def summarize(units: list[UnitScore]) -> GroupSummary | None:
    units = [u for u in units if u.score is not None]
    if not units:
        return None
    tasks = _tasks(units)
    subsets = sorted({t.subset for t in tasks})
    level = {(u.subset, u.task_id): u.labels.get(DIFFICULTY, "unknown") for u in units}
    levels = sorted(set(level.values()))
    by_level = {d: [u for u in units if level[(u.subset, u.task_id)] == d] for d in levels}
    by_subset = {s: [u for u in units if u.subset == s] for s in subsets}
    rules = {s: summarise([t for t in tasks if t.subset == s]) for s in subsets}
    rules_level = {d: summarise([t for t in tasks if level[(t.subset, t.task_id)] == d])
                   for d in levels}
    judged_levels = {d: j for d in levels if (j := _judge(by_level[d])) is not None}
    judged_subsets = {s: j for s in subsets if (j := _judge(by_subset[s])) is not None}
    overall = summarise(tasks)
    judge = _judge(units)
    return GroupSummary(
        overall, rules, rules_level, judge, judged_levels, judged_subsets,
        other(overall, judge),
        {d: o for d in levels if (o := other(rules_level[d], judged_levels.get(d))) is not None},
        {s: o for s in subsets if (o := other(rules[s], judged_subsets.get(s))) is not None},
        sum(1 for u in units if u.judge_error), _counts(units, PV_PREFIX),
        _counts(units, CMP_PREFIX),
        sorted({u.labels.get(POI_LABEL) or POI_NONE for u in units}))


def _row(label: str, name: str, s: Summary, j: JudgeSummary | None,
         o: float | None) -> list[str]:
    return [label, name, str(s.tasks), num(s.pc.average * 100, 1), num(s.gu.average, 2),
            num(s.gf.average, 2), num(s.pv.average * 100, 1),
            num(j.score, 2) if j is not None else "—", num(o, 2)]


def tables(runs: list[tuple[str, GroupSummary | None]]) -> list[Table]:
    main = Table("GroupTravelBench (rule metrics, LLM judge S and Other = (PC + GF + PV + S)/4)",
                 ["run", "group", "tasks", "PC %", "GU / user", "GF", "PV %", "judge S",
                  "Other"])
    dims = Table("GroupTravelBench LLM judge by dimension (0-100)",
                 ["run", "rated", "averaged over", "judge errors", *DIMENSION_KEYS])
    issues = Table("GroupTravelBench plan-validity issues by type", ["run", "type", "issues"])
    comp = Table("GroupTravelBench compromises", ["run", *CMP_KEYS])
    for label, s in runs:
        if s is None:
            continue
        main.rows.append(_row(label, "overall", s.overall, s.judge, s.other))
        for name, sub in s.subsets.items():
            main.rows.append(_row(label, f"subset {name}", sub, s.judge_by_subset.get(name),
                                  s.other_by_subset.get(name)))
        for name, sub in s.difficulties.items():
            main.rows.append(_row(label, f"difficulty {name}", sub,
                                  s.judge_by_difficulty.get(name),
                                  s.other_by_difficulty.get(name)))
        if s.judge is not None or s.judge_errors:
            j = s.judge
            dims.rows.append([label, str(j.rated if j else 0),
                              f"{j.tasks} {j.average}" if j else "—", str(s.judge_errors),
                              *(num(j.dimensions.get(k) if j else None, 2)
                                for k in DIMENSION_KEYS)])
        issues.rows.extend([label, t, str(n)] for t, n in s.validity_issues.items())
        comp.rows.append([label, *(str(s.compromises.get(k, 0)) for k in CMP_KEYS)])
    tables_used = sorted({p for _, s in runs if s is not None for p in s.poi_tables})
    if POI_NONE in tables_used:
        main.note = ("POI table: none for some units: restaurants, category and hotel "
                     "preferences score nothing and opening hours are not checked (GU/GF/PV "
                     "without POI table)")
    elif tables_used:
        main.note = "POI table: " + ", ".join(tables_used)
    return [t for t in (main, dims, issues, comp) if t.rows]


def judge_lines(s: GroupSummary) -> list[str]:
    o = s.overall
    line = (f"  grouptravelbench  PC {num(o.pc.average * 100)}%  GU {num(o.gu.average)}  "
            f"GF {num(o.gf.average)}  PV {num(o.pv.average * 100)}% over {o.tasks} tasks")
    if s.judge is not None:
        line += (f"; LLM judge S {num(s.judge.score, 2)} ({s.judge.rated} units rated); "
                 f"Other {num(s.other, 2)}")
    if s.judge_errors:
        line += f"; {s.judge_errors} judge errors"
    return [line]

