"""Per-tool embedding index over the cached inputs (the params part of each key).

On disk, next to the store: `<store>.index/`
    meta.json         embedder name, dimension, the store's blob sha256, rows per tool
    <tool>.f16        float16 row-major matrix (rows = the tool's entries in import order),
                      memory-mapped and shared by every process
    <tool>.ivf        for tools above IVF_THRESHOLD rows: a trained FAISS IVF index (written
                      once, so every process retrieves the same neighbours)
Search: FAISS inner product over L2-normalised vectors (GPU when faiss-gpu and a GPU are
present, CPU otherwise); without FAISS, the exact torch kernel `kernels.topk`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from cache_store.keys import embedding_text, params_from_key
from cache_store.store import CacheStore

IVF_THRESHOLD = 50_000
IVF_NPROBE = 16


class IndexMeta(msgspec.Struct):
    embedder: str
    dim: int
    store_sha256: str
    rows: dict[str, int]


def index_dir(store_path: str | Path) -> Path:
    return Path(str(store_path) + ".index")


def _faiss() -> Any | None:
    try:
        import faiss
    except ImportError:
        return None
    return faiss


def train_ivf(vectors_path: str, n: int, dim: int, out_path: str) -> None:
    """Train and write an IVF index (run in a worker process: CPU heavy)."""
    faiss = _faiss()
    if faiss is None:
        return
    faiss.omp_set_num_threads(1)  # determinism over speed; a build runs once
    x = np.asarray(np.memmap(vectors_path, dtype=np.float16, mode="r", shape=(n, dim)),
                   dtype=np.float32)
    nlist = max(1, min(int(4 * np.sqrt(n)), n // 40))
    quant = faiss.IndexFlatIP(dim)
    ivf = faiss.IndexIVFFlat(quant, dim, nlist, faiss.METRIC_INNER_PRODUCT)
    ivf.cp.seed = 1234
    sample = x[np.random.default_rng(0).choice(n, size=min(n, nlist * 64), replace=False)]
    ivf.train(sample)
    ivf.add(x)
    faiss.write_index(ivf, out_path)


def write_vectors(path: Path, vectors: np.ndarray) -> None:
    np.ascontiguousarray(vectors, dtype=np.float16).tofile(path)


async def build_index(store_path: str | Path, embedder: Any, *, embedder_name: str,
                      batch: int = 256, progress: bool = True) -> IndexMeta:
    """Embed every tool's cached inputs and write the index directory (see module doc)."""
    import asyncio
    from concurrent.futures import ProcessPoolExecutor

    out = index_dir(store_path)
    out.mkdir(parents=True, exist_ok=True)
    rows: dict[str, int] = {}
    dim = 0
    with CacheStore(store_path) as store:
        total = store.header.n_entries
        done = 0
        sha = store.header.blob_sha256
        ivf_jobs: list[tuple[str, int]] = []
        for tool in store.tools:
            n = store.n_entries(tool)
            parts: list[np.ndarray] = []
            for start in range(0, n, batch):
                texts = [embedding_text(params_from_key(store.entry(tool, i)[0]))
                         for i in range(start, min(n, start + batch))]
                parts.append(np.asarray(await embedder.embed(texts), dtype=np.float32))
                done += len(texts)
                if progress:
                    _progress(done, total, tool)
            vecs = np.concatenate(parts) if parts else np.zeros((0, max(dim, 1)), np.float32)
            dim = vecs.shape[1]
            write_vectors(out / f"{tool}.f16", vecs)
            rows[tool] = n
            if n > IVF_THRESHOLD:
                ivf_jobs.append((tool, n))
    if ivf_jobs and _faiss() is not None:
        loop = asyncio.get_running_loop()
        with ProcessPoolExecutor(max_workers=1) as pool:
            for tool, n in ivf_jobs:
                await loop.run_in_executor(pool, train_ivf, str(out / f"{tool}.f16"), n, dim,
                                           str(out / f"{tool}.ivf"))
    meta = IndexMeta(embedder=embedder_name, dim=dim, store_sha256=sha, rows=rows)
    (out / "meta.json").write_bytes(msgspec.json.encode(meta))
    if progress:
        print(file=sys.stderr)
    return meta


def _progress(done: int, total: int, tool: str) -> None:
    width = 30
    filled = int(width * done / max(total, 1))
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {tool:<28}")
    sys.stderr.flush()


class ToolIndex:
    """Top-k search over one tool's vectors."""

    def __init__(self, vectors: np.ndarray, *, ivf_path: Path | None = None,
                 backend: str = "auto") -> None:
        self.vectors = vectors
        self.n = vectors.shape[0]
        self._faiss_index = None
        faiss = _faiss() if backend in ("auto", "faiss") else None
        if faiss is not None and self.n:
            if ivf_path is not None and ivf_path.exists():
                index = faiss.read_index(str(ivf_path))
                index.nprobe = IVF_NPROBE
            else:
                index = faiss.IndexFlatIP(vectors.shape[1])
                index.add(np.asarray(vectors, dtype=np.float32))
            if hasattr(faiss, "StandardGpuResources") and faiss.get_num_gpus() > 0:
                self._gpu_res = faiss.StandardGpuResources()
                index = faiss.index_cpu_to_gpu(self._gpu_res, 0, index)
            self._faiss_index = index
        self.backend = "faiss" if self._faiss_index is not None else "torch"

    def search(self, query: np.ndarray, k: int) -> list[int]:
        if self.n == 0 or k <= 0:
            return []
        q = np.asarray(query, dtype=np.float32).reshape(1, -1)
        q = q / max(float(np.linalg.norm(q)), 1e-12)
        if self._faiss_index is not None:
            _, ids = self._faiss_index.search(q, min(k, self.n))
            return [int(i) for i in ids[0] if i >= 0]
        from kernels.topk import topk_inner_product

        _, ids = topk_inner_product(self.vectors, q[0], k)
        return [int(i) for i in ids]


class EmbeddingIndex:
    """The index directory of one store; tools are loaded lazily on first search."""

    def __init__(self, store_path: str | Path, *, backend: str = "auto") -> None:
        self.dir = index_dir(store_path)
        meta_path = self.dir / "meta.json"
        if not meta_path.exists():
            raise FileNotFoundError(f"{meta_path}: no embedding index; run `agentsweep cache index`")
        self.meta = msgspec.json.decode(meta_path.read_bytes(), type=IndexMeta)
        self.backend = backend
        self._tools: dict[str, ToolIndex] = {}

    def tool(self, name: str) -> ToolIndex | None:
        if name not in self.meta.rows:
            return None
        if name not in self._tools:
            n = self.meta.rows[name]
            path = self.dir / f"{name}.f16"
            vecs = (np.memmap(path, dtype=np.float16, mode="r", shape=(n, self.meta.dim))
                    if n else np.zeros((0, self.meta.dim), np.float16))
            ivf = self.dir / f"{name}.ivf"
            self._tools[name] = ToolIndex(vecs, ivf_path=ivf if ivf.exists() else None,
                                          backend=self.backend)
        return self._tools[name]


def describe(store_path: str | Path) -> str:
    meta = json.loads((index_dir(store_path) / "meta.json").read_text())
    return f"{meta['embedder']} dim={meta['dim']} rows={sum(meta['rows'].values())}"
