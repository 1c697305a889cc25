"""Paired comparison of runs over their shared tasks (`agentsweep report A B`).

The first run is the baseline; every other run is compared with it, per benchmark/subset and
over all units ("all"), on the tasks both runs scored. Per task, each run's trials are
summarised first (mean score; unbiased pass@k and pass^k from its n trials and c successes),
so the trials stay nested in their task; the difference of the two runs' task means gets a
95% percentile bootstrap interval over tasks and a two-sided paired permutation (sign-flip)
p-value (`kernels.paired`).

Metrics: `score` (mean over tasks of each task's mean unit score), `pass@1` (mean per-task
success rate), `pass@n` and `pass^n` at n = the fewest scored trials any shared task has in
either run; and, for the HTML plot and report.json, Δpass@k and Δpass^k at every k up to the
most trials both runs have of a task (a task counts at k when both have >= k trials).

The `score` here weighs every task equally. The summary's headline pools every scored unit
(TravelBench single/multi-turn: per rubric dimension); the two agree when every task has the
same number of scored trials and every trajectory rated every dimension. Where the headline
over the shared tasks differs from it, `headline_diff` carries the headline's difference.

Whatever makes the two runs not comparable is listed in `warnings`: tasks that only one run
has (or scored), subsets only one run has, a different benchmark, settings profile,
deviations, prompt set, judge model, tool validation, success threshold or score source.
"""

from __future__ import annotations

from collections import defaultdict

import msgspec
import numpy as np

from evaluator.records import UnitScore
from evaluator.report.load import RunInput
from evaluator.scoring import Aggregate, mean_score, subset_aggregate
from kernels.paired import PairedDifference, paired_difference
from kernels.passk import pass_at_k, pass_hat_k

FEW_TASKS = 10   # fewer shared tasks than this: the interval and p-value are rough
HEADLINE_TOLERANCE = 5e-4
# info keys (evaluator/report/load.py) whose difference makes two runs' scores not comparable
COMPARABLE_INFO = ("benchmark", "profile", "deviations", "prompts", "judge models",
                   "tool validation", "domains")


class PairedMetric(msgspec.Struct):
    """One metric of one subset: the run's and the baseline's value over the shared tasks,
    their difference (run - baseline), its interval and p-value."""

    metric: str
    k: int | None
    run: float | None
    baseline: float | None
    diff: float | None
    low: float | None
    high: float | None
    p_value: float | None
    n_tasks: int
    headline_diff: float | None = None   # score only: the headline's own difference


class SubsetComparison(msgspec.Struct):
    subset: str
    shared_tasks: int        # tasks both runs scored (the tasks compared)
    only_run: int            # tasks only the run has (scored or not)
    only_baseline: int
    unscored: int            # tasks both have where one run scored no trial
    trials_run: list[int]    # fewest and most scored trials of a shared task
    trials_baseline: list[int]
    metrics: list[PairedMetric]
    curves: dict[str, list[PairedMetric]]   # "pass@k", "pass^k": Δ at k = 1..K


class Comparison(msgspec.Struct):
    run: str
    baseline: str
    confidence: float
    n_boot: int
    n_perm: int
    seed: int
    exact: bool              # every p-value enumerated all sign vectors (<= 16 tasks)
    warnings: list[str]
    subsets: list[SubsetComparison]

    def subset(self, name: str) -> SubsetComparison | None:
        return next((s for s in self.subsets if s.subset == name), None)


def _f(x: float | np.floating) -> float | None:
    v = float(x)
    return None if np.isnan(v) else v


def _by_task(scores: list[UnitScore], threshold: float) -> dict[str, list[tuple[float, bool]]]:
    out: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    for s in scores:
        if s.score is None:
            continue
        ok = s.success if s.success is not None else s.score >= threshold
        out[s.unit.task].append((float(s.score), bool(ok)))
    return out


def _tasks_of(run: RunInput, group: str) -> set[str]:
    """Every task of `group` the run has a unit of (scored, judge error or unjudged)."""
    keep = (lambda b, s: True) if group == "all" else (lambda b, s: f"{b}/{s}" == group)
    tasks = {s.unit.task for s in run.scores if keep(s.benchmark, s.subset)}
    tasks |= {e.task for e in run.episodes if keep(e.benchmark, e.subset)}
    return tasks


def _per_task(units: dict[str, list[tuple[float, bool]]], tasks: list[str], ks: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(mean score, n, pass@k (T, K), pass^k (T, K)) per task in `tasks` order."""
    n = np.array([len(units[t]) for t in tasks], dtype=np.int64)
    c = np.array([sum(ok for _, ok in units[t]) for t in tasks], dtype=np.int64)
    mean = np.array([sum(v for v, _ in units[t]) / len(units[t]) for t in tasks])
    if not len(ks):
        empty = np.zeros((len(tasks), 0))
        return mean, n, empty, empty
    return mean, n, pass_at_k(n, c, ks), pass_hat_k(n, c, ks)


def _cut(values: np.ndarray, n: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """pass@k of a task counts at k only when both runs have >= k trials (NaN otherwise)."""
    return np.where(n[:, None] >= ks[None, :], values, np.nan)


def _metric(name: str, k: int | None, r: PairedDifference, i: int) -> PairedMetric:
    return PairedMetric(metric=name, k=k, run=_f(r.a[i]), baseline=_f(r.b[i]),
                        diff=_f(r.diff[i]), low=_f(r.low[i]), high=_f(r.high[i]),
                        p_value=_f(r.p_value[i]), n_tasks=int(r.n_tasks[i]))


def compare_subset(group: str, run: RunInput, base: RunInput, aggregate: Aggregate, *,
                   n_boot: int, n_perm: int, seed: int, backend: str,
                   ) -> tuple[SubsetComparison, bool]:
    """One subset (or "all") of `run` against `base`; (comparison, p-values exact)."""
    def pick(r: RunInput) -> list[UnitScore]:
        if group == "all":
            return list(r.scores)
        return [s for s in r.scores if f"{s.benchmark}/{s.subset}" == group]

    units_r, units_b = pick(run), pick(base)
    by_r = _by_task(units_r, run.success_threshold)
    by_b = _by_task(units_b, base.success_threshold)
    all_r, all_b = _tasks_of(run, group), _tasks_of(base, group)
    shared = sorted(set(by_r) & set(by_b))
    unscored = len((all_r & all_b) - set(shared))
    n_r = np.array([len(by_r[t]) for t in shared], dtype=np.int64)
    n_b = np.array([len(by_b[t]) for t in shared], dtype=np.int64)
    n_both = np.minimum(n_r, n_b)
    kmax = int(n_both.max()) if len(shared) else 0
    ks = np.arange(1, kmax + 1, dtype=np.int64)
    mean_r, _, pa_r, ph_r = _per_task(by_r, shared, ks)
    mean_b, _, pa_b, ph_b = _per_task(by_b, shared, ks)
    cols_r = np.column_stack([mean_r, _cut(pa_r, n_both, ks), _cut(ph_r, n_both, ks)]) \
        if shared else np.zeros((0, 1 + 2 * kmax))
    cols_b = np.column_stack([mean_b, _cut(pa_b, n_both, ks), _cut(ph_b, n_both, ks)]) \
        if shared else np.zeros((0, 1 + 2 * kmax))
    res = paired_difference(cols_r, cols_b, n_boot=n_boot, n_perm=n_perm, seed=seed,
                            backend=backend)
    score = _metric("score", None, res, 0)
    keep = set(shared)
    h_r = aggregate([s for s in units_r if s.unit.task in keep and s.score is not None])
    h_b = aggregate([s for s in units_b if s.unit.task in keep and s.score is not None])
    if h_r is not None and h_b is not None and score.diff is not None \
            and abs((h_r - h_b) - score.diff) > HEADLINE_TOLERANCE:
        score.headline_diff = h_r - h_b
    pass_k = [_metric("pass@k", int(k), res, 1 + i) for i, k in enumerate(ks)]
    hat_k = [_metric("pass^k", int(k), res, 1 + kmax + i) for i, k in enumerate(ks)]
    metrics = [score]
    if kmax:
        metrics.append(msgspec.structs.replace(pass_k[0], metric="pass@1"))
        n_all = int(n_both.min())
        if n_all > 1:
            metrics += [msgspec.structs.replace(pass_k[n_all - 1], metric=f"pass@{n_all}"),
                        msgspec.structs.replace(hat_k[n_all - 1], metric=f"pass^{n_all}")]

    def span(n: np.ndarray) -> list[int]:
        return [int(n.min()), int(n.max())] if len(n) else [0, 0]

    return SubsetComparison(
        subset=group, shared_tasks=len(shared), only_run=len(all_r - all_b),
        only_baseline=len(all_b - all_r), unscored=unscored, trials_run=span(n_r),
        trials_baseline=span(n_b), metrics=metrics,
        curves={"pass@k": pass_k, "pass^k": hat_k},
    ), res.exact


def _subsets(run: RunInput, base: RunInput) -> list[str]:
    return sorted({f"{s.benchmark}/{s.subset}" for r in (run, base) for s in r.scores}
                  | {f"{e.benchmark}/{e.subset}" for r in (run, base) for e in r.episodes})


def _aggregate(group: str, subsets: list[str]) -> Aggregate:
    """The headline's pooling (as `summarize_run`): the benchmark's for one subset ("all" of
    a single subset too), else the mean unit score."""
    if group == "all":
        if len(subsets) != 1:
            return mean_score
        group = subsets[0]
    bench, _, sub = group.partition("/")
    return subset_aggregate(bench, sub)


def _info_warnings(run: RunInput, base: RunInput) -> list[str]:
    out = []
    for key in COMPARABLE_INFO:
        a, b = run.info.get(key), base.info.get(key)
        if a != b and (a or b):
            out.append(f"{key} differs: {base.label}: {b or '—'}; {run.label}: {a or '—'}")
    if run.success_threshold != base.success_threshold:
        out.append(f"success threshold differs: {base.label}: score >= "
                   f"{base.success_threshold:g}; {run.label}: score >= "
                   f"{run.success_threshold:g} (pass@k counts different successes)")
    if run.score_source != base.score_source:
        out.append(f"scores come from different sources: {base.label}: {base.score_source}; "
                   f"{run.label}: {run.score_source}")
    return out


def _task_warnings(run: RunInput, base: RunInput, subsets: list[SubsetComparison]
                   ) -> list[str]:
    out = []
    for s in subsets:
        in_run = s.shared_tasks + s.unscored + s.only_run
        in_base = s.shared_tasks + s.unscored + s.only_baseline
        if not (in_run and in_base):
            who = run.label if in_run else base.label
            out.append(f"{s.subset}: only {who} has it; not compared")
            continue
        parts = []
        if s.only_run:
            parts.append(f"{s.only_run} only in {run.label}")
        if s.only_baseline:
            parts.append(f"{s.only_baseline} only in {base.label}")
        if s.unscored:
            parts.append(f"{s.unscored} without a scored trial in one of them")
        if parts:
            out.append(f"{s.subset}: the runs do not share every task ({'; '.join(parts)}): "
                       f"compared on the {s.shared_tasks} tasks both scored")
        elif s.subset == "all" and s.shared_tasks < FEW_TASKS:
            out.append(f"only {s.shared_tasks} shared tasks: the interval and p-values are "
                       "rough")
        if s.subset == "all" and s.trials_run != s.trials_baseline:
            out.append(f"trials per task differ ({base.label}: "
                       f"{_span(s.trials_baseline)}, {run.label}: {_span(s.trials_run)}): "
                       "pass@k and pass^k are compared at the k both reach")
    return out


def _span(span: list[int]) -> str:
    return str(span[0]) if span[0] == span[1] else f"{span[0]}-{span[1]}"


def compare_runs(run: RunInput, base: RunInput, *, n_boot: int = 1000, n_perm: int = 10000,
                 seed: int = 0, backend: str = "auto") -> Comparison:
    """`run` against `base` (the baseline), per subset and overall."""
    names = _subsets(run, base)
    subsets = []
    exact = True
    for group in ["all"] + (names if len(names) > 1 else []):
        sub, ex = compare_subset(group, run, base, _aggregate(group, names), n_boot=n_boot,
                                 n_perm=n_perm, seed=seed, backend=backend)
        subsets.append(sub)
        exact = exact and ex
    warnings = _info_warnings(run, base) + _task_warnings(run, base, subsets)
    return Comparison(run=run.label, baseline=base.label, confidence=0.95, n_boot=n_boot,
                      n_perm=n_perm, seed=seed, exact=exact, warnings=warnings,
                      subsets=subsets)


def compare_all(runs: list[RunInput], **kw: object) -> list[Comparison]:
    """Every run after the first against the first (the baseline); [] for a single run."""
    return [compare_runs(r, runs[0], **kw) for r in runs[1:]]  # type: ignore[arg-type]
