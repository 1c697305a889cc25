"""Bootstrap CIs over tasks: seeded, NaN-aware, numpy and torch backends agree statistically."""

from __future__ import annotations

import numpy as np
import pytest

from kernels.bootstrap import _replicate_means_numpy, bootstrap_ci


def test_seeded_and_deterministic() -> None:
    v = np.random.default_rng(0).random((50, 3))
    a = bootstrap_ci(v, n_boot=400, seed=3, backend="numpy")
    b = bootstrap_ci(v, n_boot=400, seed=3, backend="numpy")
    c = bootstrap_ci(v, n_boot=400, seed=4, backend="numpy")
    assert np.array_equal(a.low, b.low) and np.array_equal(a.high, b.high)
    assert not np.array_equal(a.low, c.low)
    assert np.all(a.low <= a.point) and np.all(a.point <= a.high)
    assert a.backend == "numpy" and a.n_tasks.tolist() == [50, 50, 50]


def test_replicates_equal_explicit_resampling() -> None:
    """The count-matrix formulation equals resampling task indices and averaging."""
    rng = np.random.default_rng(1)
    v = rng.random((20, 2))
    v[3, 1] = np.nan
    v[7, 1] = np.nan
    mask = (~np.isnan(v)).astype(float)
    reps = _replicate_means_numpy(np.where(mask > 0, v, 0.0), mask, 30, seed=11)
    idx_rng = np.random.default_rng(11)
    idx = idx_rng.integers(0, 20, size=(30, 20))
    for b in range(30):
        expect = np.nanmean(v[idx[b]], axis=0)
        assert reps[b] == pytest.approx(expect, abs=1e-12)


def test_interval_width_matches_normal_theory() -> None:
    rng = np.random.default_rng(5)
    v = (rng.random(400) < 0.3).astype(float)
    ci = bootstrap_ci(v, n_boot=4000, seed=0, backend="numpy")
    se = v.std() / np.sqrt(v.size)
    assert ci.high[0] - ci.low[0] == pytest.approx(2 * 1.96 * se, rel=0.12)


def test_nan_columns_and_empty_input() -> None:
    v = np.array([[1.0, np.nan], [0.0, np.nan], [1.0, np.nan]])
    ci = bootstrap_ci(v, n_boot=100, seed=0, backend="numpy")
    assert np.isnan(ci.point[1]) and np.isnan(ci.low[1]) and np.isnan(ci.high[1])
    assert ci.n_tasks.tolist() == [3, 0]
    empty = bootstrap_ci(np.zeros((0, 2)), n_boot=10)
    assert np.all(np.isnan(empty.low)) and empty.n_tasks.tolist() == [0, 0]


def test_sparse_column_ignores_replicates_without_contributors() -> None:
    v = np.full((30, 1), np.nan)
    v[0, 0] = 1.0
    ci = bootstrap_ci(v, n_boot=200, seed=2, backend="numpy")
    assert ci.low[0] == 1.0 and ci.high[0] == 1.0


def test_torch_backend_agrees_with_numpy() -> None:
    pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    v = rng.random((300, 4))
    v[:50, 3] = np.nan
    a = bootstrap_ci(v, n_boot=3000, seed=0, backend="numpy")
    t = bootstrap_ci(v, n_boot=3000, seed=0, backend="torch")
    t2 = bootstrap_ci(v, n_boot=3000, seed=0, backend="torch")
    assert t.backend.startswith("torch:")
    assert np.array_equal(t.low, t2.low)
    assert np.array_equal(a.point, t.point)
    assert t.low == pytest.approx(a.low, abs=0.01)
    assert t.high == pytest.approx(a.high, abs=0.01)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="backend"):
        bootstrap_ci(np.ones(3), backend="jax")
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci(np.ones(3), confidence=1.0)
