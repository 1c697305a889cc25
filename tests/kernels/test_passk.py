"""pass@k / pass^k / avg@k against brute-force enumeration of every k-subset of trials."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from kernels.passk import (
    avg_at_k,
    log_comb,
    mean_over_tasks,
    pass_at_k,
    pass_hat_k,
    successes_from_scores,
    task_counts,
)
from kernels.registry import compute_curve, get_metric, list_metrics, metric


def brute(outcomes: list[float], k: int, threshold: float = 0.5) -> tuple[float, float, float]:
    """(pass@k, pass^k, avg@k) by enumerating all k-subsets of the trials."""
    subsets = list(itertools.combinations(outcomes, k))
    any_ok = sum(1 for s in subsets if any(x >= threshold for x in s)) / len(subsets)
    all_ok = sum(1 for s in subsets if all(x >= threshold for x in s)) / len(subsets)
    avg = sum(sum(s) / k for s in subsets) / len(subsets)
    return any_ok, all_ok, avg


def test_log_comb_matches_math_comb() -> None:
    n = np.arange(0, 70)[:, None]
    k = np.arange(0, 70)[None, :]
    got = log_comb(n, k)
    for ni in range(70):
        for ki in range(70):
            if ki > ni:
                assert got[ni, ki] == -np.inf
            else:
                assert got[ni, ki] == pytest.approx(math.log(math.comb(ni, ki)), rel=1e-12, abs=1e-12)


def test_matches_brute_force_enumeration_small_n() -> None:
    rng = np.random.default_rng(7)
    for n in range(1, 10):
        for _ in range(6):
            scores = rng.random(n).round(2).tolist()
            c = sum(1 for x in scores if x >= 0.5)
            ks = np.arange(1, n + 1)
            pa = pass_at_k([n], [c], ks)[0]
            ph = pass_hat_k([n], [c], ks)[0]
            av = avg_at_k([n], [sum(scores)], ks)[0]
            for k in range(1, n + 1):
                b_any, b_all, b_avg = brute(scores, k)
                assert pa[k - 1] == pytest.approx(b_any, abs=1e-12)
                assert ph[k - 1] == pytest.approx(b_all, abs=1e-12)
                assert av[k - 1] == pytest.approx(b_avg, abs=1e-12)


def test_all_c_for_n8_exact_fractions() -> None:
    n = 8
    for c in range(n + 1):
        outcomes = [1.0] * c + [0.0] * (n - c)
        for k in range(1, n + 1):
            b_any, b_all, _ = brute(outcomes, k)
            assert pass_at_k([n], [c], k)[0] == pytest.approx(b_any, abs=1e-13)
            assert pass_hat_k([n], [c], k)[0] == pytest.approx(b_all, abs=1e-13)


def test_nan_when_n_below_k_not_zero_or_one() -> None:
    out = pass_at_k([3, 5], [3, 0], [1, 4, 5, 6])
    assert out.shape == (2, 4)
    assert np.isnan(out[0, 1]) and np.isnan(out[0, 2]) and np.isnan(out[1, 3])
    assert out[0, 0] == 1.0 and out[1, 2] == 0.0
    ph = pass_hat_k([3], [3], 4)
    assert np.isnan(ph[0])
    assert np.isnan(avg_at_k([2], [1.5], 3)[0])


def test_large_n_stable_in_log_space() -> None:
    n = np.array([32, 1000, 5000])
    c = np.array([1, 3, 2500])
    ks = np.arange(1, 33)
    pa = pass_at_k(n, c, ks)
    ph = pass_hat_k(n, c, ks)
    assert np.all(np.isfinite(pa)) and np.all(np.isfinite(ph))
    assert np.all((pa >= 0) & (pa <= 1)) and np.all((ph >= 0) & (ph <= 1))
    # pass@k rises and pass^k falls with k
    assert np.all(np.diff(pa, axis=1) >= -1e-12)
    assert np.all(np.diff(ph, axis=1) <= 1e-12)
    # n=32, c=1: pass@k = k/32 exactly
    assert pa[0] == pytest.approx(ks / 32, abs=1e-12)
    # n=5000, c=2500, k=2: C(2500,2)/C(5000,2)
    assert ph[2, 1] == pytest.approx(math.comb(2500, 2) / math.comb(5000, 2), rel=1e-10)


def test_ragged_average_counts_contributing_tasks() -> None:
    keys = ["a"] * 2 + ["b"] * 4 + ["c"] * 4
    succ = np.array([1, 0, 1, 1, 0, 0, 0, 0, 0, 1], dtype=bool)
    counts = task_counts(keys, succ.astype(float), succ)
    assert counts.keys == ("a", "b", "c")
    assert counts.n.tolist() == [2, 4, 4] and counts.c.tolist() == [1, 2, 1]
    curve = compute_curve("pass@k", counts, range(1, 6))
    assert curve.n_tasks.tolist() == [3, 3, 2, 2, 0]
    per = np.array([pass_at_k([2], [1], 3)[0], pass_at_k([4], [2], 3)[0], pass_at_k([4], [1], 3)[0]])
    assert np.isnan(per[0])
    assert curve.value[2] == pytest.approx((per[1] + per[2]) / 2)
    assert np.isnan(curve.value[4])
    assert curve.value[0] == pytest.approx((0.5 + 0.5 + 0.25) / 3)


def test_mean_over_tasks_all_nan_column_no_warning() -> None:
    with np.errstate(all="raise"):
        mean, count = mean_over_tasks(np.array([[np.nan, 1.0], [np.nan, 0.0]]))
    assert np.isnan(mean[0]) and mean[1] == 0.5 and count.tolist() == [0, 2]


def test_registry_names_and_errors() -> None:
    for name in ("pass@k", "pass^k", "avg@k", "mean", "success_rate"):
        assert name in list_metrics()
    with pytest.raises(KeyError, match="unknown metric"):
        get_metric("nope@k")
    with pytest.raises(ValueError, match="already registered"):
        metric("pass@k")(lambda counts, ks: ks)


def test_successes_threshold_is_explicit() -> None:
    s = np.array([0.74, 0.75, np.nan, 1.0])
    assert successes_from_scores(s, 0.75).tolist() == [False, True, False, True]
    with pytest.raises(ValueError):
        successes_from_scores(s, 1.5)


def test_bad_counts_raise() -> None:
    with pytest.raises(ValueError, match="task 1"):
        pass_at_k([3, 2], [1, 3], 1)
    with pytest.raises(ValueError, match="k must be >= 1"):
        pass_at_k([3], [1], 0)
