"""The recall gate of the embedding index: train a FAISS IVF index for one tool and keep it
only where its recall@k against exact search reaches the threshold (see `cache_store.index`'s
module docstring, "Recall gate"). CPU heavy; `build_index` runs `gate_tool` in a worker
process. The tool's float16 matrix is read from its memory map a block at a time (training
sample, IVF adds, exact reference search), never as a whole float32 copy: a 250,000 x 4,096
tool needs the IVF's own lists (4 GB) and a 2 GB training sample, not 4 GB more."""

from __future__ import annotations

from typing import Any, Literal

import msgspec
import numpy as np

IVF_NPROBE = 16             # first rung of the nprobe ladder
RECALL_K = 8                # the reference's top-k (max_examples)
MIN_RECALL = 0.99
RECALL_SAMPLE = 1000
MAX_PROBE_FRACTION = 1 / 8  # probing more lists than this saves too little over exact search
_TIE_EPS = 1e-5             # inner products within this of the k-th exact score are ties


class ToolSearch(msgspec.Struct, omit_defaults=True):
    """How one tool is searched, decided when the index is built.

    search: "exact" (flat inner product) or "approximate" (IVF at `nprobe`).
    reason: why: "small" (rows <= ivf_threshold), "no-faiss", "recall" (the gate's verdict).
    recall_at_k: recall@k of IVF vs exact at the chosen (or best tried) nprobe; None if not
        measured. recall_sample: number of query rows it was measured on.
    trials: every (nprobe, recall) measured, in ladder order.
    """

    rows: int
    search: Literal["exact", "approximate"] = "exact"
    reason: str = "small"
    nlist: int = 0
    nprobe: int = 0
    recall_at_k: float | None = None
    recall_sample: int = 0
    trials: list[tuple[int, float]] = []


def _faiss() -> Any | None:
    try:
        import faiss
    except ImportError:
        return None
    return faiss


BLOCK_BYTES = 64 << 20      # float32 rows converted at a time when streaming the matrix


def _map_vectors(vectors_path: str, n: int, dim: int) -> np.ndarray:
    return np.memmap(vectors_path, dtype=np.float16, mode="r", shape=(n, dim))


def float32_blocks(x: np.ndarray) -> Any:
    """(first row, float32 block) over the rows of a (mapped) matrix, BLOCK_BYTES at a time."""
    rows = max(1, BLOCK_BYTES // (4 * max(1, x.shape[1])))
    for start in range(0, x.shape[0], rows):
        yield start, np.asarray(x[start:start + rows], dtype=np.float32)


def exact_knn(faiss: Any, xq: np.ndarray, x: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(scores, ids), each (len(xq), k): exact inner-product top-k of `xq` over every row of
    `x`, a block at a time (faiss.knn per block, merged; ties to the lower row)."""
    best_s = np.full((xq.shape[0], 0), -np.inf, np.float32)
    best_i = np.zeros((xq.shape[0], 0), np.int64)
    for start, block in float32_blocks(x):
        s, i = faiss.knn(xq, block, min(k, block.shape[0]), metric=faiss.METRIC_INNER_PRODUCT)
        s = np.concatenate([best_s, s], axis=1)
        i = np.concatenate([best_i, i + start], axis=1)
        order = np.lexsort((i, -s), axis=-1)[:, :k]
        best_s, best_i = np.take_along_axis(s, order, 1), np.take_along_axis(i, order, 1)
    return best_s, best_i


def ivf_shape(n: int) -> tuple[int, int]:
    """(nlist, training rows) of the IVF index over `n` rows: 4 sqrt(n) lists, at least 40 rows
    per list, trained on 64 rows per list."""
    nlist = max(1, min(int(4 * np.sqrt(n)), n // 40))
    return nlist, min(n, nlist * 64)


def _train(faiss: Any, x: np.ndarray) -> Any:
    n, dim = x.shape
    nlist, n_train = ivf_shape(n)
    quant = faiss.IndexFlatIP(dim)
    ivf = faiss.IndexIVFFlat(quant, dim, nlist, faiss.METRIC_INNER_PRODUCT)
    ivf.cp.seed = 1234
    sample = np.asarray(x[np.random.default_rng(0).choice(n, size=n_train, replace=False)],
                        dtype=np.float32)
    ivf.train(sample)
    del sample
    for _, block in float32_blocks(x):  # ids run on in add order: the same index as one add
        ivf.add(block)
    return ivf


def train_ivf(vectors_path: str, n: int, dim: int, out_path: str) -> None:
    """Train and write an IVF index with no recall gate (benchmarks; builds use `gate_tool`)."""
    faiss = _faiss()
    if faiss is None:
        return
    faiss.omp_set_num_threads(1)  # determinism over speed; a build runs once
    ivf = _train(faiss, _map_vectors(vectors_path, n, dim))
    ivf.nprobe = IVF_NPROBE
    faiss.write_index(ivf, out_path)


def nprobe_ladder(nlist: int, max_fraction: float = MAX_PROBE_FRACTION) -> list[int]:
    """IVF_NPROBE, doubled while it probes at most `max_fraction` of the lists (>= 1 rung)."""
    cap = max(1, int(nlist * max_fraction))
    rungs, p = [], IVF_NPROBE
    while p <= cap:
        rungs.append(p)
        p *= 2
    return rungs or [min(IVF_NPROBE, nlist)]


def recall_at_k(x: np.ndarray, approx_ids: np.ndarray, exact_ids: np.ndarray,
                exact_scores: np.ndarray, query_rows: np.ndarray, k: int) -> float:
    """Share of the exact top-k (leaving out each query's own row) that the approximate top-k
    found; an approximate neighbour scoring within _TIE_EPS of the exact k-th score counts.
    `approx_ids`, `exact_ids`, `exact_scores`: (q, k+1) search results for x[query_rows]."""
    hits = total = 0
    for r, row in enumerate(query_rows):
        keep = (exact_ids[r] != row) & (exact_ids[r] >= 0)
        e_ids, e_sc = exact_ids[r][keep][:k], exact_scores[r][keep][:k]
        kk = len(e_ids)
        if kk == 0:
            continue
        total += kk
        a_ids = [int(i) for i in approx_ids[r] if i >= 0 and i != row][:kk]
        exact_set = {int(i) for i in e_ids}
        kth = float(e_sc[kk - 1])
        q = np.asarray(x[row], dtype=np.float32)
        for i in a_ids:
            if i in exact_set or float(np.asarray(x[i], dtype=np.float32) @ q) >= kth - _TIE_EPS:
                hits += 1
    return hits / total if total else 1.0


def gate_tool(vectors_path: str, n: int, dim: int, ivf_path: str, *, min_recall: float,
              sample: int, k: int = RECALL_K, nprobes: list[int] | None = None,
              seed: int = 0, max_probe_fraction: float = MAX_PROBE_FRACTION) -> ToolSearch:
    """Train an IVF index for one tool, measure its recall@k against exact search on a seeded
    sample of the tool's own rows, and keep it (written to `ivf_path`) only if a rung of the
    nprobe ladder reaches `min_recall`. Runs in a worker process: CPU heavy."""
    faiss = _faiss()
    if faiss is None:
        return ToolSearch(rows=n, search="exact", reason="no-faiss")
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)  # determinism over speed for training
    x = _map_vectors(vectors_path, n, dim)
    ivf = _train(faiss, x)
    faiss.omp_set_num_threads(threads)
    rows = np.sort(np.random.default_rng(seed).choice(n, size=min(sample, n), replace=False))
    xq = np.ascontiguousarray(x[rows], dtype=np.float32)
    kk = min(k + 1, n)
    e_scores, e_ids = exact_knn(faiss, xq, x, kk)
    ladder = list(nprobes) if nprobes else nprobe_ladder(ivf.nlist, max_probe_fraction)
    trials: list[tuple[int, float]] = []
    for p in ladder:
        ivf.nprobe = min(p, ivf.nlist)
        _, a_ids = ivf.search(xq, kk)
        rec = recall_at_k(x, a_ids, e_ids, e_scores, rows, k)
        trials.append((int(ivf.nprobe), rec))
        if rec >= min_recall:
            faiss.write_index(ivf, ivf_path)
            return ToolSearch(rows=n, search="approximate", reason="recall", nlist=ivf.nlist,
                              nprobe=int(ivf.nprobe), recall_at_k=rec,
                              recall_sample=len(rows), trials=trials)
    best_p, best = max(trials, key=lambda t: t[1])
    return ToolSearch(rows=n, search="exact", reason="recall", nlist=ivf.nlist, nprobe=best_p,
                      recall_at_k=best, recall_sample=len(rows), trials=trials)


def _gate_job(path: str, n: int, dim: int, ivf: str, min_recall: float, sample: int,
              nprobes: list[int] | None, seed: int) -> ToolSearch:
    return gate_tool(path, n, dim, ivf, min_recall=min_recall, sample=sample, nprobes=nprobes,
                     seed=seed)


def summary_lines(meta: Any) -> list[str]:
    """Human-readable lines for `agentsweep cache index` of an index's meta (`index.IndexMeta`):
    one per tool with the search mode the gate chose and the recall it measured."""
    head = (f"index: {sum(meta.rows.values())} rows over {len(meta.tools)} tools, "
            f"dim {meta.dim}, embedder {meta.embedder_model} ({meta.embedder}); approximate "
            f"search only where recall@{meta.recall_k} >= {meta.min_recall:g}")
    out = [head]
    for name, ts in meta.tools.items():
        line = f"  {name}: {ts.rows} rows, {ts.search}"
        if ts.reason == "small":
            line += " (small tool)"
        elif ts.reason == "no-faiss":
            line += " (faiss not installed: no IVF)"
        elif ts.search == "approximate":
            line += (f" (IVF nlist {ts.nlist}, nprobe {ts.nprobe}): recall@{meta.recall_k} "
                     f"{ts.recall_at_k:.4f} on {ts.recall_sample} sampled rows")
        else:
            tried = ", ".join(f"nprobe {p}: {r:.4f}" for p, r in ts.trials)
            line += f" (IVF recall@{meta.recall_k} below {meta.min_recall:g}: {tried})"
        out.append(line)
    return out
