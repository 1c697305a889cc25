"""The torch top-k kernel agrees with a numpy reference, across chunk boundaries."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
from kernels.topk import topk_inner_product


@pytest.mark.parametrize("chunk", [7, 100, 100000])
def test_topk_matches_numpy(chunk: int) -> None:
    rng = np.random.default_rng(0)
    m = rng.standard_normal((1000, 16)).astype(np.float16)
    q = rng.standard_normal(16).astype(np.float32)
    scores, idx = topk_inner_product(m, q, 8, chunk_rows=chunk)
    ref = np.argsort(-(m.astype(np.float32) @ q), kind="stable")[:8]
    assert idx.tolist() == ref.tolist()
    assert np.all(np.diff(scores) <= 0)


def test_ties_break_by_row_and_k_larger_than_n() -> None:
    m = np.ones((5, 4), np.float16)
    _, idx = topk_inner_product(m, np.ones(4, np.float32), 10, chunk_rows=2)
    assert idx.tolist() == [0, 1, 2, 3, 4]
