"""The paired difference: exact sign-flip p-values by enumeration, the random test against the
exact one, NaN tasks left out, a calibrated null, and the interval's coverage by simulation."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from kernels.paired import (
    EXACT_MAX,
    expanded_confidence,
    paired_difference,
    sign_flip_p,
    t_quantile,
)


def _brute_p(d: np.ndarray) -> float:
    obs = abs(d.mean())
    hits = sum(abs((np.array(s) * d).mean()) >= obs - 1e-12
               for s in itertools.product((-1.0, 1.0), repeat=len(d)))
    return hits / 2 ** len(d)


def test_exact_p_equals_enumeration_by_hand() -> None:
    assert sign_flip_p(np.ones(5)) == (pytest.approx([2 / 32]), True)  # only all + / all -
    rng = np.random.default_rng(0)
    for t in (3, 7, 11):
        d = rng.normal(0.2, 1.0, t)
        p, exact = sign_flip_p(d)
        assert exact and p[0] == pytest.approx(_brute_p(d))
    p, _ = sign_flip_p(np.zeros(6))
    assert p[0] == 1.0  # no difference at all


def test_random_signs_agree_with_the_exact_test() -> None:
    rng = np.random.default_rng(1)
    d = rng.normal(0.15, 1.0, EXACT_MAX)
    exact, is_exact = sign_flip_p(d)
    assert is_exact
    # the same differences among more tasks whose difference is NaN (left out): random draws
    padded = np.concatenate([d, np.full(EXACT_MAX, np.nan)])
    drawn, is_exact = sign_flip_p(padded, n_perm=40000, seed=3)
    assert not is_exact
    assert drawn[0] == pytest.approx(exact[0], abs=0.01)


def test_columns_nan_tasks_and_shapes() -> None:
    a = np.array([[1.0, 0.5], [0.0, np.nan], [1.0, 1.0], [0.5, 0.0]])
    b = np.array([[0.0, 0.5], [0.0, 0.25], [np.nan, 0.0], [0.5, 0.0]])
    r = paired_difference(a, b, n_boot=200, backend="numpy")
    assert r.n_tasks.tolist() == [3, 3]  # a task counts in a column only where both have it
    assert r.a.tolist() == pytest.approx([0.5, 0.5]) and r.b.tolist() == pytest.approx([0.5 / 3, 0.5 / 3])
    assert r.diff.tolist() == pytest.approx([1 / 3, 1 / 3])
    assert np.all(r.low <= r.diff) and np.all(r.diff <= r.high)
    one = paired_difference(a[:, 0], b[:, 0], n_boot=200, backend="numpy")
    assert one.diff.shape == (1,) and one.diff[0] == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="differ in shape"):
        paired_difference(a, b[:3])
    two = paired_difference(np.array([1.0, 0.5]), np.array([0.0, 0.0]), n_boot=50,
                            backend="numpy")  # two tasks: the widest level, still below 1
    assert two.low[0] == pytest.approx(0.5) and two.high[0] == pytest.approx(1.0)
    single = paired_difference(np.array([1.0]), np.array([0.5]), n_boot=50, backend="numpy")
    assert single.diff[0] == 0.5 and np.isnan(single.low[0])  # no interval from one task
    empty = paired_difference(np.zeros((0, 2)), np.zeros((0, 2)), n_boot=10, backend="numpy")
    assert np.isnan(empty.diff).all() and np.isnan(empty.p_value).all()


def _task_means(rng: np.random.Generator, z: np.ndarray, shift: float, trials: int
                ) -> np.ndarray:
    p = 1.0 / (1.0 + np.exp(-(z + shift)))
    return (rng.random((len(z), trials)) < p[:, None]).mean(axis=1)


def test_null_is_calibrated_and_pairing_narrows_the_interval() -> None:
    """Two runs of one model: p < 0.05 in about 5% of simulated studies; the interval of a
    paired difference is far narrower than the runs' separate intervals would suggest."""
    rng = np.random.default_rng(7)
    rejections, paired_w, unpaired_w = 0, [], []
    sims = 300
    for _ in range(sims):
        z = rng.normal(0.0, 1.5, 40)
        a, b = _task_means(rng, z, 0.0, 4), _task_means(rng, z, 0.0, 4)
        r = paired_difference(a, b, n_boot=300, n_perm=400, seed=int(rng.integers(1 << 30)),
                              backend="numpy")
        rejections += r.p_value[0] < 0.05
        paired_w.append(r.high[0] - r.low[0])
        se = np.hypot(a.std(ddof=1), b.std(ddof=1)) / np.sqrt(len(z))
        unpaired_w.append(2 * 1.96 * se)
    assert 0.015 <= rejections / sims <= 0.10
    assert np.mean(paired_w) < 0.8 * np.mean(unpaired_w)


def test_t_quantiles_and_the_expanded_level() -> None:
    for df, t in ((1, 12.706), (2, 4.303), (3, 3.182), (5, 2.571), (9, 2.262), (30, 2.042)):
        assert t_quantile(0.975, df) == pytest.approx(t, abs=5e-3)
    assert expanded_confidence(0.95, 10) > expanded_confidence(0.95, 50) > 0.95
    assert expanded_confidence(0.95, 100000) == pytest.approx(0.95, abs=1e-3)


@pytest.mark.parametrize("n_tasks", [8, 50])
def test_interval_covers_the_population_difference(n_tasks: int) -> None:
    """Tasks drawn from a population (difficulty z ~ N(0, 1.5)), four Bernoulli trials per task
    and run; model A is better by 0.6 on the logit scale. The 95% interval of the mean task
    difference covers the population difference E[sigmoid(z + 0.6) - sigmoid(z)] in about 95%
    of the studies, with few tasks too (a plain percentile interval covers about 87% at 8)."""
    x, w = np.polynomial.hermite_e.hermegauss(80)
    w = w / w.sum()
    sig = lambda v: 1.0 / (1.0 + np.exp(-v))
    truth = float(np.sum(w * (sig(1.5 * x + 0.6) - sig(1.5 * x))))
    rng = np.random.default_rng(11)
    covered, sims = 0, 400
    for _ in range(sims):
        z = rng.normal(0.0, 1.5, n_tasks)
        r = paired_difference(_task_means(rng, z, 0.6, 4), _task_means(rng, z, 0.0, 4),
                              n_boot=400, n_perm=10, seed=int(rng.integers(1 << 30)),
                              backend="numpy")
        covered += r.low[0] <= truth <= r.high[0]
    assert 0.90 <= covered / sims <= 0.985
