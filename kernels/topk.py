"""Exact inner-product top-k with torch, chunked over a (possibly memory-mapped) matrix.

The fallback retrieval kernel when FAISS is absent. `matrix` rows and `query` should be
L2-normalised (then scores are cosine similarities). Chunking bounds the float32 working copy
of a float16 memmap. Ties break towards the lower row index, so results are deterministic.
"""

from __future__ import annotations

import numpy as np


def topk_inner_product(matrix: np.ndarray, query: np.ndarray, k: int,
                       chunk_rows: int = 65536) -> tuple[np.ndarray, np.ndarray]:
    """(scores, row indices) of the k rows with the largest dot product with `query`."""
    import torch

    n = matrix.shape[0]
    k = min(k, n)
    if k <= 0:
        return np.zeros(0, np.float32), np.zeros(0, np.int64)
    q = torch.from_numpy(np.ascontiguousarray(query, dtype=np.float32).reshape(-1))
    best_s = torch.empty(0)
    best_i = torch.empty(0, dtype=torch.int64)
    for start in range(0, n, chunk_rows):
        block = torch.from_numpy(np.asarray(matrix[start:start + chunk_rows], dtype=np.float32))
        scores = block @ q
        kk = min(k, scores.shape[0])
        s, i = torch.topk(scores, kk)
        best_s = torch.cat([best_s, s])
        best_i = torch.cat([best_i, i + start])
        if best_s.shape[0] > k:
            order = _stable_order(best_s, best_i)[:k]
            best_s, best_i = best_s[order], best_i[order]
    order = _stable_order(best_s, best_i)
    return best_s[order].numpy(), best_i[order].numpy()


def _stable_order(scores, idx):
    import torch

    order = torch.from_numpy(np.lexsort((idx.numpy(), -scores.numpy())).astype(np.int64))
    return order
