"""Benchmark: memory-mapped cache store vs the reference's `json.load` dicts, side by side.

    python -m perf.cache_store [--entries 250000] [--workdir DIR] [--procs 8]
                               [--index-only | --skip-index] [--keep-index]

On a SYNTHETIC cache (cache_store.synth; clearly not real data) it reports: time to open,
memory of N processes sharing the store vs N processes each holding the dicts (PSS, which
splits shared pages fairly between the processes mapping them), exact-lookup latency p50/p99
with key normalisation included, and top-8 retrieval latency over a 250,000 x 384 float16
matrix on CPU (FAISS IVF, FAISS flat, torch kernel). Then the embedding index's large case
(`perf.cache_store_index`): a 250,000 x 4,096 float16 tool searched by 1, 4 and 8 processes,
per-process PSS and retrieval p50/p99, beside the design that held a float32 copy per process.
Ratios are printed; no targets asserted.
"""

from __future__ import annotations

import argparse
import gc
import json
import multiprocessing as mp
import os
import random
import statistics
import time
from pathlib import Path

import numpy as np

SCHEMAS = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "travelbench" / "tool_schemas.json"


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def load_dicts(src: Path) -> dict[str, dict[str, str]]:
    """The reference approach: every `<tool>_cache.json` into a dict."""
    out = {}
    for f in sorted(src.glob("*_cache.json")):
        with open(f, encoding="utf-8") as fh:
            out[f.name[: -len("_cache.json")]] = json.load(fh)
    return out


def _sample_calls(store, n: int, seed: int = 1) -> list[tuple[str, dict, str]]:
    from cache_store.keys import params_from_key

    rng = random.Random(seed)
    calls = []
    tools = store.tools
    weights = [store.n_entries(t) for t in tools]
    for tool in rng.choices(tools, weights, k=n):
        key, _ = store.entry(tool, rng.randrange(store.n_entries(tool)))
        time_ = json.loads(key)[1][1]
        calls.append((tool, json.loads(params_from_key(key)), time_))
    return calls


def _worker(kind: str, path: str, calls: list, ready, go) -> None:
    from cache_store.keys import normalize_call

    if kind == "store":
        from cache_store.store import CacheStore

        store = CacheStore(path)
        for tool, args, t in calls:
            assert store.get(tool, normalize_call(args, t)) is not None
    else:
        dicts = load_dicts(Path(path))
        for tool, args, t in calls:
            assert dicts[tool][normalize_call(args, t)]
    gc.collect()
    ready.put(os.getpid())
    go.wait()


def measure_memory(kind: str, path: str, calls: list, procs: int, concurrent: int) -> float:
    """Sum of PSS (MiB) over `procs` workers, run `concurrent` at a time."""
    import psutil

    ctx = mp.get_context("spawn")
    total = 0.0
    for start in range(0, procs, concurrent):
        ready, go = ctx.Queue(), ctx.Event()
        ps = [ctx.Process(target=_worker, args=(kind, path, calls, ready, go))
              for _ in range(min(concurrent, procs - start))]
        for p in ps:
            p.start()
        for _ in ps:
            ready.get(timeout=1800)
        total += sum(psutil.Process(p.pid).memory_full_info().pss for p in ps) / 2**20
        go.set()
        for p in ps:
            p.join()
    return total


class _FlatCopy:
    """Exact search as the index did it before searching the mapped file in place: FAISS
    IndexFlatIP over a float32 copy in this process."""

    def __init__(self, vecs: np.ndarray) -> None:
        import faiss

        self.index = faiss.IndexFlatIP(vecs.shape[1])
        for start in range(0, vecs.shape[0], 65536):
            self.index.add(np.asarray(vecs[start:start + 65536], dtype=np.float32))

    def search(self, q: np.ndarray, k: int) -> list[int]:
        q = np.asarray(q, dtype=np.float32).reshape(1, -1)
        q = q / max(float(np.linalg.norm(q)), 1e-12)
        return [int(i) for i in self.index.search(q, k)[1][0]]


def bench_retrieval(workdir: Path, n: int = 250_000, dim: int = 384, queries: int = 200) -> dict:
    from cache_store.index import MIN_RECALL, RECALL_SAMPLE, ToolIndex, gate_tool

    rng = np.random.default_rng(0)
    path = workdir / f"retr_{n}x{dim}.f16"
    if not path.exists():
        # clustered vectors (like real embeddings), L2-normalised, float16
        centers = rng.standard_normal((512, dim)).astype(np.float32)
        x = centers[rng.integers(0, 512, n)] + 0.5 * rng.standard_normal((n, dim)).astype(np.float32)
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        x.astype(np.float16).tofile(path)
    vecs = np.memmap(path, dtype=np.float16, mode="r", shape=(n, dim))
    ivf_path = workdir / f"retr_{n}x{dim}.ivf"
    ivf_path.unlink(missing_ok=True)
    gate = gate_tool(str(path), n, dim, str(ivf_path), min_recall=MIN_RECALL,
                     sample=RECALL_SAMPLE)
    if gate.search != "approximate":  # time IVF anyway, at the best nprobe the gate tried
        gate_tool(str(path), n, dim, str(ivf_path), min_recall=0.0, sample=RECALL_SAMPLE,
                  nprobes=[gate.nprobe])
    qs = np.asarray(vecs[rng.integers(0, n, queries)], dtype=np.float32)
    qs += 0.05 * rng.standard_normal(qs.shape).astype(np.float32)
    res = {}
    exact_ids = []
    for name, idx, nq in (("faiss_flat", ToolIndex(vecs, backend="faiss"), 30),
                          ("faiss_flat_copy", _FlatCopy(vecs), 30),
                          ("faiss_ivf", ToolIndex(vecs, ivf_path=ivf_path, backend="faiss",
                                                  nprobe=gate.nprobe), queries),
                          ("torch", ToolIndex(vecs, backend="torch"), 10)):
        idx.search(qs[-1], 8)  # warm-up: lazy imports, first-touch of pages
        lat = []
        for i in range(nq):
            t0 = time.perf_counter()
            ids = idx.search(qs[i], 8)
            lat.append(time.perf_counter() - t0)
            if name == "faiss_flat":
                exact_ids.append(ids)
            elif name == "faiss_flat_copy":
                res["flat_same"] = res.get("flat_same", 0) + (ids == exact_ids[i])
            elif name == "faiss_ivf" and i < len(exact_ids):
                res.setdefault("ivf_hits", 0)
                res["ivf_hits"] += len(set(ids) & set(exact_ids[i]))
        res[name] = (_pct(lat, 0.5) * 1e3, _pct(lat, 0.99) * 1e3)
        del idx
    res["ivf_recall_at_8"] = res.pop("ivf_hits", 0) / (8 * len(exact_ids))
    res["nprobe"] = gate.nprobe
    res["gate"] = gate
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entries", type=int, default=250_000)
    ap.add_argument("--procs", type=int, default=8)
    ap.add_argument("--dict-concurrency", type=int, default=2,
                    help="dict workers alive at once (their memory is private; bounds peak RAM)")
    ap.add_argument("--lookups", type=int, default=20_000)
    ap.add_argument("--retrieval-rows", type=int, default=250_000)
    ap.add_argument("--workdir", default=os.environ.get("AGENTSWEEP_PERF_DIR", "/tmp/agentsweep-perf"))
    ap.add_argument("--index-rows", type=int, default=250_000)
    ap.add_argument("--index-dim", type=int, default=4096)
    ap.add_argument("--index-procs", default="1,4,8")
    ap.add_argument("--old-procs", default="1,2",
                    help="processes of the float32-copy design (4 GB each at 250k x 4096)")
    which = ap.add_mutually_exclusive_group()
    which.add_argument("--index-only", action="store_true", help="only the large index case")
    which.add_argument("--skip-index", action="store_true", help="no large index case")
    ap.add_argument("--keep-index", action="store_true",
                    help="keep the large case's matrix and IVF (about 6 GB) in the workdir")
    args = ap.parse_args(argv)
    if not args.index_only:
        bench_store(args)
    if not args.skip_index:
        from perf.cache_store_index import run

        print(f"\nembedding index, {args.index_rows} x {args.index_dim} (perf.cache_store_index):")
        run(Path(args.workdir), rows=args.index_rows, dim=args.index_dim,
            procs=tuple(int(x) for x in args.index_procs.split(",")),
            old_procs=tuple(int(x) for x in args.old_procs.split(",")), keep=args.keep_index)
    return 0


def bench_store(args: argparse.Namespace) -> None:

    from cache_store.importer import import_cache
    from cache_store.keys import normalize_call
    from cache_store.store import CacheStore
    from cache_store.synth import generate

    work = Path(args.workdir)
    src = work / f"synthetic_{args.entries}"
    store_path = work / f"synthetic_{args.entries}.store"
    if not (src / "SYNTHETIC").exists():
        t0 = time.perf_counter()
        generate(src, json.loads(SCHEMAS.read_text(encoding="utf-8")), args.entries)
        print(f"generated SYNTHETIC cache: {time.perf_counter() - t0:.1f}s")
    src_mb = sum(f.stat().st_size for f in src.glob("*.json")) / 2**20
    t0 = time.perf_counter()
    header = import_cache(src, store_path)
    print(f"import (or up-to-date check): {time.perf_counter() - t0:.2f}s, "
          f"{header.n_entries} entries, JSON {src_mb:.0f} MiB, "
          f"store {store_path.stat().st_size / 2**20:.0f} MiB, synthetic={header.synthetic}")

    opens = []
    for _ in range(20):
        t0 = time.perf_counter()
        s = CacheStore(store_path)
        opens.append(time.perf_counter() - t0)
        s.close()
    t_open = statistics.median(opens)
    t0 = time.perf_counter()
    dicts = load_dicts(src)
    t_json = time.perf_counter() - t0

    store = CacheStore(store_path)
    calls = _sample_calls(store, args.lookups)
    lat_store, lat_dict = [], []
    pc = time.perf_counter_ns
    for tool, a, t in calls:
        t0 = pc()
        v = store.get(tool, normalize_call(a, t))
        lat_store.append(pc() - t0)
        t0 = pc()
        w = dicts[tool][normalize_call(a, t)]
        lat_dict.append(pc() - t0)
        assert v == w
    del dicts, v, w
    gc.collect()
    print(f"open: store {t_open * 1e3:.2f} ms vs json.load {t_json:.2f} s -> {t_json / t_open:.0f}x faster")
    print(f"lookup (normalise + get, us): store p50 {_pct(lat_store, .5) / 1e3:.2f} "
          f"p99 {_pct(lat_store, .99) / 1e3:.2f} | dict p50 {_pct(lat_dict, .5) / 1e3:.2f} "
          f"p99 {_pct(lat_dict, .99) / 1e3:.2f}")

    mem_calls = calls[:2000]
    m_store = measure_memory("store", str(store_path), mem_calls, args.procs, args.procs)
    m_dict = measure_memory("dict", str(src), mem_calls, args.procs, args.dict_concurrency)
    print(f"memory of {args.procs} processes (PSS sum): store {m_store:.0f} MiB vs dicts "
          f"{m_dict:.0f} MiB -> {m_dict / m_store:.1f}x smaller")

    r = bench_retrieval(work, args.retrieval_rows)
    print(f"top-8 retrieval over {args.retrieval_rows} x 384 float16 (CPU), p50/p99 ms: "
          f"faiss IVF (nprobe {r['nprobe']}) {r['faiss_ivf'][0]:.2f}/{r['faiss_ivf'][1]:.2f} "
          f"recall@8 {r['ivf_recall_at_8']:.2f} (noisy queries; gate on the store's own rows: "
          f"{r['gate'].recall_at_k:.3f} -> {r['gate'].search}) | faiss flat on the mapped file "
          f"{r['faiss_flat'][0]:.1f}/{r['faiss_flat'][1]:.1f} (float32 copy, before: "
          f"{r['faiss_flat_copy'][0]:.1f}/{r['faiss_flat_copy'][1]:.1f}; same top-8 on "
          f"{r['flat_same']}/30) | torch kernel {r['torch'][0]:.1f}/{r['torch'][1]:.1f}")


if __name__ == "__main__":
    raise SystemExit(main())
