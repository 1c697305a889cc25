"""The grid report of a sweep: models as rows, benchmark entries as columns.

Each cell shows its headline score (all trials pooled) with the bootstrap 95% CI, the success
rate and the number of scored units, from the same `load_run` / `summarize_run` that
`agentsweep report` uses on the cell's run directory. Written as grid.md, grid.html (every
text escaped) and grid.json into the sweep directory; a cell not run yet shows "-".
"""

from __future__ import annotations

import html
import math
from pathlib import Path

import msgspec

from evaluator.sweep.local import read_state


class GridCell(msgspec.Struct):
    model: str
    bench: str
    run_dir: str
    exit_code: int | None
    mean_score: float | None = None
    low: float | None = None
    high: float | None = None
    success_rate: float | None = None
    n_scored: int = 0
    n_units: int = 0
    error: str = ""


class GridReport(msgspec.Struct):
    name: str
    models: list[str]
    benchmarks: list[str]
    cells: list[GridCell]

    def cell(self, model: str, bench: str) -> GridCell | None:
        return next((c for c in self.cells if c.model == model and c.bench == bench), None)


def _num(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def build_grid(directory: Path, *, n_boot: int = 1000, seed: int = 0) -> GridReport:
    from evaluator.report import ReportInputError, load_run
    from evaluator.report.summary import summarize_run

    state = read_state(directory)
    models = list(dict.fromkeys(c.model for c in state.cells))
    benches = list(dict.fromkeys(c.bench for c in state.cells))
    cells = []
    for c in state.cells:
        run_dir = directory / c.name
        g = GridCell(model=c.model, bench=c.bench, run_dir=str(run_dir), exit_code=c.exit_code)
        if (run_dir / "manifest.json").exists():
            try:
                summary = summarize_run(load_run(run_dir), n_boot=n_boot, seed=seed,
                                        backend="numpy")
                head = summary.subset("all")
                if head is not None:
                    g.mean_score, g.low, g.high = (_num(head.mean_score),
                                                   _num(head.mean_score_low),
                                                   _num(head.mean_score_high))
                    g.success_rate = _num(head.success_rate)
                    g.n_scored, g.n_units = head.n_scored, head.n_units
            except ReportInputError as exc:
                g.error = str(exc)
        cells.append(g)
    return GridReport(name=state.name, models=models, benchmarks=benches, cells=cells)


def _text(c: GridCell | None) -> str:
    if c is None:
        return "-"
    if c.error:
        return "error"
    if c.mean_score is None:
        return f"not scored (n={c.n_units})" if c.n_units else "-"
    s = f"{100 * c.mean_score:.1f}"
    if c.low is not None and c.high is not None:
        s += f" [{100 * c.low:.1f}, {100 * c.high:.1f}]"
    if c.success_rate is not None:
        s += f" ({100 * c.success_rate:.0f}% ok, n={c.n_scored})"
    return s


def render_markdown(r: GridReport) -> str:
    lines = [f"# Sweep {r.name}", "",
             ("Headline score x 100 (all trials pooled) [bootstrap 95% CI] (success rate, "
             "scored units)."), "",
             "| model | " + " | ".join(r.benchmarks) + " |",
             "|---|" + "---|" * len(r.benchmarks)]
    for m in r.models:
        lines.append(f"| {m} | " + " | ".join(_text(r.cell(m, b)) for b in r.benchmarks) + " |")
    errors = [c for c in r.cells if c.error]
    if errors:
        lines += ["", "Cells that could not be read:"]
        lines += [f"- {c.model} x {c.bench}: {c.error}" for c in errors]
    return "\n".join(lines) + "\n"


def render_html(r: GridReport) -> str:
    e = html.escape
    head = "".join(f"<th>{e(b)}</th>" for b in r.benchmarks)
    rows = "".join(
        f"<tr><th>{e(m)}</th>" + "".join(f"<td>{e(_text(r.cell(m, b)))}</td>"
                                         for b in r.benchmarks) + "</tr>"
        for m in r.models)
    errors = "".join(f"<li>{e(c.model)} x {e(c.bench)}: {e(c.error)}</li>"
                     for c in r.cells if c.error)
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>Sweep {e(r.name)}</title>"
            "<style>body{font-family:system-ui,sans-serif;margin:24px}table{border-collapse:"
            "collapse}th,td{border:1px solid #ccc;padding:3px 8px}</style></head><body>"
            f"<h1>Sweep {e(r.name)}</h1><p>Headline score x 100 (all trials pooled) [bootstrap "
            "95% CI] (success rate, scored units).</p>"
            f"<table><tr><th>model</th>{head}</tr>{rows}</table>"
            + (f"<ul>{errors}</ul>" if errors else "") + "</body></html>\n")


def write_grid(r: GridReport, directory: Path) -> dict[str, Path]:
    paths = {"md": directory / "grid.md", "html": directory / "grid.html",
             "json": directory / "grid.json"}
    paths["md"].write_text(render_markdown(r), encoding="utf-8")
    paths["html"].write_text(render_html(r), encoding="utf-8")
    paths["json"].write_bytes(msgspec.json.format(msgspec.json.encode(r), indent=1))
    return paths
