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


def _devices() -> list:
    import torch

    return ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
        not torch.cuda.is_available(), reason="no CUDA device (perf.gpu_check runs it on one)"))]


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_device_topk_matches_the_streaming_kernel(dtype: str, device: str) -> None:
    from kernels.topk import DeviceTopK

    rng = np.random.default_rng(1)
    m = rng.standard_normal((3000, 16)).astype(np.float16)
    qs = rng.standard_normal((700, 16)).astype(np.float32)
    dev = DeviceTopK(m, device, dtype=dtype, max_scores=3000 * 64)   # 11 query blocks
    scores, idx = dev.search(qs, 8)
    assert scores.shape == idx.shape == (700, 8)
    for r in (0, 1, 350, 699):
        ref_s, ref_i = topk_inner_product(m, qs[r], 8)
        if dtype == "float32":
            assert idx[r].tolist() == ref_i.tolist()
        np.testing.assert_allclose(scores[r], ref_s, rtol=0, atol=5e-2 if dtype == "float16" else 1e-4)
        assert np.all(np.diff(scores[r]) <= 0)


@pytest.mark.parametrize("device", _devices())
def test_device_topk_ties_at_the_kth_place_take_the_lowest_rows(device: str) -> None:
    from kernels.topk import DeviceTopK

    m = np.zeros((10, 4), np.float32)
    m[:, 0] = 1.0
    m[7, 0] = 2.0                       # the clear winner; rows 0..9 else tie
    s, i = DeviceTopK(m, device).search(np.array([[1, 0, 0, 0], [0, 1, 0, 0]], np.float32), 3)
    assert i.tolist() == [[7, 0, 1], [0, 1, 2]]
    assert s[0].tolist() == [2.0, 1.0, 1.0]
    _, i = DeviceTopK(m[:2], device).search(np.ones((1, 4), np.float32), 5)
    assert i.tolist() == [[0, 1]]
