"""Terminal table and Markdown rendering of the report tables."""

from __future__ import annotations

import html

from evaluator.report.caveats import coverage_warnings
from evaluator.report.compare import Comparison
from evaluator.report.compare_tables import comparison_table, comparison_warnings
from evaluator.report.summary import RunSummary
from evaluator.report.tables import (
    Table,
    benchmark_tables,
    detail_tables,
    run_table,
    summary_table,
)


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def terminal_table(table: Table, max_col: int = 40) -> str:
    """A fixed-width text table (no colours, safe for any terminal)."""
    cells = [[_clip(c, max_col) for c in row] for row in [table.headers] + table.rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(table.headers))]
    lines = [table.title]
    for n, row in enumerate(cells):
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def md_cell(text: str) -> str:
    """Escape a Markdown table cell: HTML-escaped (no raw tags), pipes and newlines neutralised."""
    return html.escape(text, quote=False).replace("|", "\\|").replace("\n", " ").replace("`", "'")


def markdown_table(table: Table) -> str:
    out = [f"### {md_cell(table.title)}", ""]
    if table.note:
        out += [f"_{md_cell(table.note)}_", ""]
    if not table.rows:
        return "\n".join(out + ["(none)", ""])
    out.append("| " + " | ".join(md_cell(h) for h in table.headers) + " |")
    out.append("|" + "|".join("---" for _ in table.headers) + "|")
    for row in table.rows:
        out.append("| " + " | ".join(md_cell(c) for c in row) + " |")
    out.append("")
    return "\n".join(out)


_SETTINGS_KEYS = ("profile", "deviations", "domains", "prompts", "tool validation",
                  "context guard")


def settings_lines(runs: list[RunSummary]) -> list[str]:
    """One line per run saying what produced its numbers: the settings profile and every
    deviation from it, the prompt set and the tool-argument validation."""
    out = []
    for run in runs:
        parts = [f"{k} {run.info[k]}" for k in _SETTINGS_KEYS if run.info.get(k)]
        if parts:
            out.append(f"{run.label}: " + "; ".join(parts))
    return out


def render_terminal(runs: list[RunSummary], comparisons: list[Comparison] | tuple = ()) -> str:
    tables = [summary_table(runs), *benchmark_tables(runs)]
    loud = coverage_warnings(runs)
    text = "\n".join(loud) + "\n\n" if loud else ""
    text += "\n\n".join(terminal_table(t) for t in tables)
    lines = settings_lines(runs)
    text += "\n\n" + "\n".join(lines) if lines else ""
    for c in comparisons:
        text += "\n\n" + terminal_table(comparison_table(c), max_col=48)
        text += "".join(f"\n! {w}" for w in comparison_warnings(c))
    return text


def warning_lines_md(lines: list[str]) -> list[str]:
    return [f"> **{md_cell(w)}**" if w.startswith("WARNING") else f"> {md_cell(w)}"
            for w in lines] + ([""] if lines else [])


def render_markdown(runs: list[RunSummary], created: str,
                    comparisons: list[Comparison] | tuple = ()) -> str:
    parts = [f"# agentsweep report ({md_cell(created)})", "",
             "Metric definitions: see docs/metrics.md. NaN/— means no task had enough trials.", ""]
    parts += warning_lines_md(coverage_warnings(runs))
    parts.append(markdown_table(run_table(runs)))
    parts.append(markdown_table(summary_table(runs)))
    for c in comparisons:
        parts.append(markdown_table(comparison_table(c)))
        parts += warning_lines_md([f"WARNING: {w}" for w in comparison_warnings(c)])
    for table in detail_tables(runs):
        parts.append(markdown_table(table))
    return "\n".join(parts)
