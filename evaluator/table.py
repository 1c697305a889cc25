"""A table as plain data (title, headers, string rows, a note), the formatters of its cells and
its fixed-width terminal form.

Benchmarks build them (`ReportSection.tables`), the report renders them (terminal, Markdown,
HTML) and `agentsweep bench` prints one; this module imports nothing of the evaluator, so that
the benchmark interface (`benchmarks/base.py`) and the run layer can use it without reaching
the report (which imports both). `evaluator.report.tables` re-exports `Table` and the
formatters.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Table:
    title: str
    headers: list[str]
    rows: list[list[str]] = field(default_factory=list)
    note: str = ""


def pct(x: float | None, digits: int = 1) -> str:
    return "—" if x is None else f"{100 * x:.{digits}f}%"


def num(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def mean_pm(mean: float | None, std: float | None, scale: float = 1.0, digits: int = 3) -> str:
    """"mean ± std" ("mean" alone without a std, "—" without a mean)."""
    if mean is None:
        return "—"
    text = f"{scale * mean:.{digits}f}"
    return text if std is None else text + f" ± {scale * std:.{digits}f}"


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
