"""perf.cache_store's large case: one copy of the embedding index per node, side by side with
the design it replaced, on a SYNTHETIC 250,000 x 4,096 float16 matrix (the `paper` embedder's
width; about the rows of a TravelBench-sized cache, as one tool).

    python -m perf.cache_store_index [--rows 250000] [--dim 4096] [--procs 1,4,8]
                                     [--old-procs 1,2] [--train-per-list 16]
                                     [--workdir DIR] [--keep]

The IVF index has the shape an index build gives this tool (`recall_gate.ivf_shape`: nlist
2,000 at 250k rows; nprobe 16, the gate's first rung) but is trained on a --train-per-list sample
(default 16 per list; the build trains on 64, a 45-minute k-means on a 2-core machine): this
case measures search, and prints each design's agreement with exact search. Then, for 1, 4
and 8 processes at once, each process opens the tool the way a sandbox does and searches it,
and the PSS of every process is read (PSS splits a page shared by k processes k ways, so the
sum over processes counts a shared page once):

    mapped  this design: `cache_store.index.ToolIndex` (IVF lists memory-mapped; exact search
            scanning the mapped float16 file in place)
    copy    the design before it, rebuilt here: the IVF index read into memory
            (`faiss.read_index`), exact search on an IndexFlatIP holding a float32 copy

for both search modes (approximate: the IVF, the path of a miss on a large tool the gate kept;
exact: the same tool as if the gate had refused IVF). The copy design holds 4 GB per process
at 4,096 dimensions, so it runs at --old-procs (default 1 and 2) and its 4- and 8-process
figures are extrapolated from the measured per-process increment (printed as such). "each extra"
is (PSS sum at N - PSS sum at 1) / (N - 1). Retrieval p50/p99 (top-8, one query at a time)
come from the 1-process run, over two passes of the same queries: the first touches pages the
process has not mapped yet (the mapped design faults them in; the copy design paid for all of
them when it opened), the second is warm. The N-process lines (all searching at once) also
measure contention where N exceeds the cores. Every design's neighbours are compared with
exact search and with each other. The matrix and IVF
(about 6 GB for 250k x 4096) are deleted at the end unless --keep. No targets are asserted.
"""

from __future__ import annotations

import argparse
import gc
import multiprocessing as mp
import os
import time
from pathlib import Path

import numpy as np

K = 8


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def make_matrix(path: Path, n: int, dim: int, seed: int = 0) -> None:
    """Clustered (like real embeddings), L2-normalised float16 rows, written a block at a
    time (no whole float32 copy)."""
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((512, dim)).astype(np.float32)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        for start in range(0, n, 8192):
            m = min(8192, n - start)
            x = centers[rng.integers(0, 512, m)]
            x += 0.5 * rng.standard_normal((m, dim), dtype=np.float32)
            x /= np.linalg.norm(x, axis=1, keepdims=True)
            f.write(x.astype(np.float16).tobytes())
    os.replace(tmp, path)


def build_ivf(vec_path: Path, ivf_path: Path, n: int, dim: int, train_rows: int) -> int:
    """Write an IVF-Flat index of the build's shape (nlist), trained on `train_rows` rows and
    filled a block at a time; returns nlist."""
    import faiss

    from cache_store.recall_gate import float32_blocks, ivf_shape

    nlist, _ = ivf_shape(n)
    vecs = np.memmap(vec_path, dtype=np.float16, mode="r", shape=(n, dim))
    ivf = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, nlist, faiss.METRIC_INNER_PRODUCT)
    ivf.cp.seed = 1234
    rows = np.sort(np.random.default_rng(0).choice(n, size=min(n, max(train_rows, nlist)),
                                                   replace=False))
    ivf.train(np.asarray(vecs[rows], dtype=np.float32))
    for _, block in float32_blocks(vecs):
        ivf.add(block)
    faiss.write_index(ivf, str(ivf_path))
    return nlist


def make_queries(vecs: np.ndarray, count: int, seed: int = 1) -> np.ndarray:
    """Rows of the matrix plus noise (a miss: near cached calls, equal to none)."""
    rng = np.random.default_rng(seed)
    q = np.asarray(vecs[np.sort(rng.integers(0, vecs.shape[0], count))], dtype=np.float32)
    q += 0.05 * rng.standard_normal(q.shape, dtype=np.float32)
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def _open(design: str, mode: str, vec_path: str, ivf_path: str, n: int, dim: int,
          nprobe: int):
    """A search function (query -> ids) the way `design` opens one tool for `mode`."""
    if design == "mapped":
        from cache_store.index import ToolIndex

        vecs = np.memmap(vec_path, dtype=np.float16, mode="r", shape=(n, dim))
        ti = ToolIndex(vecs, ivf_path=Path(ivf_path) if mode == "approximate" else None,
                       backend="faiss", nprobe=nprobe, vectors_path=vec_path)
        assert ti.backend == "faiss" and ti.search_mode == mode
        return lambda q: ti.search(q, K)
    import faiss

    if mode == "approximate":
        index = faiss.read_index(ivf_path)
        index.nprobe = nprobe
    else:
        index = faiss.IndexFlatIP(dim)
        vecs = np.memmap(vec_path, dtype=np.float16, mode="r", shape=(n, dim))
        for start in range(0, n, 8192):
            index.add(np.asarray(vecs[start:start + 8192], dtype=np.float32))
        del vecs
    return lambda q: [int(i) for i in index.search(q.reshape(1, -1), K)[1][0] if i >= 0]


def _worker(design: str, mode: str, vec_path: str, ivf_path: str, n: int, dim: int,
            nprobe: int, queries: np.ndarray, ready, go) -> None:
    import faiss

    import cache_store.index  # noqa: F401  (imported before the clock starts, in every design)

    faiss.omp_set_num_threads(1)     # one query at a time, as the sandbox searches
    out: dict = {"pid": os.getpid()}
    if design != "bare":
        t0 = time.perf_counter()
        search = _open(design, mode, vec_path, ivf_path, n, dim, nprobe)
        out["open_s"] = time.perf_counter() - t0
        search(queries[-1])          # warm-up: lazy imports
        lat: list[list[float]] = [[], []]
        cpu: list[float] = []
        ids = []
        for rep in (0, 1):           # first pass: pages this process has not touched yet
            for q in queries:
                c0, t0 = time.thread_time(), time.perf_counter()
                got = search(q)
                lat[rep].append(time.perf_counter() - t0)
                if rep == 0:
                    ids.append(got)
                else:
                    cpu.append(time.thread_time() - c0)
        out.update(lat=lat[0], warm_lat=lat[1], warm_cpu=cpu, ids=ids)
    gc.collect()
    ready.put(out)
    go.wait(3600)


def measure(design: str, mode: str, procs: int, args: tuple) -> dict:
    """Run `procs` workers at once; their reports and PSS (MiB) while all hold the index."""
    import psutil

    ctx = mp.get_context("spawn")
    ready, go = ctx.Queue(), ctx.Event()
    ps = [ctx.Process(target=_worker, args=(design, mode, *args, ready, go))
          for _ in range(procs)]
    for p in ps:
        p.start()
    try:
        reports = [ready.get(timeout=3600) for _ in ps]
        pss = [psutil.Process(r["pid"]).memory_full_info().pss / 2**20 for r in reports]
    finally:
        go.set()
        for p in ps:
            p.join(120)
    return {"pss": pss, "reports": reports}


def _same(ids: list[list[int]], ref: np.ndarray) -> int:
    return sum(a == [int(i) for i in r if i >= 0] for a, r in zip(ids, ref))


def run(workdir: Path, *, rows: int = 250_000, dim: int = 4096, procs: tuple[int, ...] = (1, 4, 8),
        old_procs: tuple[int, ...] = (1, 2), exact_queries: int = 5, ivf_queries: int = 200,
        train_per_list: int = 16, keep: bool = False) -> dict:
    import faiss

    from cache_store.recall_gate import IVF_NPROBE, exact_knn, ivf_shape

    workdir.mkdir(parents=True, exist_ok=True)
    vec_path = workdir / f"index_{rows}x{dim}.f16"
    ivf_path = workdir / f"index_{rows}x{dim}.ivf"
    try:
        if not vec_path.exists():
            t0 = time.perf_counter()
            make_matrix(vec_path, rows, dim)
            print(f"generated SYNTHETIC {rows} x {dim} float16 matrix: "
                  f"{time.perf_counter() - t0:.0f}s")
        if not ivf_path.exists():
            t0 = time.perf_counter()
            nlist, _ = ivf_shape(rows)
            train = train_per_list * nlist
            build_ivf(vec_path, ivf_path, rows, dim, train)
            print(f"IVF nlist {nlist} trained on {train:,} rows and filled: "
                  f"{time.perf_counter() - t0:.0f}s")
        vecs = np.memmap(vec_path, dtype=np.float16, mode="r", shape=(rows, dim))
        queries = make_queries(vecs, ivf_queries)
        t0 = time.perf_counter()
        _, exact_ids = exact_knn(faiss, queries, vecs, K)
        print(f"exact reference top-8 of {ivf_queries} queries: {time.perf_counter() - t0:.0f}s")
        del vecs
        result = {"rows": rows, "dim": dim, "nprobe": IVF_NPROBE, "runs": {},
                  "load": [os.getloadavg()[0]]}
        common = (str(vec_path), str(ivf_path), rows, dim, IVF_NPROBE)
        result["bare"] = measure("bare", "", 1, (*common, queries[:1]))["pss"][0]
        for mode, nq in (("approximate", ivf_queries), ("exact", exact_queries)):
            for design, counts in (("copy", old_procs), ("mapped", procs)):
                for count in counts:
                    gc.collect()
                    r = measure(design, mode, count, (*common, queries[:nq]))
                    result["runs"][(design, mode, count)] = r
                    lat = [x for rep in r["reports"] for x in rep["warm_lat"]]
                    same = sum(_same(rep["ids"], exact_ids) for rep in r["reports"])
                    print(f"  {design:6} {mode:11} {count} proc: PSS sum {sum(r['pss']):8.0f} MiB, "
                          f"second pass, all at once: p50 {_pct(lat, .5) * 1e3:7.2f} ms, p99 {_pct(lat, .99) * 1e3:7.2f} ms, "
                          f"top-8 = exact on {same}/{len(lat)} queries", flush=True)
        result["load"].append(os.getloadavg()[0])
        result["same"] = {}     # every mapped process's answers vs the copy design's
        for mode in ("approximate", "exact"):
            ref = result["runs"][("copy", mode, old_procs[0])]["reports"][0]["ids"]
            got = [rep["ids"] for c in procs for rep in result["runs"][("mapped", mode, c)]["reports"]]
            result["same"][mode] = (sum(a == b for ids in got for a, b in zip(ids, ref)),
                                    sum(len(ids) for ids in got))
        report(result)
        return result
    finally:
        if not keep:
            for p in (vec_path, ivf_path):
                p.unlink(missing_ok=True)


def _row(result: dict, design: str, mode: str, counts: tuple[int, ...], measured: set[int]) -> str:
    runs = result["runs"]
    sums = {c: sum(runs[(design, mode, c)]["pss"]) for c in measured}
    lo, hi = min(measured), max(measured)
    # the increment between the measured counts; from one count only: each process its own
    extra = (sums[hi] - sums[lo]) / (hi - lo) if hi > lo else sums[lo] / lo
    cells = []
    for c in counts:
        if c in sums:
            cells.append(f"{sums[c]:,.0f}")
        else:
            cells.append(f"~{sums[lo] + extra * (c - lo):,.0f} (extrapolated)")
    one = runs[(design, mode, lo)]["reports"][0]
    lat, warm = one["lat"], one["warm_lat"]
    return (f"| {design} | {mode} | {' / '.join(cells)} | {extra:,.0f} | "
            f"{_pct(lat, .5) * 1e3:.2f} / {_pct(lat, .99) * 1e3:.2f} | "
            f"{_pct(warm, .5) * 1e3:.2f} / {_pct(warm, .99) * 1e3:.2f} | "
            f"{_pct(one['warm_cpu'], .5) * 1e3:.2f} | {one['open_s'] * 1e3:,.0f} |")


def report(result: dict) -> None:
    runs = result["runs"]
    counts = tuple(sorted({c for (d, _m, c) in runs if d == "mapped"}))
    print(f"\nembedding index, SYNTHETIC {result['rows']:,} x {result['dim']:,} float16, one tool, "
          f"IVF nprobe {result['nprobe']}; bare worker (numpy + faiss + cache_store imported): {result['bare']:.0f} MiB PSS")
    print(f"| design | search | PSS sum at {' / '.join(map(str, counts))} processes (MiB) | "
          "each extra process (MiB) | p50 / p99 ms, first pass | p50 / p99 ms, second pass | "
          "CPU ms per query, p50 | open ms |")
    print("|---|---|---|---|---|---|---|---|")
    for mode in ("approximate", "exact"):
        for design in ("copy", "mapped"):
            measured = {c for (d, m, c) in runs if d == design and m == mode}
            print(_row(result, design, mode, counts, measured))
    print("p50 / p99: one process alone, top-8, one query at a time; first pass = pages this "
          "process had not touched yet (a mapped design faults them in), second = the same "
          "queries again; CPU ms: the searching thread's CPU time (about what a query takes on "
          f"an idle core). Load average {result['load'][0]:.1f} before, {result['load'][1]:.1f} "
          f"after ({os.cpu_count()} CPUs).")
    for mode, (same, total) in result["same"].items():
        print(f"{mode}: mapped and copy return the same top-8 (ids, order) on {same}/{total} "
              "queries")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=250_000)
    ap.add_argument("--dim", type=int, default=4096)
    ap.add_argument("--procs", default="1,4,8", help="process counts for this design")
    ap.add_argument("--old-procs", default="1,2",
                    help="process counts for the float32-copy design (4 GB each at 250k x 4096)")
    ap.add_argument("--exact-queries", type=int, default=5)
    ap.add_argument("--train-per-list", type=int, default=16,
                    help="IVF training rows per list (an index build uses 64)")
    ap.add_argument("--ivf-queries", type=int, default=200)
    ap.add_argument("--workdir", default=os.environ.get("AGENTSWEEP_PERF_DIR",
                                                        "/tmp/agentsweep-perf"))
    ap.add_argument("--keep", action="store_true", help="keep the matrix and IVF files")
    a = ap.parse_args(argv)
    run(Path(a.workdir), rows=a.rows, dim=a.dim,
        procs=tuple(int(x) for x in a.procs.split(",")),
        old_procs=tuple(int(x) for x in a.old_procs.split(",")),
        exact_queries=a.exact_queries, ivf_queries=a.ivf_queries,
        train_per_list=a.train_per_list, keep=a.keep)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
