"""A self-contained HTML report: inline CSS, inline SVG plots, one tiny inline script.

Every text from runs (labels, task ids, judge messages) goes through `html.escape`. The script
only records load success (`document.body.dataset.ok`) and any script error
(`window.onerror` -> `document.body.dataset.errors`) so a headless browser test can check them.
"""

from __future__ import annotations

import html

from evaluator.report.caveats import coverage_warnings
from evaluator.report.compare import Comparison
from evaluator.report.compare_tables import (
    comparison_plot,
    comparison_table,
    comparison_warnings,
)
from evaluator.report.summary import RunSummary
from evaluator.report.svg import LineSeries, bar_chart, line_chart
from evaluator.report.tables import (
    Table,
    benchmark_plots,
    detail_tables,
    run_table,
    subset_names,
    summary_table,
)
from evaluator.report.throughput import throughput_plots
from evaluator.view.links import report_row_href

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:24px;color:#222}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:8px 0 18px;font-size:13px}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f3f3f3}td{font-variant-numeric:tabular-nums}
.note{color:#666;font-size:12px}.plots{display:flex;flex-wrap:wrap;gap:12px}
svg.plot{border:1px solid #eee;background:#fff}
svg .grid{stroke:#eee}svg .tick{font-size:10px;fill:#555}svg .axis{font-size:11px;fill:#333}
svg .ptitle{font-size:13px;font-weight:600}svg .legend{font-size:11px}
.warn{border:2px solid #c62828;background:#fdecea;color:#8e1b1b;padding:6px 10px;margin:8px 0;
font-weight:600}.caveat{border-left:4px solid #a15c00;background:#fff6e5;padding:4px 10px;margin:4px 0}
"""

SCRIPT_HEAD = """window.__errors=[];window.onerror=function(m,s,l){window.__errors.push(String(m)+' @'+l);
if(document.body){document.body.dataset.errors=window.__errors.join(' | ');}};"""

SCRIPT_TAIL = """(function(){var n=document.querySelectorAll('svg.plot').length;
document.body.dataset.plots=String(n);
if(window.__errors.length){document.body.dataset.errors=window.__errors.join(' | ');}
document.body.dataset.ok='1';})();"""


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def html_table(table: Table) -> str:
    out = [f"<h3>{esc(table.title)}</h3>"]
    if table.note:
        out.append(f'<p class="note">{esc(table.note)}</p>')
    if not table.rows:
        out.append("<p>(none)</p>")
        return "\n".join(out)
    out.append("<table><thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in table.headers)
               + "</tr></thead><tbody>")
    run_col = table.headers.index("run") if "run" in table.headers else -1
    for row in table.rows:
        cells = [esc(c) for c in row]
        href = report_row_href(table.headers, row) if 0 <= run_col < len(row) else None
        if href:  # the row's episodes in `agentsweep view` (docs/view.md)
            cells[run_col] = (f'<a href="{esc(href)}" title="open in agentsweep view">'
                              f"{cells[run_col]}</a>")
        out.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def curve_plot(runs: list[RunSummary], subset: str, metric: str) -> str:
    """Curves over the k every task reaches: where some tasks have fewer trials (ragged runs,
    judge errors) the mean over the remaining tasks is a different population, so those k are
    left to the tables (which show the task count per k) rather than drawn as a jump."""
    series = []
    cut = False
    for r in runs:
        s = r.subset(subset)
        if s is None or not s.curves[metric]:
            continue
        full = max(p.n_tasks for p in s.curves[metric])
        pts = [p for p in s.curves[metric] if p.n_tasks == full]
        cut = cut or len(pts) < len(s.curves[metric])
        series.append(LineSeries(r.label, [p.k for p in pts], [p.value for p in pts],
                                 [p.low for p in pts], [p.high for p in pts]))
    title = f"{metric} vs k — {subset}"
    if cut:
        title += " (k that every task reaches)"
    return line_chart(title, series, x_label="k", y_label=metric, kind=f"curve-{metric}")


def dim_plots(runs: list[RunSummary], subset: str) -> list[str]:
    names: list[str] = []
    for r in runs:
        s = r.subset(subset)
        for d in s.dims if s else []:
            if d.name not in names:
                names.append(d.name)
    plots = []
    for name in ["__score__"] + names:
        labels: list[str] = []
        per_run: list[tuple[str, dict[str, int]]] = []
        for r in runs:
            s = r.subset(subset)
            if s is None:
                continue
            if name == "__score__":
                hist = s.score_histogram
            else:
                d = next((d for d in s.dims if d.name == name), None)
                if d is None:
                    continue
                hist = d.histogram
            for lab in hist.labels:
                if lab not in labels:
                    labels.append(lab)
            per_run.append((r.label, dict(zip(hist.labels, hist.counts, strict=True))))
        series = []
        for label, counts in per_run:
            total = sum(counts.values()) or 1
            series.append((label, [counts.get(lab, 0) / total for lab in labels]))
        title = "instance score" if name == "__score__" else name
        plots.append(bar_chart(f"distribution: {title} — {subset}", labels, series,
                               y_label="fraction", kind="distribution", value_format="{:.2f}",
                               fraction=True))
    return plots


def subset_bars(runs: list[RunSummary]) -> list[str]:
    names = subset_names(runs)
    def values(attr: str) -> list[tuple[str, list[float | None]]]:
        return [(r.label, [getattr(s, attr) if (s := r.subset(n)) else None for n in names])
                for r in runs]
    def pass1() -> list[tuple[str, list[float | None]]]:
        out = []
        for r in runs:
            vals: list[float | None] = []
            for n in names:
                s = r.subset(n)
                vals.append(s.curves["pass@k"][0].value if s and s.curves["pass@k"] else None)
            out.append((r.label, vals))
        return out
    return [
        bar_chart("mean score per subset", names, values("mean_score"), y_max=1.0,
                  y_label="score", kind="subset-mean"),
        bar_chart("pass@1 per subset", names, pass1(), y_max=1.0, y_label="pass@1",
                  kind="subset-pass1"),
        bar_chart("tool-call error rate per subset", names, values("tool_error_rate"),
                  y_label="errors / calls", kind="tool-errors", value_format="{:.1%}",
                  fraction=True),
    ]


def error_category_plot(runs: list[RunSummary]) -> str:
    cats: list[str] = []
    for r in runs:
        s = r.subset("all")
        for c in s.error_categories if s else {}:
            if c not in cats:
                cats.append(c)
    series = []
    for r in runs:
        s = r.subset("all")
        calls = s.tool_calls if s else 0
        series.append((r.label, [s.error_categories.get(c, 0) / calls if s and calls else None
                                 for c in cats]))
    return bar_chart("tool-call errors by category (per call)", cats, series,
                     y_label="errors / calls", kind="tool-error-categories",
                     value_format="{:.1%}", fraction=True)


def warning_html(lines: list[str]) -> list[str]:
    return [f'<p class="{"warn" if w.startswith("WARNING") else "caveat"}">{esc(w)}</p>'
            for w in lines]


def comparison_html(comparisons: list[Comparison] | tuple) -> list[str]:
    out: list[str] = []
    for c in comparisons:
        out.append(f'<h2 id="paired">{esc(c.run)} vs {esc(c.baseline)}</h2>')
        out += warning_html([f"WARNING: {w}" for w in comparison_warnings(c)])
        out.append(html_table(comparison_table(c)))
        plot = comparison_plot(c)
        if plot:
            out += ['<div class="plots">', plot, "</div>"]
    return out


def render_html(runs: list[RunSummary], created: str,
                comparisons: list[Comparison] | tuple = ()) -> str:
    body = [(f"<h1>agentsweep report</h1><p class=\"note\">{esc(created)} — metric definitions: "
            "docs/metrics.md; — means no task had enough trials.</p>"),
            *warning_html(coverage_warnings(runs)),
            html_table(run_table(runs)), html_table(summary_table(runs)),
            *comparison_html(comparisons),
            "<h2>Per subset</h2>", '<div class="plots">', *subset_bars(runs),
            error_category_plot(runs), *benchmark_plots(runs), "</div>"]
    for subset in subset_names(runs):
        body.append(f"<h2>{esc(subset)}</h2>")
        body.append('<div class="plots">')
        body += [curve_plot(runs, subset, m) for m in ("pass@k", "pass^k", "avg@k")]
        body += dim_plots(runs, subset)
        body.append("</div>")
    plots = throughput_plots(runs)
    if plots:
        body += ["<h2>Throughput over time</h2>", '<div class="plots">', *plots, "</div>"]
    body.append("<h2>Tables</h2>")
    body += [html_table(t) for t in detail_tables(runs)]
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>agentsweep report</title>",
        f"<style>{CSS}</style>",
        f"<script>{SCRIPT_HEAD}</script>",
        "</head><body>",
        *body,
        f"<script>{SCRIPT_TAIL}</script>",
        "</body></html>",
    ])
