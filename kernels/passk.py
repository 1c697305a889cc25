"""Unbiased pass@k, pass^k and avg@k estimators, vectorized over tasks and k.

Every task i has n_i trials of which c_i succeeded. For a draw of k trials without
replacement from the n_i trials:

    pass@k_i = 1 - C(n_i - c_i, k) / C(n_i, k)   (at least one of the k succeeds)
    pass^k_i = C(c_i, k) / C(n_i, k)             (all k succeed)
    avg@k_i  = mean score of the n_i trials      (the unbiased estimate of the mean of k draws)

The binomial ratios are computed in log space from a table of log-factorials
(`math.lgamma`, exact per entry), so n in the thousands neither overflows nor loses precision.
A task with n_i < k has no unbiased estimate: its value is NaN, never 0 or 1.

Tasks may have different n (ragged). The run-level value at k is the mean over the tasks
with n_i >= k; `TaskCurve.n_tasks[k]` says how many tasks contributed. When no task has
n_i >= k the run-level value is NaN.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

__all__ = [
    "TaskCounts",
    "TaskCurve",
    "avg_at_k",
    "log_comb",
    "mean_over_tasks",
    "pass_at_k",
    "pass_hat_k",
    "successes_from_scores",
    "task_counts",
]


@lru_cache(maxsize=8)
def _log_factorial_table(size: int) -> np.ndarray:
    """log(m!) for m in 0..size-1 (read-only)."""
    table = np.array([math.lgamma(m + 1.0) for m in range(size)], dtype=np.float64)
    table.flags.writeable = False
    return table


def _log_factorials(upto: int) -> np.ndarray:
    size = 64
    while size <= upto:
        size *= 2
    return _log_factorial_table(size)


def log_comb(n: np.ndarray, k: np.ndarray) -> np.ndarray:
    """log C(n, k) elementwise (broadcasting); -inf where k < 0 or k > n."""
    n_arr = np.asarray(n, dtype=np.int64)
    k_arr = np.asarray(k, dtype=np.int64)
    n_b, k_b = np.broadcast_arrays(n_arr, k_arr)
    valid = (k_b >= 0) & (k_b <= n_b) & (n_b >= 0)
    top = int(n_b.max()) if n_b.size else 0
    lf = _log_factorials(max(top, 0))
    n_c = np.where(valid, n_b, 0)
    k_c = np.where(valid, k_b, 0)
    out = lf[n_c] - lf[k_c] - lf[n_c - k_c]
    return np.where(valid, out, -np.inf)


def _check_counts(n: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n_arr = np.asarray(n, dtype=np.int64).reshape(-1)
    c_arr = np.asarray(c, dtype=np.int64).reshape(-1)
    if n_arr.shape != c_arr.shape:
        raise ValueError(f"n and c differ in length: {n_arr.shape[0]} vs {c_arr.shape[0]}")
    if np.any(n_arr < 0) or np.any(c_arr < 0) or np.any(c_arr > n_arr):
        bad = int(np.flatnonzero((n_arr < 0) | (c_arr < 0) | (c_arr > n_arr))[0])
        raise ValueError(
            f"task {bad}: need 0 <= c <= n, got n={int(n_arr[bad])}, c={int(c_arr[bad])}"
        )
    return n_arr, c_arr


def _ks(k: int | np.ndarray | list[int]) -> tuple[np.ndarray, bool]:
    k_arr = np.asarray(k, dtype=np.int64)
    scalar = k_arr.ndim == 0
    k_arr = k_arr.reshape(-1)
    if np.any(k_arr < 1):
        raise ValueError(f"k must be >= 1, got {k_arr.tolist()}")
    return k_arr, scalar


def pass_at_k(n: np.ndarray, c: np.ndarray, k: int | np.ndarray | list[int]) -> np.ndarray:
    """Per-task unbiased pass@k. Shape (T,) for scalar k, else (T, K). NaN where n < k."""
    n_arr, c_arr = _check_counts(n, c)
    k_arr, scalar = _ks(k)
    nn, cc, kk = n_arr[:, None], c_arr[:, None], k_arr[None, :]
    with np.errstate(invalid="ignore"):  # -inf - -inf where n < k; masked below
        ratio = np.exp(log_comb(nn - cc, kk) - log_comb(nn, kk))  # exp(-inf) = 0 when n-c < k
    out = np.where(nn >= kk, 1.0 - ratio, np.nan)
    return out[:, 0] if scalar else out


def pass_hat_k(n: np.ndarray, c: np.ndarray, k: int | np.ndarray | list[int]) -> np.ndarray:
    """Per-task unbiased pass^k (all k succeed). Shape (T,) or (T, K). NaN where n < k."""
    n_arr, c_arr = _check_counts(n, c)
    k_arr, scalar = _ks(k)
    nn, cc, kk = n_arr[:, None], c_arr[:, None], k_arr[None, :]
    with np.errstate(invalid="ignore"):  # -inf - -inf where n < k; masked below
        ratio = np.exp(log_comb(cc, kk) - log_comb(nn, kk))  # 0 when c < k
    out = np.where(nn >= kk, ratio, np.nan)
    return out[:, 0] if scalar else out


def avg_at_k(n: np.ndarray, score_sum: np.ndarray, k: int | np.ndarray | list[int]) -> np.ndarray:
    """Per-task avg@k: the mean trial score (unbiased for the mean of k draws); NaN where n < k."""
    n_arr = np.asarray(n, dtype=np.int64).reshape(-1)
    s_arr = np.asarray(score_sum, dtype=np.float64).reshape(-1)
    if n_arr.shape != s_arr.shape:
        raise ValueError(f"n and score_sum differ in length: {n_arr.shape[0]} vs {s_arr.shape[0]}")
    k_arr, scalar = _ks(k)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n_arr > 0, s_arr / np.maximum(n_arr, 1), np.nan)
    out = np.where(n_arr[:, None] >= k_arr[None, :], mean[:, None], np.nan)
    return out[:, 0] if scalar else out


def mean_over_tasks(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean over axis 0 ignoring NaN tasks, and the number of tasks that contributed.

    A column with no contributing task is NaN (with count 0), without a warning.
    """
    v = np.asarray(values, dtype=np.float64)
    ok = ~np.isnan(v)
    count = ok.sum(axis=0)
    total = np.where(ok, v, 0.0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    return mean, count


def successes_from_scores(scores: np.ndarray, threshold: float) -> np.ndarray:
    """Success of continuous scores under an explicit threshold (score >= threshold).

    NaN scores (unscored trials) give False; callers drop unscored trials before counting.
    """
    if not 0.0 <= threshold <= 1.0 or math.isnan(threshold):
        raise ValueError(f"success threshold must be in [0, 1], got {threshold}")
    s = np.asarray(scores, dtype=np.float64)
    return np.greater_equal(s, threshold, where=~np.isnan(s), out=np.zeros(s.shape, dtype=bool))


@dataclass(frozen=True)
class TaskCounts:
    """Per-task trial counts: `n` trials, `c` successes, `score_sum` summed scores (shape (T,))."""

    keys: tuple[str, ...]
    n: np.ndarray
    c: np.ndarray
    score_sum: np.ndarray

    @property
    def n_tasks(self) -> int:
        return len(self.keys)

    @property
    def max_trials(self) -> int:
        return int(self.n.max()) if self.n.size else 0


def task_counts(
    task_keys: list[str] | tuple[str, ...],
    scores: np.ndarray,
    successes: np.ndarray,
) -> TaskCounts:
    """Group per-trial (task key, score, success) rows into per-task counts (stable key order)."""
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    ok = np.asarray(successes, dtype=bool).reshape(-1)
    if not (len(task_keys) == s.shape[0] == ok.shape[0]):
        raise ValueError(
            f"task_keys, scores, successes differ in length: "
            f"{len(task_keys)}, {s.shape[0]}, {ok.shape[0]}"
        )
    uniq: dict[str, int] = {}
    idx = np.fromiter((uniq.setdefault(t, len(uniq)) for t in task_keys), np.int64, len(task_keys))
    t = len(uniq)
    n = np.bincount(idx, minlength=t).astype(np.int64)
    c = np.bincount(idx, weights=ok.astype(np.float64), minlength=t).astype(np.int64)
    ssum = np.bincount(idx, weights=s, minlength=t)
    return TaskCounts(keys=tuple(uniq), n=n, c=c, score_sum=ssum)


@dataclass(frozen=True)
class TaskCurve:
    """A metric at k = 1..K: run-level `value[k-1]`, per-task `per_task` (T, K), contributors."""

    name: str
    ks: np.ndarray
    per_task: np.ndarray
    value: np.ndarray
    n_tasks: np.ndarray
