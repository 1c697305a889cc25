"""VitaBench's report section: per domain (task subset) Avg@k, Pass@k and Pass^k with 95%
bootstrap intervals over tasks for k = 1..n (n = the most trials of a task; the paper reports
k = n = 4 and plots k = 1..32 in its figure 4), rubric pass rates, termination reasons and
tool error rates by tool.

The metrics are the reference's (`agent_metrics.py`): success = every rubric satisfied
(`UnitScore.success`), Pass@k = 1 - C(n-c, k)/C(n, k), Pass^k = C(c, k)/C(n, k), Avg@k = the
task's mean reward over its n trials, each averaged over the tasks with at least k scored
trials (the registered reducers in `kernels.registry`: NaN, left out, for a task with n < k).
Intervals: `kernels.bootstrap.bootstrap_ci` over tasks (numpy, N_BOOT resamples, seed SEED).
A unit without a score (judge error, not judged) counts in no metric; an episode that hit
the step limit scores 0 without rubric verdicts, so it counts in the metrics and not in the
rubric pass rate. Terminations and tool calls come from every episode, judged or not.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

import msgspec
import numpy as np

from evaluator.records import UnitScore
from evaluator.report.summary import CurvePoint, _f
from evaluator.report.svg import LineSeries, line_chart
from evaluator.report.tables import Table, pct
from kernels.bootstrap import bootstrap_ci
from kernels.passk import task_counts
from kernels.registry import compute_curve

N_BOOT = 1000
SEED = 0
METRICS = (("avg@k", "Avg@k"), ("pass@k", "Pass@k"), ("pass^k", "Pass^k"))
ALL = "all"


class ToolErrors(msgspec.Struct):
    tool: str
    calls: int
    errors: int
    error_rate: float | None


class DomainReport(msgspec.Struct):
    domain: str
    n_tasks: int
    max_trials: int
    n_episodes: int
    n_scored: int
    successes: int
    curves: dict[str, list[CurvePoint]]  # "avg@k", "pass@k", "pass^k": k = 1..max_trials
    rubrics_judged: int
    rubrics_met: int
    rubric_pass_rate: float | None       # rubrics met / judged, pooled over episodes
    rubric_accuracy: float | None        # mean over episodes of its fraction met
    terminations: dict[str, int]
    tools: list[ToolErrors]              # by errors, then calls (descending), then name
    dropped: int = 0                     # trials dropped after their reruns (no score)
    awaiting_rerun: int = 0              # trials whose judgement asks for a rerun


class VitaSummary(msgspec.Struct):
    """report.json `benchmarks.vitabench`: the totals (`agentsweep judge`'s line) and one
    DomainReport per domain, plus "all" when there are several."""

    n_units: int
    n_scored: int
    successes: int
    rubric_accuracy: float | None
    n_boot: int = N_BOOT
    seed: int = SEED
    domains: list[DomainReport] = msgspec.field(default_factory=list)
    dropped: int = 0
    awaiting_rerun: int = 0


DROPPED_PREFIX = "trial dropped"
AWAITING_PREFIX = "awaiting its rerun"


def _count(units: list[UnitScore], prefix: str) -> int:
    return sum(1 for u in units if u.score is None and (u.judge_error or "").startswith(prefix))


def _curves(scored: list[UnitScore]) -> tuple[dict[str, list[CurvePoint]], int, int]:
    keys = [u.unit.task for u in scored]
    vals = np.array([float(u.score) for u in scored], dtype=np.float64)  # type: ignore[arg-type]
    succ = np.array([bool(u.success) if u.success is not None else float(u.score) >= 1.0  # type: ignore[arg-type]
                     for u in scored], dtype=bool)
    counts = task_counts(keys, vals, succ)
    ks = list(range(1, counts.max_trials + 1))
    out: dict[str, list[CurvePoint]] = {}
    for metric, _ in METRICS:
        points = []
        if ks:
            curve = compute_curve(metric, counts, ks)
            ci = bootstrap_ci(curve.per_task, n_boot=N_BOOT, seed=SEED, backend="numpy")
            points = [CurvePoint(k, _f(curve.value[i]), _f(ci.low[i]), _f(ci.high[i]),
                                 int(curve.n_tasks[i])) for i, k in enumerate(ks)]
        out[metric] = points
    return out, counts.n_tasks, counts.max_trials


def _domain(name: str, units: list[UnitScore], episodes: list[Any]) -> DomainReport:
    scored = [u for u in units if u.score is not None]
    curves, n_tasks, kmax = _curves(scored)
    judged = met = 0
    acc = []
    for u in scored:
        verdicts = [v for k, v in u.dims.items() if k != "rubric_accuracy"]
        judged += len(verdicts)
        met += sum(1 for v in verdicts if v >= 1.0)
        if "rubric_accuracy" in u.dims:
            acc.append(u.dims["rubric_accuracy"])
    tools: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for e in episodes:
        for tool, (calls, errors) in e.tools.items():
            tools[tool][0] += calls
            tools[tool][1] += errors
    rows = [ToolErrors(t, c, e, e / c if c else None) for t, (c, e) in tools.items()]
    rows.sort(key=lambda r: (-r.errors, -r.calls, r.tool))
    return DomainReport(
        domain=name, n_tasks=n_tasks, max_trials=kmax,
        n_episodes=len(episodes) or len(units), n_scored=len(scored),
        successes=sum(1 for u in scored if u.success), curves=curves,
        rubrics_judged=judged, rubrics_met=met,
        rubric_pass_rate=met / judged if judged else None,
        rubric_accuracy=sum(acc) / len(acc) if acc else None,
        terminations=dict(Counter(e.termination for e in episodes).most_common()),
        tools=rows, dropped=_count(units, DROPPED_PREFIX),
        awaiting_rerun=_count(units, AWAITING_PREFIX))


def summarize(units: list[UnitScore], episodes: list[Any] | None = None) -> VitaSummary | None:
    """The section's summary; `episodes` (the report's EpisodeStats) adds terminations and
    tool errors and the domains of episodes not scored yet."""
    episodes = episodes or []
    if not units and not episodes:
        return None
    scored = [u for u in units if u.score is not None]
    acc = [u.dims["rubric_accuracy"] for u in scored if "rubric_accuracy" in u.dims]
    out = VitaSummary(n_units=len(units), n_scored=len(scored),
                      successes=sum(1 for u in scored if u.success),
                      rubric_accuracy=sum(acc) / len(acc) if acc else None,
                      dropped=_count(units, DROPPED_PREFIX),
                      awaiting_rerun=_count(units, AWAITING_PREFIX))
    names = sorted({u.subset for u in units} | {e.subset for e in episodes})
    for name in names:
        out.domains.append(_domain(name, [u for u in units if u.subset == name],
                                   [e for e in episodes if e.subset == name]))
    if len(names) > 1:
        out.domains.append(_domain(ALL, units, episodes))
    return out


# ------------------------------------------------------------------ tables and plots


def _point(p: CurvePoint | None) -> str:
    if p is None or p.value is None:
        return "—"
    text = f"{100 * p.value:.1f}"
    if p.low is not None and p.high is not None:
        text += f" [{100 * p.low:.1f}, {100 * p.high:.1f}]"
    return text


def _at(points: list[CurvePoint], k: int) -> CurvePoint | None:
    return points[k - 1] if 0 < k <= len(points) else None


def _each(runs: list[tuple[str, VitaSummary | None]]):
    for label, s in runs:
        for d in (s.domains if s is not None else []):
            yield label, d


def tables(runs: list[tuple[str, VitaSummary | None]]) -> list[Table]:
    head = Table("VitaBench: Avg@k, Pass@k, Pass^k at k = n (x100, 95% bootstrap CI)",
                 ["run", "domain", "tasks", "n", "Avg@n", "Pass@n", "Pass^n"],
                 note="n = the most trials of a task; success = every rubric satisfied")
    curve = Table("VitaBench: Avg@k, Pass@k, Pass^k for k = 1..n (x100, 95% bootstrap CI)",
                  ["run", "domain", "k", "tasks", "Avg@k", "Pass@k", "Pass^k"],
                  note="at each k, the mean over the tasks with at least k scored trials")
    rub = Table("VitaBench: rubrics", ["run", "domain", "episodes", "scored", "all rubrics met",
                                       "rubrics met / judged", "rubric pass rate",
                                       "mean rubric accuracy"])
    term = Table("VitaBench: termination reasons", ["run", "domain", "termination",
                                                    "episodes", "share"])
    reruns = Table("VitaBench: trials dropped or awaiting a rerun",
                   ["run", "domain", "dropped", "awaiting a rerun"],
                   note="the reference reruns a trial it cannot finish or judge (up to 3 "
                   "times) and then drops it: no score; `agentsweep run --resume` plays the "
                   "awaiting ones")
    tool = Table("VitaBench: tool errors by tool", ["run", "domain", "tool", "calls", "errors",
                                                    "error rate"],
                 note="errors: error answers (the reference's error=true) and invalid calls; "
                 "refusals are answers")
    for label, d in _each(runs):
        n = d.max_trials
        head.rows.append([label, d.domain, str(d.n_tasks), str(n),
                          *(_point(_at(d.curves.get(m, []), n)) for m, _ in METRICS)])
        for k in range(1, n + 1):
            pts = [_at(d.curves.get(m, []), k) for m, _ in METRICS]
            curve.rows.append([label, d.domain, str(k), str(pts[0].n_tasks if pts[0] else 0),
                               *(_point(p) for p in pts)])
        rub.rows.append([label, d.domain, str(d.n_episodes), str(d.n_scored),
                         f"{d.successes} ({pct(d.successes / d.n_scored if d.n_scored else None)})",
                         f"{d.rubrics_met} / {d.rubrics_judged}", pct(d.rubric_pass_rate),
                         pct(d.rubric_accuracy)])
        if d.dropped or d.awaiting_rerun:
            reruns.rows.append([label, d.domain, str(d.dropped), str(d.awaiting_rerun)])
        total = sum(d.terminations.values())
        for reason, count in d.terminations.items():
            term.rows.append([label, d.domain, reason, str(count), pct(count / total)])
        for t in d.tools:
            tool.rows.append([label, d.domain, t.tool, str(t.calls), str(t.errors),
                              pct(t.error_rate)])
    return [t for t in (head, curve, rub, reruns, term, tool) if t.rows]


def plots(runs: list[tuple[str, VitaSummary | None]]) -> list[str]:
    """Per domain, Pass@k and Pass^k over k = 1..n for every run, with their 95% bands (the
    paper's figure 4)."""
    by_domain: dict[str, list[LineSeries]] = {}
    for label, d in _each(runs):
        if d.max_trials < 1:
            continue
        for metric, title in METRICS[1:]:
            pts = d.curves.get(metric, [])
            by_domain.setdefault(d.domain, []).append(LineSeries(
                label=f"{label} {title}", xs=[float(p.k) for p in pts],
                ys=[p.value for p in pts], lows=[p.low for p in pts],
                highs=[p.high for p in pts]))
    return [line_chart(f"VitaBench {domain}: Pass@k and Pass^k", series, x_label="k",
                       y_label="rate", kind="vitabench-passk")
            for domain, series in by_domain.items()]


def judge_lines(s: VitaSummary) -> list[str]:
    line = (f"  rubric tasks: success {s.successes}/{s.n_scored} scored "
            f"({s.n_units - s.n_scored} unscored)")
    if s.rubric_accuracy is not None:
        line += f", rubric accuracy {100 * s.rubric_accuracy:.1f}%"
    lines = [line]
    if s.dropped or s.awaiting_rerun:
        lines.append(f"  trials dropped: {s.dropped}; awaiting their rerun: {s.awaiting_rerun}"
                     + (" (`agentsweep run --resume RUN_DIR --judge` plays them)"
                        if s.awaiting_rerun else ""))
    return lines


__all__ = ["DomainReport", "ToolErrors", "VitaSummary", "judge_lines", "plots", "summarize",
           "tables"]
