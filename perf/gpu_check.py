"""GPU check of the retrieval kernels: FAISS on GPU vs FAISS on CPU, and the torch top-k kernel
on GPU vs CPU, side by side in one run on the same SYNTHETIC matrix (not real data).

    python -m perf.gpu_check [--rows 250000] [--dim 384] [--queries 1000] [--k 8] [--json PATH]

The matrix is what the embedding index holds (`cache_store.index`): rows L2-normalised and
stored as float16, searched by inner product for the top 8. Each backend reports its build
time (flat: add; IVF: train + add, with the project's own nlist rule and nprobe), a batched
search of every query (queries per second), the one-query latency the sandbox sees (p50 over
`--single` queries) and its agreement@k with exact search (a returned row whose exact score
ties the k-th counts as a hit). Ratios are printed against each backend's CPU counterpart; no
target is asserted. Backends that cannot run here (no FAISS, no GPU) are listed with the reason.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def synthetic(rows: int, dim: int, queries: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(float16 matrix of unit rows, float32 unit queries): clustered, so IVF has structure."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((256, dim)).astype(np.float32)
    x = centres[rng.integers(0, 256, rows)] + 0.6 * rng.standard_normal((rows, dim), np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    q = centres[rng.integers(0, 256, queries)] + 0.6 * rng.standard_normal((queries, dim), np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return x.astype(np.float16), q.astype(np.float32)


def agreement(ids: np.ndarray, exact_ids: np.ndarray, exact_scores: np.ndarray,
              x: np.ndarray, q: np.ndarray) -> float:
    """Share of returned rows that belong to the exact top-k (ties with the k-th count)."""
    hits = total = 0
    for r in range(ids.shape[0]):
        kth = float(exact_scores[r, -1])
        exact = set(exact_ids[r].tolist())
        for i in ids[r].tolist():
            total += 1
            if i in exact or (i >= 0 and float(x[i] @ q[r]) >= kth - 1e-5):
                hits += 1
    return hits / max(total, 1)


def _timed(fn: Callable[[], Any], sync: Callable[[], None]) -> tuple[float, Any]:
    sync()
    t = time.perf_counter()
    out = fn()
    sync()
    return time.perf_counter() - t, out


class Backend:
    """One searchable index: `build()` then `search(queries) -> (scores, ids)`."""

    def __init__(self, name: str, build: Callable[[], Any], search: Callable[[Any, np.ndarray], Any],
                 sync: Callable[[], None] = lambda: None, counterpart: str | None = None) -> None:
        self.name, self._build, self._search, self.sync = name, build, search, sync
        self.counterpart = counterpart

    def run(self, q: np.ndarray, k: int, single: int) -> dict[str, Any]:
        build_s, index = _timed(self._build, self.sync)
        self._search(index, q[:4])                                   # warm-up (JIT, pools)
        batch_s, (_, ids) = _timed(lambda: self._search(index, q), self.sync)
        lat = []
        for r in range(min(single, q.shape[0])):
            s, _ = _timed(lambda r=r: self._search(index, q[r:r + 1]), self.sync)
            lat.append(s * 1000)
        return {"backend": self.name, "build_s": build_s, "batch_s": batch_s,
                "qps": q.shape[0] / batch_s, "single_p50_ms": statistics.median(lat),
                "ids": np.asarray(ids)}


def _faiss() -> tuple[Any, str]:
    try:
        import faiss
    except (ImportError, OSError, RuntimeError) as e:   # missing, or its CUDA libraries
        return None, f"faiss not importable: {type(e).__name__}: {str(e).splitlines()[0][:120]}"
    return faiss, ""


def backends(x: np.ndarray, k: int, nprobe: int) -> tuple[list[Backend], list[str]]:
    """Every backend this machine can run, and a line for each one it cannot."""
    from cache_store.recall_gate import _train, ivf_shape

    out, gpu, missing = [], [], []
    x32 = np.asarray(x, dtype=np.float32)
    dim = x.shape[1]
    nlist, n_train = ivf_shape(x.shape[0])
    train = x32[np.random.default_rng(0).choice(x.shape[0], size=n_train, replace=False)]
    faiss, why = _faiss()
    if faiss is None:
        missing += [f"faiss-cpu flat / ivf: {why}", f"faiss-gpu flat / ivf: {why}"]
    else:
        faiss.omp_set_num_threads(os.cpu_count() or 1)

        def cpu_flat():
            index = faiss.IndexFlatIP(dim)
            index.add(x32)
            return index

        def cpu_ivf():  # the index builder's own (the same seed and training sample)
            index = _train(faiss, x32)
            index.nprobe = nprobe
            return index

        def search(index, q):
            return index.search(q, k)

        out += [Backend("faiss-cpu flat", cpu_flat, search),
                Backend(f"faiss-cpu ivf{nlist} nprobe{nprobe}", cpu_ivf, search)]
        n_gpus = faiss.get_num_gpus() if hasattr(faiss, "StandardGpuResources") else 0
        if n_gpus == 0:
            missing.append("faiss-gpu flat / ivf: " + ("this FAISS build has no GPU support"
                           if not hasattr(faiss, "StandardGpuResources") else "FAISS sees no GPU"))
        else:
            res = faiss.StandardGpuResources()

            def gpu_flat():
                index = faiss.GpuIndexFlatIP(res, dim)
                index.add(x32)
                return index

            def gpu_ivf():
                index = faiss.GpuIndexIVFFlat(res, dim, nlist, faiss.METRIC_INNER_PRODUCT)
                index.train(train)
                index.add(x32)
                index.nprobe = nprobe
                return index

            gpu = [Backend("faiss-gpu flat", gpu_flat, search, counterpart="faiss-cpu flat"),
                   Backend(f"faiss-gpu ivf{nlist} nprobe{nprobe}", gpu_ivf, search,
                           counterpart=f"faiss-cpu ivf{nlist} nprobe{nprobe}")]
    # FAISS on GPU last: a CUDA error inside FAISS aborts the process, and rows already
    # printed are kept
    return out + _torch_backends(x, k, missing) + gpu, missing


def _torch_backends(x: np.ndarray, k: int, missing: list[str]) -> list[Backend]:
    try:
        import torch
    except ImportError:
        missing.append("torch top-k: torch not installed")
        return []
    from kernels.topk import DeviceTopK

    out = []

    out.append(Backend("torch cpu fp32", lambda: DeviceTopK(x, "cpu"), lambda i, q: i.search(q, k)))
    if torch.cuda.is_available():
        sync = torch.cuda.synchronize
        for dt in ("float32", "float16"):
            out.append(Backend(f"torch cuda {dt[:1]}p{dt[5:]}", lambda dt=dt: DeviceTopK(x, "cuda", dt),
                               lambda i, q: i.search(q, k), sync=sync, counterpart="torch cpu fp32"))
    else:
        missing.append("torch top-k cuda: torch sees no GPU")
    return out


def exact_topk(x: np.ndarray, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The exact top-k in float64 numpy, the reference every backend is scored against."""
    x64 = np.asarray(x, dtype=np.float64)
    s_all, i_all = [], []
    for j in range(0, q.shape[0], 64):
        s = np.asarray(q[j:j + 64], np.float64) @ x64.T
        i = np.argpartition(-s, k, axis=1)[:, :k]
        sk = np.take_along_axis(s, i, 1)
        order = np.lexsort((i, -sk), axis=-1)
        s_all.append(np.take_along_axis(sk, order, 1))
        i_all.append(np.take_along_axis(i, order, 1))
    return np.concatenate(s_all), np.concatenate(i_all)


def environment() -> dict[str, Any]:
    env: dict[str, Any] = {"cpus": os.cpu_count()}
    try:
        import torch

        env["torch"] = torch.__version__
        if torch.cuda.is_available():
            env["gpu"] = torch.cuda.get_device_name(0)
    except ImportError:
        pass
    faiss, _ = _faiss()
    if faiss is not None:
        env["faiss"] = faiss.__version__
        env["faiss_gpus"] = faiss.get_num_gpus() if hasattr(faiss, "get_num_gpus") else 0
    return env


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=250_000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--single", type=int, default=200, help="queries timed one at a time")
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--nprobe", type=int, default=16, help="IVF nprobe (the index's first rung)")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    a = ap.parse_args(argv)
    env = environment()
    print("environment: " + ", ".join(f"{k}={v}" for k, v in env.items()))
    x, q = synthetic(a.rows, a.dim, a.queries)
    print(f"SYNTHETIC matrix {a.rows:,} x {a.dim} float16, {a.queries:,} queries, top-{a.k}")
    exact_s, exact_i = exact_topk(x, q, a.k)
    found, missing = backends(x, a.k, a.nprobe)
    print(f"\n{'backend':<30} {'build s':>8} {'batch QPS':>11} {'1-query p50 ms':>15} "
          f"{'agree@k':>8}  vs CPU (build / QPS / p50)", flush=True)
    rows: list[dict[str, Any]] = []
    for b in found:
        try:
            r = b.run(q, a.k, a.single)
        except (RuntimeError, MemoryError, ValueError) as e:   # report it and go on
            missing.append(f"{b.name}: failed: {type(e).__name__}: {str(e).splitlines()[0][:160]}")
            continue
        r["agree_at_k"] = agreement(r.pop("ids"), exact_i, exact_s, x, q)
        r["counterpart"] = b.counterpart
        rows.append(r)
        print(_row_line(r, {d["backend"]: d for d in rows}), flush=True)
        if a.json:
            _write_json(a, env, rows, missing)
    for line in missing:
        print(f"not run: {line}")
    if a.json:
        _write_json(a, env, rows, missing)
    return 0


def _row_line(r: dict[str, Any], by_name: dict[str, dict[str, Any]]) -> str:
    base = by_name.get(r["counterpart"] or "")
    ratio = ""
    if base:
        r["vs_cpu"] = {"build": base["build_s"] / r["build_s"], "qps": r["qps"] / base["qps"],
                       "single_p50": base["single_p50_ms"] / r["single_p50_ms"]}
        ratio = "  {build:.1f}x / {qps:.1f}x / {single_p50:.1f}x".format(**r["vs_cpu"])
    return (f"{r['backend']:<30} {r['build_s']:>8.2f} {r['qps']:>11,.0f} "
            f"{r['single_p50_ms']:>15.3f} {r['agree_at_k']:>8.4f}{ratio}")


def _write_json(a: argparse.Namespace, env: dict[str, Any], rows: list[dict[str, Any]],
                missing: list[str]) -> None:
    with open(a.json, "w", encoding="utf-8") as fh:
        json.dump({"environment": env, "rows": a.rows, "dim": a.dim, "queries": a.queries,
                   "k": a.k, "results": rows, "not_run": missing}, fh, indent=1)


if __name__ == "__main__":
    raise SystemExit(main())
