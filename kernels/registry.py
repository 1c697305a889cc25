"""A registry of small per-task metric reducers, looked up by name ("pass@k", "pass^k", ...).

A reducer maps per-task counts and an array of k values to a per-task matrix of shape (T, K).
Reducers return NaN for a task that cannot be estimated at that k (n < k), never 0 or 1;
`compute_curve` then averages over the tasks that have a value and counts them.

    @metric("pass@k")
    def _pass_at_k(counts: TaskCounts, ks: np.ndarray) -> np.ndarray: ...

    curve = compute_curve("pass@k", counts, range(1, 33))
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from kernels.passk import (
    TaskCounts,
    TaskCurve,
    avg_at_k,
    mean_over_tasks,
    pass_at_k,
    pass_hat_k,
)

Reducer = Callable[[TaskCounts, np.ndarray], np.ndarray]

_REGISTRY: dict[str, Reducer] = {}


def metric(name: str) -> Callable[[Reducer], Reducer]:
    """Register `fn` under `name`; a second registration of the same name is an error."""

    def register(fn: Reducer) -> Reducer:
        if name in _REGISTRY and _REGISTRY[name] is not fn:
            raise ValueError(f"metric {name!r} is already registered")
        _REGISTRY[name] = fn
        return fn

    return register


def get_metric(name: str) -> Reducer:
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise KeyError(f"unknown metric {name!r}; known: {known}") from None


def list_metrics() -> list[str]:
    return sorted(_REGISTRY)


def compute_curve(name: str, counts: TaskCounts, ks: Iterable[int]) -> TaskCurve:
    """Per-task values of metric `name` at every k, and their mean over contributing tasks."""
    k_arr = np.asarray(list(ks), dtype=np.int64)
    per_task = np.asarray(get_metric(name)(counts, k_arr), dtype=np.float64)
    if per_task.shape != (counts.n_tasks, k_arr.shape[0]):
        raise ValueError(
            f"metric {name!r} returned shape {per_task.shape}, "
            f"expected {(counts.n_tasks, k_arr.shape[0])}"
        )
    value, n_tasks = mean_over_tasks(per_task)
    return TaskCurve(name=name, ks=k_arr, per_task=per_task, value=value, n_tasks=n_tasks)


@metric("pass@k")
def _pass_at_k(counts: TaskCounts, ks: np.ndarray) -> np.ndarray:
    return pass_at_k(counts.n, counts.c, ks)


@metric("pass^k")
def _pass_hat_k(counts: TaskCounts, ks: np.ndarray) -> np.ndarray:
    return pass_hat_k(counts.n, counts.c, ks)


@metric("avg@k")
def _avg_at_k(counts: TaskCounts, ks: np.ndarray) -> np.ndarray:
    return avg_at_k(counts.n, counts.score_sum, ks)


def _per_task_ratio(num: np.ndarray, n: np.ndarray, ks: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        v = np.where(n > 0, num / np.maximum(n, 1), np.nan)
    return np.repeat(v[:, None], ks.shape[0], axis=1)


@metric("mean")
def _mean(counts: TaskCounts, ks: np.ndarray) -> np.ndarray:
    """Mean trial score per task (independent of k; NaN only for a task without trials)."""
    return _per_task_ratio(counts.score_sum, counts.n, ks)


@metric("success_rate")
def _success_rate(counts: TaskCounts, ks: np.ndarray) -> np.ndarray:
    """Fraction of successful trials per task (independent of k)."""
    return _per_task_ratio(counts.c.astype(np.float64), counts.n, ks)
