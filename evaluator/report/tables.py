"""The report's tables as plain data (headers + string rows), shared by terminal, Markdown, HTML.

Runs are compared side by side: rows are (subset, run) or (k, subset), columns per run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluator.table import Table, mean_pm, num, pct  # Table and its cells: evaluator/table.py

if TYPE_CHECKING:  # types only: importing the summary (numpy) is left to building a report
    from evaluator.report.summary import CurvePoint, RunSummary, SubsetSummary


def point_text(p: CurvePoint | None, with_ci: bool = True) -> str:
    if p is None or p.value is None:
        return "—"
    text = f"{p.value:.3f}"
    if with_ci and p.low is not None and p.high is not None:
        text += f" [{p.low:.3f}, {p.high:.3f}]"
    return text


def subset_names(runs: list[RunSummary]) -> list[str]:
    names: list[str] = []
    for run in runs:
        for s in run.subsets:
            if s.name not in names:
                names.append(s.name)
    return names


def _at(points: list[CurvePoint], k: int) -> CurvePoint | None:
    return points[k - 1] if 0 < k <= len(points) else None


def _cache_rate(s: SubsetSummary) -> float | None:
    total = next((t for t in s.tokens if t.role == "all"), None)
    if total is None and len(s.tokens) == 1:
        total = s.tokens[0]
    return total.cache_hit_rate if total else None


def summary_table(runs: list[RunSummary]) -> Table:
    table = Table(
        "Summary",
        ["subset", "run", "units", "tasks", "trials", "score", "per trial: mean ± std",
         "success", "pass@1", "pass@n", "pass^n", "tool err", "prompt cached", "judge err"],
        note="score = over every scored unit of every trial pooled (TravelBench single/multi-"
             "turn: the reference's per-dimension aggregate, see docs/metrics.md); per trial = "
             "the same score per trial index, their mean and sample std; trials = trials per "
             "task (min-max); pass@n / pass^n at n = the fewest trials any task has, so every "
             "task counts; prompt cached = cached / prompt tokens over all roles (vLLM prefix "
             "cache).",
    )
    for name in subset_names(runs):
        for run in runs:
            s = run.subset(name)
            if s is None:
                continue
            n = s.max_trials
            trials = str(n) if s.min_trials == n else f"{s.min_trials}-{n}"
            score = num(s.mean_score)
            if s.n_scored < s.n_units:  # loud: the headline covers part of the units
                score += f" ⚠ {s.n_scored}/{s.n_units} scored"
            table.rows.append([
                name, run.label, str(s.n_units), str(s.n_tasks), trials, score,
                mean_pm(s.trial_mean, s.std_across_trials),
                pct(s.success_rate),
                point_text(_at(s.curves["pass@k"], 1), False),
                point_text(_at(s.curves["pass@k"], s.min_trials), False),
                point_text(_at(s.curves["pass^k"], s.min_trials), False),
                pct(s.tool_error_rate), pct(_cache_rate(s)), str(s.judge_errors),
            ])
    return table


def benchmark_tables(runs: list[RunSummary]) -> list[Table]:
    """Every benchmark's own tables (its report section), over the runs that have it."""
    from evaluator import benchmarks

    names = list(dict.fromkeys(name for r in runs for name in r.benchmarks))
    out: list[Table] = []
    for name in names:
        bench = benchmarks.find(name)
        if bench is None or bench.report is None:
            continue
        out += bench.report.tables([(r.label, r.benchmarks.get(name)) for r in runs])
    return out


def benchmark_plots(runs: list[RunSummary]) -> list[str]:
    """Every benchmark's own plots (inline SVG), over the runs that have it."""
    from evaluator import benchmarks

    out: list[str] = []
    for name in dict.fromkeys(name for r in runs for name in r.benchmarks):
        bench = benchmarks.find(name)
        if bench is not None and bench.report is not None:
            out += bench.report.plots([(r.label, r.benchmarks.get(name)) for r in runs])
    return out


def curve_tables(runs: list[RunSummary], subset: str) -> list[Table]:
    tables = []
    kmax = max((s.max_trials for r in runs if (s := r.subset(subset))), default=0)
    for metric in ("pass@k", "pass^k", "avg@k"):
        t = Table(f"{metric} — {subset}", ["k"] + [f"{r.label} (tasks)" for r in runs],
                  note="value [95% bootstrap CI over tasks] (tasks with n >= k)")
        for k in range(1, kmax + 1):
            row = [str(k)]
            for r in runs:
                s = r.subset(subset)
                p = _at(s.curves[metric], k) if s else None
                row.append("—" if p is None else f"{point_text(p)} ({p.n_tasks})")
            t.rows.append(row)
        tables.append(t)
    return tables


def dims_table(runs: list[RunSummary], subset: str) -> Table:
    names: list[str] = []
    for r in runs:
        s = r.subset(subset)
        for d in s.dims if s else []:
            if d.name not in names:
                names.append(d.name)
    t = Table(f"Rubric dimensions — {subset}", ["dimension"] + [r.label for r in runs],
              note="mean ± std (n)")
    for name in names:
        row = [name]
        for r in runs:
            s = r.subset(subset)
            d = next((d for d in s.dims if d.name == name), None) if s else None
            if d is None:
                row.append("—")
            else:
                row.append(f"{num(d.mean, 2)} ± {num(d.std, 2)} ({d.n})")
        t.rows.append(row)
    return t


def _count_table(title: str, first: str, runs: list[RunSummary], subset: str, attr: str) -> Table:
    keys: list[str] = []
    for r in runs:
        s = r.subset(subset)
        for k in getattr(s, attr) if s else {}:
            if k not in keys:
                keys.append(k)
    t = Table(title, [first] + [r.label for r in runs])
    for key in keys:
        row = [key]
        for r in runs:
            s = r.subset(subset)
            row.append(str(getattr(s, attr).get(key, 0)) if s else "—")
        t.rows.append(row)
    return t


def tool_error_table(runs: list[RunSummary], subset: str = "all") -> Table:
    t = _count_table(f"Tool-call errors by category — {subset}", "category", runs, subset,
                     "error_categories")
    total = ["(calls / errors / rate)"]
    for r in runs:
        s = r.subset(subset)
        total.append(f"{s.tool_calls} / {s.tool_errors} / {pct(s.tool_error_rate)}" if s else "—")
    t.rows.insert(0, total)
    return t


def termination_table(runs: list[RunSummary], subset: str = "all") -> Table:
    return _count_table(f"Termination reasons — {subset}", "reason", runs, subset, "terminations")


def token_table(runs: list[RunSummary], subset: str = "all") -> Table:
    t = Table(f"Token usage — {subset}",
              ["run", "role", "prompt", "completion", "cached", "cache hit rate"],
              note="judge: from the run's telemetry, when it judged while running (`agentsweep "
                   "run --judge`); judgements made afterwards by `agentsweep judge` record no "
                   "token counts")
    for r in runs:
        s = r.subset(subset)
        for tok in s.tokens if s else []:
            t.rows.append([r.label, tok.role, str(tok.prompt_tokens), str(tok.completion_tokens),
                           str(tok.cached_tokens), pct(tok.cache_hit_rate)])
    return t


def judge_error_table(runs: list[RunSummary]) -> Table:
    t = Table("Judge errors (first 20 per run)", ["run", "unit", "error"])
    for r in runs:
        s = r.subset("all")
        for key, msg in s.judge_error_samples if s else []:
            t.rows.append([r.label, key, msg])
    return t


def unsolved_table(runs: list[RunSummary]) -> Table:
    t = Table("Tasks never solved (first 20 per run)", ["run", "task"])
    for r in runs:
        s = r.subset("all")
        for task in s.unsolved_tasks if s else []:
            t.rows.append([r.label, task])
    return t


def run_table(runs: list[RunSummary]) -> Table:
    t = Table("Runs", ["run", "directory", "success threshold", "scores from", "bootstrap",
                       "details"])
    for r in runs:
        details = ", ".join(f"{k}={v}" for k, v in sorted(r.info.items()))
        t.rows.append([r.label, r.run_dir, f"score >= {r.success_threshold:g}", r.score_source,
                       f"{r.n_boot} resamples, seed {r.seed}", details or "—"])
    return t


def detail_tables(runs: list[RunSummary]) -> list[Table]:
    """Everything after the summary, in report order."""
    out: list[Table] = benchmark_tables(runs)
    for subset in subset_names(runs):
        out += curve_tables(runs, subset)
        dims = dims_table(runs, subset)
        if dims.rows:
            out.append(dims)
    out += [tool_error_table(runs), termination_table(runs), token_table(runs),
            judge_error_table(runs), unsolved_table(runs)]
    from evaluator.report.throughput import throughput_tables

    return out + throughput_tables(runs)
