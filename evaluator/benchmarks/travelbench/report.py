"""TravelBench's report section: the subset and overall scores as the paper reports them
(x100), in the report and in `agentsweep judge`'s summary."""

from __future__ import annotations

from typing import Any

from evaluator.records import UnitScore
from evaluator.report.tables import Table, mean_pm, num

from .scoring import TravelSummary, travel_summary


def summarize(units: list[UnitScore]) -> TravelSummary | None:
    return travel_summary(units) if units else None


def travel_table(runs: list[tuple[str, Any]]) -> list[Table]:
    """TravelBench as the paper reports it (x100): each subset's score over all trials'
    trajectories pooled, the overall score = mean of the three, and per trial beside them."""
    table = Table(
        "TravelBench (x100)",
        ["subset", "run", "score", "per trial", "per trial: mean ± std", "scored / units"],
        note="score = all trials' trajectories pooled, as the reference evaluates them; "
             "overall = mean of the subset scores (per trial: of that trial's); std = sample "
             "std across trials; units without a score (judge errors, not judged) are left out.",
    )
    for label, t in runs:
        if t is None:
            continue
        for name, sub in t.subsets.items():
            table.rows.append([
                name, label, num(None if sub.mean is None else 100 * sub.mean, 2),
                ", ".join(f"{100 * v:.2f}" for v in sub.per_trial.values()) or "—",
                mean_pm(sub.trial_mean, sub.std, 100, 2), f"{sub.n_scored} / {sub.n_units}",
            ])
        overall = "overall" if t.complete else "overall (not all three subsets)"
        table.rows.append([
            overall, label, num(None if t.overall is None else 100 * t.overall, 2),
            ", ".join(f"{100 * v:.2f}" for v in t.overall_per_trial.values()) or "—",
            mean_pm(t.overall_trial_mean, t.overall_std, 100, 2), "",
        ])
    return [table] if table.rows else []


def _pct(value: float | None) -> str:
    return "     -" if value is None else f"{100 * value:6.2f}"


def judge_lines(ts: TravelSummary) -> list[str]:
    """Subset and overall scores (x100: the reference's pooled number, then the per-trial
    mean ± sample std)."""
    lines: list[str] = []
    for name, sub in ts.subsets.items():
        if sub.mean is None:
            lines.append(f"  {name:12s}  no scored units ({sub.n_errors} unscored)")
            continue
        lines.append(f"  {name:12s} {100 * sub.mean:6.2f}  per trial "
                     f"{_pct(sub.trial_mean)} ± {100 * (sub.std or 0):5.2f}  "
                     f"({sub.n_scored}/{sub.n_units} scored, {len(sub.per_trial)} trials)")
    if ts.overall is not None:
        note = "" if ts.complete else "  (not all three subsets present)"
        lines.append(f"  {'overall':12s} {100 * ts.overall:6.2f}  per trial "
                     f"{_pct(ts.overall_trial_mean)} ± {100 * (ts.overall_std or 0):5.2f}{note}")
    return lines

