"""The paired comparison as report tables, warning lines and an HTML plot (evaluator/report/
compare.py computes it)."""

from __future__ import annotations

from evaluator.report.compare import Comparison, PairedMetric
from evaluator.report.svg import LineSeries, line_chart
from evaluator.report.tables import Table


def signed(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:+.{digits}f}"


def p_text(p: float | None) -> str:
    if p is None:
        return "—"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _value(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def comparison_title(c: Comparison) -> str:
    return f"Paired comparison: {c.run} vs {c.baseline}"


def comparison_table(c: Comparison) -> Table:
    how = ("exact: every sign vector enumerated" if c.exact
           else f"{c.n_perm} random sign vectors")
    t = Table(
        comparison_title(c),
        ["subset", "metric", c.baseline, c.run, "Δ (run − baseline)", "95% CI", "p", "tasks"],
        note=f"over the tasks both runs scored; per task its trials first (mean score, "
             f"pass@k from its n trials), then the mean over tasks; Δ = {c.run} − "
             f"{c.baseline}; 95% CI: paired percentile bootstrap over tasks, the trials nested "
             f"in their task ({c.n_boot} resamples, seed {c.seed}); p: two-sided paired "
             f"permutation test, signs of the per-task differences flipped ({how}); not "
             "adjusted for multiple comparisons. pass@n / pass^n at n = the fewest trials any "
             "shared task has in either run. score weighs every task equally; (headline Δ x): "
             "the summary's pooled headline differs over the same tasks (docs/reports.md).",
    )
    for s in c.subsets:
        for m in s.metrics:
            t.rows.append(metric_row(s.subset, m))
    return t


def metric_row(subset: str, m: PairedMetric) -> list[str]:
    name = m.metric
    if m.headline_diff is not None:
        name += f" (headline Δ {signed(m.headline_diff)})"
    ci = "—" if m.low is None or m.high is None else f"[{signed(m.low)}, {signed(m.high)}]"
    return [subset, name, _value(m.baseline), _value(m.run), signed(m.diff), ci,
            p_text(m.p_value), str(m.n_tasks)]


def comparison_warnings(c: Comparison) -> list[str]:
    """The comparison's caveats, one line each, prefixed with the pair's labels."""
    return [f"{c.run} vs {c.baseline}: {w}" for w in c.warnings]


def comparison_plot(c: Comparison) -> str | None:
    """Δpass@k and Δpass^k against k over all shared tasks, with their intervals and a line
    at 0; None when the runs share fewer than two trials per task."""
    s = c.subset("all")
    if s is None or len(s.curves.get("pass@k", [])) < 2:
        return None
    series = []
    top = 0.05
    for name in ("pass@k", "pass^k"):
        pts = [p for p in s.curves[name] if p.diff is not None]
        full = max((p.n_tasks for p in pts), default=0)
        pts = [p for p in pts if p.n_tasks == full]  # the k every shared task reaches
        for p in pts:
            top = max(top, abs(p.low or 0.0), abs(p.high or 0.0), abs(p.diff or 0.0))
        series.append(LineSeries(f"Δ{name}", [float(p.k or 0) for p in pts],
                                 [p.diff for p in pts], [p.low for p in pts],
                                 [p.high for p in pts]))
    top = min(1.0, top * 1.1)

    def short(label: str) -> str:
        return label if len(label) <= 24 else label[:23] + "…"

    return line_chart(f"Δpass@k, Δpass^k vs k: {short(c.run)} − {short(c.baseline)}", series,
                      x_label="k", y_label="difference", y_range=(-top, top),
                      kind="paired-diff", hline=0.0)
