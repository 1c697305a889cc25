"""Exact inner-product top-k with torch, chunked over a (possibly memory-mapped) matrix.

The fallback retrieval kernel when FAISS is absent. `matrix` rows and `query` should be
L2-normalised (then scores are cosine similarities). Chunking bounds the float32 working copy
of a float16 memmap (CHUNK_BYTES: 8 MiB, 512 rows at 4,096 dimensions), so a process streaming
a shared mapped matrix holds no copy of it. Ties break towards the lower row index, so results
are deterministic.
"""

from __future__ import annotations

import numpy as np

CHUNK_BYTES = 8 << 20


def topk_inner_product(matrix: np.ndarray, query: np.ndarray, k: int,
                       chunk_rows: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(scores, row indices) of the k rows with the largest dot product with `query`.
    `chunk_rows`: rows converted to float32 at a time (default: CHUNK_BYTES worth)."""
    import torch

    n = matrix.shape[0]
    if chunk_rows is None:
        chunk_rows = max(1, CHUNK_BYTES // (4 * max(1, matrix.shape[1])))
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


class DeviceTopK:
    """Exact inner-product top-k over a matrix held once on a torch device (a GPU when given).

    `topk_inner_product` streams a memory-mapped matrix through CPU memory on every query; this
    keeps the matrix resident (float16 or float32) and answers a batch of queries per call.
    Same contract: rows and queries L2-normalised, results by score descending, ties broken
    towards the lower row index (also at the k-th place), so CPU and GPU give the same rows
    wherever their scores agree.
    """

    def __init__(self, matrix: np.ndarray, device: str = "cpu", dtype: str = "float32",
                 max_scores: int = 1 << 26) -> None:
        import torch

        self.max_scores = max_scores      # scores held at once: 2**26 float32 = 256 MiB
        self._torch = torch
        self.device = torch.device(device)
        self.dtype = getattr(torch, dtype)
        self.n, self.dim = matrix.shape
        self.matrix = torch.from_numpy(np.ascontiguousarray(matrix)).to(self.device, self.dtype)

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(scores, row indices), each (n_queries, min(k, rows))."""
        torch = self._torch
        q = np.ascontiguousarray(queries, dtype=np.float32).reshape(-1, self.dim)
        k = min(k, self.n)
        if k <= 0:
            return np.zeros((q.shape[0], 0), np.float32), np.zeros((q.shape[0], 0), np.int64)
        block = max(1, self.max_scores // self.n)
        if q.shape[0] > block:
            parts = [self.search(q[j:j + block], k) for j in range(0, q.shape[0], block)]
            return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
        qt = torch.from_numpy(q).to(self.device, self.dtype)
        scores = (qt @ self.matrix.T).float()
        top_s, top_i = torch.topk(scores, k, dim=1)
        # a row whose k-th score is shared by a row left out of the top-k: take every row
        # scoring at least the k-th and keep the lowest indices (the rare slow path)
        tied = torch.nonzero((scores >= top_s[:, -1:]).sum(dim=1) > k).flatten().tolist()
        s, i = top_s.cpu().numpy(), top_i.cpu().numpy()
        order = np.lexsort((i, -s), axis=-1)
        s, i = np.take_along_axis(s, order, 1), np.take_along_axis(i, order, 1)
        for r in tied:
            idx = torch.nonzero(scores[r] >= top_s[r, -1]).flatten()
            rs, ri = scores[r][idx].cpu().numpy(), idx.cpu().numpy()
            keep = np.lexsort((ri, -rs))[:k]
            s[r], i[r] = rs[keep], ri[keep]
        return s.astype(np.float32), i.astype(np.int64)
