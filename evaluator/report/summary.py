"""Turning one run's UnitScores and episode stats into report numbers (msgspec Structs).

Per run, one `SubsetSummary` for all units ("all") and one per "benchmark/subset". Conventions:
- a trial is a scored unit (score not None); judge errors are counted, not treated as failures;
- success = `UnitScore.success` (set by the explicit threshold), or score >= threshold if unset;
- the subset score (`mean_score`, the headline) pools every scored unit of every trial, as the
  benchmark's paper does (`Benchmark.subset_score`; TravelBench single/multi-turn: per-
  dimension means, then their mean; by default the mean unit score; "all" over several
  subsets: the mean unit score). Beside it the same number per trial index (`per_trial`),
  their mean (`trial_mean`) and sample std (ddof=1; None with a single trial index);
- `benchmarks`: each benchmark's own summary (`Benchmark.report.summarize`, e.g. TravelBench's
  subsets and overall score), by benchmark name;
- pass@k, pass^k, avg@k for k = 1..max trials per task; at each k the mean over tasks with
  n >= k, and how many tasks contributed (`n_tasks`); 95% percentile bootstrap over tasks;
- NaN is written as null (None).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import Any

import msgspec
import numpy as np

from backends.types import Usage
from evaluator.records import UnitScore
from evaluator.report.load import EpisodeStat, RunInput
from evaluator.scoring import Aggregate, mean_score, mean_std, per_trial_scores, subset_aggregate
from kernels.bootstrap import bootstrap_ci
from kernels.passk import task_counts
from kernels.registry import compute_curve

CURVE_METRICS = ("pass@k", "pass^k", "avg@k")
SCORE_BINS = 10


class CurvePoint(msgspec.Struct):
    k: int
    value: float | None
    low: float | None
    high: float | None
    n_tasks: int


class Histogram(msgspec.Struct):
    labels: list[str]
    counts: list[int]


class DimSummary(msgspec.Struct):
    name: str
    n: int
    mean: float | None
    std: float | None
    histogram: Histogram


class TokenSummary(msgspec.Struct):
    role: str
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    cache_hit_rate: float | None   # cached_tokens / prompt_tokens


class SubsetSummary(msgspec.Struct):
    name: str
    n_units: int                     # scored + judge errors + unjudged episodes
    n_scored: int
    n_tasks: int
    max_trials: int
    min_trials: int
    mean_score: float | None          # the headline: all trials pooled
    trial_mean: float | None          # mean of the per-trial scores
    std_across_trials: float | None   # their sample std
    per_trial: dict[int, float]
    mean_score_low: float | None
    mean_score_high: float | None
    success_rate: float | None
    curves: dict[str, list[CurvePoint]]
    judge_errors: int
    unjudged: int
    tool_calls: int
    tool_errors: int
    tool_error_rate: float | None
    error_categories: dict[str, int]
    terminations: dict[str, int]
    tokens: list[TokenSummary]
    dims: list[DimSummary]
    score_histogram: Histogram
    unsolved_tasks: list[str]         # tasks with no success in any trial (first 20)
    judge_error_samples: list[list[str]]  # [unit key, message] (first 20)


class RunSummary(msgspec.Struct):
    label: str
    run_dir: str
    success_threshold: float
    score_source: str
    n_boot: int
    seed: int
    info: dict[str, str]
    subsets: list[SubsetSummary]
    benchmarks: dict[str, Any] = msgspec.field(default_factory=dict)
    throughput: dict[str, Any] = msgspec.field(default_factory=dict)  # report/throughput.py

    def subset(self, name: str) -> SubsetSummary | None:
        return next((s for s in self.subsets if s.name == name), None)


def _f(x: float | np.floating | None) -> float | None:
    if x is None:
        return None
    v = float(x)
    return None if math.isnan(v) else v


def _histogram(values: list[float]) -> Histogram:
    """1..5 ratings get one bin per integer; [0, 1] values get ten bins."""
    if values and max(values) > 1.0:
        counts = Counter(min(5, max(1, round(v))) for v in values)
        return Histogram(labels=[str(i) for i in range(1, 6)], counts=[counts[i] for i in range(1, 6)])
    edges = np.linspace(0.0, 1.0, SCORE_BINS + 1)
    counts_arr, _ = np.histogram(np.clip(values, 0.0, 1.0), bins=edges) if values else (
        np.zeros(SCORE_BINS, dtype=int), None)
    labels = [f"{edges[i]:.1f}" for i in range(SCORE_BINS)]
    return Histogram(labels=labels, counts=[int(c) for c in counts_arr])


def _tokens(episodes: list[EpisodeStat], more: dict[str, Usage] | None = None
            ) -> list[TokenSummary]:
    """Per role (and "all" over them): the episodes' usage, plus `more` (roles that are not
    in the records: the judge's, from the run's telemetry)."""
    per_role: dict[str, Usage] = defaultdict(Usage)
    for ep in episodes:
        for role, usage in ep.usage.items():
            per_role[role].add(usage)
    for role, usage in (more or {}).items():
        per_role[role].add(usage)
    out = []
    total = Usage()
    for role in sorted(per_role):
        u = per_role[role]
        total.add(u)
        rate = u.cached_tokens / u.prompt_tokens if u.prompt_tokens else None
        out.append(TokenSummary(role, u.prompt_tokens, u.completion_tokens, u.cached_tokens, rate))
    if len(out) > 1:
        rate = total.cached_tokens / total.prompt_tokens if total.prompt_tokens else None
        out.append(TokenSummary("all", total.prompt_tokens, total.completion_tokens,
                                total.cached_tokens, rate))
    return out


def summarize_subset(
    name: str,
    scores: list[UnitScore],
    episodes: list[EpisodeStat],
    *,
    threshold: float,
    n_boot: int,
    seed: int,
    backend: str = "auto",
    aggregate: Aggregate = mean_score,
) -> SubsetSummary:
    """`aggregate`: how the units' scores are pooled (the benchmark's subset score when the
    units are one subset)."""
    scored = [s for s in scores if s.score is not None]
    # a judge error: a unit without a score, or one whose benchmark scored it but names a
    # failed judgement besides (GroupTravelBench: the rule metrics count, the LLM judge failed)
    errors = [s for s in scores if s.score is None or s.judge_error is not None]
    scored_keys = {s.unit.key for s in scores}
    unjudged = [e for e in episodes if e.key not in scored_keys]

    keys = [s.unit.task for s in scored]
    vals = np.array([float(s.score) for s in scored], dtype=np.float64)  # type: ignore[arg-type]
    succ = np.array(
        [s.success if s.success is not None else float(s.score) >= threshold for s in scored],  # type: ignore[arg-type]
        dtype=bool,
    )
    counts = task_counts(keys, vals, succ)
    kmax = counts.max_trials
    ks = list(range(1, kmax + 1))
    curves: dict[str, list[CurvePoint]] = {}
    for metric in CURVE_METRICS:
        points: list[CurvePoint] = []
        if ks:
            curve = compute_curve(metric, counts, ks)
            ci = bootstrap_ci(curve.per_task, n_boot=n_boot, seed=seed, backend=backend)
            for i, k in enumerate(ks):
                points.append(CurvePoint(k, _f(curve.value[i]), _f(ci.low[i]), _f(ci.high[i]),
                                         int(curve.n_tasks[i])))
        curves[metric] = points

    per_trial = per_trial_scores(scored, aggregate)
    trial_mean, std = mean_std(list(per_trial.values()))
    mean_low = mean_high = None
    if counts.n_tasks:
        per_task_mean = compute_curve("mean", counts, [1]).per_task
        mci = bootstrap_ci(per_task_mean, n_boot=n_boot, seed=seed, backend=backend)
        mean_low, mean_high = _f(mci.low[0]), _f(mci.high[0])

    tool_calls = sum(s.tool_calls for s in scores) + sum(e.tool_calls for e in unjudged)
    tool_errors = sum(s.tool_errors for s in scores) + sum(e.tool_errors for e in unjudged)
    cats: Counter[str] = Counter()
    for s in scores:
        cats.update(s.error_categories)
    for e in unjudged:
        cats.update(e.error_categories)

    dim_values: dict[str, list[float]] = defaultdict(list)
    for s in scored:
        for d, v in s.dims.items():
            if v is not None and not math.isnan(v):
                dim_values[d].append(float(v))
    dims = [
        DimSummary(
            name=d,
            n=len(v),
            mean=_f(np.mean(v)),
            std=_f(np.std(v, ddof=1)) if len(v) > 1 else None,
            histogram=_histogram(v),
        )
        for d, v in sorted(dim_values.items())
    ]
    unsolved = [counts.keys[i] for i in range(counts.n_tasks) if counts.c[i] == 0]
    return SubsetSummary(
        name=name,
        n_units=len(scores) + len(unjudged),
        n_scored=len(scored),
        n_tasks=counts.n_tasks,
        max_trials=kmax,
        min_trials=int(counts.n.min()) if counts.n_tasks else 0,
        mean_score=aggregate(scored),
        trial_mean=trial_mean,
        std_across_trials=std,
        per_trial=per_trial,
        mean_score_low=mean_low,
        mean_score_high=mean_high,
        success_rate=_f(succ.mean()) if succ.size else None,
        curves=curves,
        judge_errors=len(errors),
        unjudged=len(unjudged),
        tool_calls=tool_calls,
        tool_errors=tool_errors,
        tool_error_rate=tool_errors / tool_calls if tool_calls else None,
        error_categories=dict(cats.most_common()),
        terminations=dict(Counter(e.termination for e in episodes).most_common()),
        tokens=_tokens(episodes),
        dims=dims,
        score_histogram=_histogram(vals.tolist()) if vals.size else _histogram([]),
        unsolved_tasks=unsolved[:20],
        judge_error_samples=[[s.unit.key, (s.judge_error or "")[:300]] for s in errors[:20]],
    )


def summarize_run(
    run: RunInput, *, n_boot: int = 1000, seed: int = 0, backend: str = "auto"
) -> RunSummary:
    """Summaries for all units and for each benchmark/subset of one run."""
    groups: dict[str, list[UnitScore]] = defaultdict(list)
    ep_groups: dict[str, list[EpisodeStat]] = defaultdict(list)
    for s in run.scores:
        groups[f"{s.benchmark}/{s.subset}"].append(s)
    for e in run.episodes:
        ep_groups[f"{e.benchmark}/{e.subset}"].append(e)
    kw = {"threshold": run.success_threshold, "n_boot": n_boot, "seed": seed, "backend": backend}
    names = sorted(set(groups) | set(ep_groups))

    def pooled(name: str) -> Aggregate:
        bench, _, sub = name.partition("/")
        return subset_aggregate(bench, sub)

    only = pooled(names[0]) if len(names) == 1 else mean_score  # "all" is that one subset
    subsets = [summarize_subset("all", run.scores, run.episodes, **kw, aggregate=only)]  # type: ignore[arg-type]
    judge = judge_usage(run.throughput)
    if judge:  # the judge's tokens are in no episode record: from the telemetry, run-wide
        subsets[0].tokens = _tokens(run.episodes, judge)
    if len(names) > 1:
        for name in names:
            subsets.append(summarize_subset(name, groups[name], ep_groups[name], **kw,  # type: ignore[arg-type]
                                            aggregate=pooled(name)))
    return RunSummary(
        label=run.label,
        run_dir=run.run_dir,
        success_threshold=run.success_threshold,
        score_source=run.score_source,
        n_boot=n_boot,
        seed=seed,
        info=dict(run.info),
        subsets=subsets,
        benchmarks=benchmark_summaries(run.scores, run.episodes),
        throughput=run.throughput,
    )


def judge_usage(throughput: dict[str, Any]) -> dict[str, Usage]:
    """The judge roles' token counts of the run's telemetry (judging during `agentsweep run
    --judge`; `agentsweep judge` afterwards records none)."""
    roles = (throughput.get("summary") or {}).get("roles") or {}
    out = {}
    for name, d in roles.items():
        if name.startswith("judge") and isinstance(d, dict):
            p, c = int(d.get("prompt_tokens") or 0), int(d.get("completion_tokens") or 0)
            if p or c:
                out[name] = Usage(prompt_tokens=p, completion_tokens=c, total_tokens=p + c,
                                  cached_tokens=int(d.get("cached_tokens") or 0))
    return out


def benchmark_summaries(scores: list[UnitScore], episodes: list[EpisodeStat] | None = None
                        ) -> dict[str, Any]:
    """Each benchmark's own summary of its units (its report section), by name; a section
    with `episodes=True` also gets the benchmark's episode stats (unjudged ones included)."""
    from evaluator import benchmarks

    out: dict[str, Any] = {}
    eps = episodes or []
    for name in dict.fromkeys([*(s.benchmark for s in scores), *(e.benchmark for e in eps)]):
        bench = benchmarks.find(name)
        if bench is None or bench.report is None:
            continue
        units = [s for s in scores if s.benchmark == name]
        if bench.report.episodes:
            summary = bench.report.summarize(units, [e for e in eps if e.benchmark == name])
        elif not units:
            continue
        else:
            summary = bench.report.summarize(units)
        if summary is not None:
            out[name] = summary
    return out
