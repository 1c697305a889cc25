"""Reports over one or more run directories: terminal table, report.md, report.html, report.json.

    runs = [load_run(d) for d in run_dirs]
    report = build_report(runs)          # + a paired comparison of each run with the first
    paths = write_report(report, out_dir)

The summary and renderers (numpy, the kernels) are imported when a report is built, not with
this package: benchmark packages import `evaluator.report.tables` at start-up, and a run does
not need numpy for that.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from evaluator.report.load import ReportInputError, RunInput, load_run

if TYPE_CHECKING:
    from evaluator.report.compare import Comparison
    from evaluator.report.summary import RunSummary

__all__ = [
    "Report",
    "ReportInputError",
    "RunInput",
    "build_report",
    "load_run",
    "write_report",
]


class Report(msgspec.Struct):
    """Everything the report shows, as written to report.json."""

    created: str
    runs: list[RunSummary]
    comparisons: list[Comparison] = msgspec.field(default_factory=list)  # runs[i>0] vs runs[0]

    def terminal(self) -> str:
        from evaluator.report.render_text import render_terminal

        return render_terminal(self.runs, self.comparisons)

    def markdown(self) -> str:
        from evaluator.report.render_text import render_markdown

        return render_markdown(self.runs, self.created, self.comparisons)

    def html(self) -> str:
        from evaluator.report.render_html import render_html

        return render_html(self.runs, self.created, self.comparisons)


def _unique_labels(runs: list[RunInput]) -> None:
    seen: dict[str, int] = {}
    for run in runs:
        base = run.label
        if base in seen:
            seen[base] += 1
            run.label = f"{base} ({seen[base]})"
        else:
            seen[base] = 1


def build_report(
    runs: list[RunInput], *, n_boot: int = 1000, seed: int = 0, backend: str = "auto",
    compare: bool = True, n_perm: int = 10000,
) -> Report:
    """Summarise each run (labels made unique) for side-by-side comparison; with `compare`,
    every run after the first is compared with the first over their shared tasks (paired
    bootstrap interval, `n_perm` sign-flip permutations; evaluator/report/compare.py)."""
    from evaluator.report.compare import compare_all
    from evaluator.report.summary import summarize_run

    if not runs:
        raise ValueError("build_report: no runs given")
    _unique_labels(runs)
    created = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    comparisons = compare_all(runs, n_boot=n_boot, n_perm=n_perm, seed=seed,
                              backend=backend) if compare else []
    return Report(
        created=created,
        runs=[summarize_run(r, n_boot=n_boot, seed=seed, backend=backend) for r in runs],
        comparisons=comparisons,
    )


def write_report(report: Report, out_dir: Path) -> dict[str, Path]:
    """Write report.md, report.html and report.json into `out_dir`; return their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {
        "md": out_dir / "report.md",
        "html": out_dir / "report.html",
        "json": out_dir / "report.json",
    }
    paths["md"].write_text(report.markdown(), encoding="utf-8")
    paths["html"].write_text(report.html(), encoding="utf-8")
    paths["json"].write_bytes(msgspec.json.format(msgspec.json.encode(report), indent=1))
    return paths
