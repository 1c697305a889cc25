"""Per-tool embedding index over the cached inputs (the params part of each key).

On disk, next to the store: `<store>.index/`
    meta.json         format version, embedder (spec and model name), dimension, embedding-text
                      format, the store's blob sha256, and per tool: rows, the search mode
                      chosen at build time and the measured recall (see "Recall gate")
    <tool>.f16        float16 row-major matrix (rows = the tool's entries in import order),
                      memory-mapped and shared by every process
    <tool>.ivf        only for tools searched approximately: a trained FAISS IVF index (written
                      once, so every process retrieves the same neighbours)

Embedding text: `keys.embedding_text` (the reference's `key: value` pairs joined by " | ",
values as Python str()), recorded as TEXT_FORMAT; an index built with another rendering is
refused. Query and index must come from the same embedder (model name and dimension are
checked: `EmbeddingIndex.check_embedder`).

Recall gate: a tool with more than `ivf_threshold` rows gets an IVF index only if its recall@8
against exact search, measured on a seeded sample of the tool's own vectors used as queries
(each query's own row left out), is at least `min_recall` (default 0.99). nprobe is raised along
a ladder first (while it probes at most 1/8 of the lists); if no step reaches the threshold the
tool is searched exactly. Ties count as hits: an approximate neighbour whose true score equals
the exact k-th score is as good as the one exact search happened to pick.

Search: inner product over L2-normalised vectors, with one copy of each tool's vectors per
node however many processes search it: every process memory-maps the same files read-only and
holds no float32 copy. Exact: FAISS scans `<tool>.f16` in place (`kernels.mapped`; float32
accumulation, the neighbours of a flat float32 search); approximate: the IVF index read with
its inverted lists mapped from `<tool>.ivf`. Without FAISS (or with one older than 1.11 for
exact search), the torch kernel `kernels.topk` streams the mapped matrix. On CPU: no
per-process GPU copy is made (docs/cache_store.md, "One copy per node").
Opening a tool and a search that reads much run off the event loop (`EmbeddingIndex.search`).
"""

from __future__ import annotations

import asyncio
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from cache_store.keys import embedding_text, params_from_key
from cache_store.recall_gate import (
    IVF_NPROBE,
    MAX_PROBE_FRACTION,
    MIN_RECALL,
    RECALL_K,
    RECALL_SAMPLE,
    ToolSearch,
    _faiss,
    _gate_job,
    gate_tool,
    nprobe_ladder,
    recall_at_k,
    summary_lines,
    train_ivf,
)
from cache_store.store import CacheStore
from kernels.mapped import MappedFlatIP, MappedUnsupported, mapped_flat_supported

__all__ = ["IVF_NPROBE", "MAX_PROBE_FRACTION", "MIN_RECALL", "RECALL_K", "RECALL_SAMPLE", "EmbeddingIndex",
           "IndexMeta", "IndexMismatch", "ToolIndex", "ToolSearch", "build_index", "gate_tool",
           "nprobe_ladder", "recall_at_k", "summary_lines", "train_ivf"]

INDEX_FORMAT = 2            # 2: per-tool search mode and recall (1 had neither: rebuild)
TEXT_FORMAT = "kv-pipe-pystr-1"  # keys.embedding_text: "k: str(v)" joined by " | ", sorted keys
IVF_THRESHOLD = 50_000      # tools with more rows are candidates for approximate search
OFF_LOOP_ELEMENTS = 1 << 20  # exact searches over more matrix entries (rows x dim) leave the loop
class IndexMismatch(ValueError):
    """The index cannot be used as asked (format, store or embedder mismatch): rebuild it."""


class IndexMeta(msgspec.Struct):
    format: int
    embedder: str          # the spec it was built with (make_embedder); default query embedder
    embedder_model: str    # the model name the embedder reported (what queries must match)
    dim: int
    text_format: str
    store_sha256: str
    min_recall: float
    recall_k: int
    tools: dict[str, ToolSearch]

    @property
    def rows(self) -> dict[str, int]:
        return {name: t.rows for name, t in self.tools.items()}


def index_dir(store_path: str | Path) -> Path:
    return Path(str(store_path) + ".index")


def write_vectors(path: Path, vectors: np.ndarray, *, append: bool = False) -> None:
    with open(path, "ab" if append else "wb") as f:
        f.write(np.ascontiguousarray(vectors, dtype=np.float16).tobytes())


async def build_index(store_path: str | Path, embedder: Any, *, embedder_name: str,
                      batch: int = 256, progress: bool = True, min_recall: float = MIN_RECALL,
                      recall_sample: int = RECALL_SAMPLE, ivf_threshold: int = IVF_THRESHOLD,
                      nprobes: list[int] | None = None, seed: int = 0) -> IndexMeta:
    """Embed every tool's cached inputs and write the index directory (see module doc).

    `embedder_name` is the spec recorded for rebuilding the query embedder; the model name is
    taken from `embedder.name` when it has one. Tools above `ivf_threshold` rows go through the
    recall gate (`gate_tool`) with `min_recall`, `recall_sample`, `nprobes` (default: ladder).
    """
    from concurrent.futures import ProcessPoolExecutor

    if not 0.0 < min_recall <= 1.0:
        raise ValueError(f"min_recall must be in (0, 1], got {min_recall}")
    out = index_dir(store_path)
    out.mkdir(parents=True, exist_ok=True)
    (out / "meta.json").unlink(missing_ok=True)  # a half-built index is never mistaken for one
    tools: dict[str, ToolSearch] = {}
    dim = 0
    with CacheStore(store_path) as store:
        total = store.header.n_entries
        done = 0
        sha = store.header.blob_sha256
        for tool in store.tools:
            n = store.n_entries(tool)
            # float16 rows go to the file as they arrive: no float32 copy of the tool is held
            vec_path = out / f"{tool}.f16"
            vec_path.write_bytes(b"")
            for start in range(0, n, batch):
                texts = [embedding_text(params_from_key(store.entry(tool, i)[0]))
                         for i in range(start, min(n, start + batch))]
                part = np.asarray(await embedder.embed(texts), dtype=np.float32)
                if dim and part.shape[1] != dim:
                    raise ValueError(f"embedder returned dimension {part.shape[1]} for {tool}, "
                                     f"{dim} before")
                dim = part.shape[1]
                write_vectors(vec_path, part, append=True)
                done += len(texts)
                if progress:
                    _progress(done, total, tool)
            (out / f"{tool}.ivf").unlink(missing_ok=True)
            tools[tool] = ToolSearch(rows=n)
    if progress:
        print(file=sys.stderr)
    gated = [t for t, ts in tools.items() if ts.rows > ivf_threshold]
    if gated and _faiss() is None:
        for t in gated:
            tools[t] = ToolSearch(rows=tools[t].rows, reason="no-faiss")
    elif gated:
        import multiprocessing as mp

        loop = asyncio.get_running_loop()
        # spawn, not fork: a forked child of a process that already ran FAISS/OpenMP or holds
        # threads (aiohttp, the embedder's executor) can deadlock
        with ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn")) as pool:
            for t in gated:
                if progress:
                    sys.stderr.write(f"recall gate: {t} ({tools[t].rows} rows)...\n")
                tools[t] = await loop.run_in_executor(
                    pool, _gate_job, str(out / f"{t}.f16"), tools[t].rows, dim,
                    str(out / f"{t}.ivf"), min_recall, recall_sample, nprobes, seed)
    model = getattr(embedder, "name", "") or embedder_name
    meta = IndexMeta(format=INDEX_FORMAT, embedder=embedder_name, embedder_model=model, dim=dim,
                     text_format=TEXT_FORMAT, store_sha256=sha, min_recall=min_recall,
                     recall_k=RECALL_K, tools=tools)
    tmp = out / "meta.json.tmp"
    tmp.write_bytes(msgspec.json.format(msgspec.json.encode(meta)))
    os.replace(tmp, out / "meta.json")
    return meta


def _progress(done: int, total: int, tool: str) -> None:
    width = 30
    filled = int(width * done / max(total, 1))
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {tool:<28}")
    sys.stderr.flush()


class ToolIndex:
    """Top-k search over one tool's vectors, with no per-process copy of them: IVF at `nprobe`
    when `ivf_path` is given (the gate chose approximate search), its inverted lists
    memory-mapped from the file; else exact, FAISS scanning the float16 matrix file in place
    (`kernels.mapped.MappedFlatIP`) or, without a FAISS that can, the torch kernel streaming
    the memory-mapped matrix (`kernels.topk`). Every process searching a tool maps the same
    file pages, so a node holds one copy of each tool's vectors (docs/cache_store.md)."""

    def __init__(self, vectors: np.ndarray, *, ivf_path: Path | None = None,
                 backend: str = "auto", nprobe: int = IVF_NPROBE,
                 vectors_path: str | Path | None = None) -> None:
        self.vectors = vectors
        self.n = vectors.shape[0]
        self.dim = vectors.shape[1]
        self._faiss_index: Any = None
        self.search_mode = "exact"
        faiss = _faiss() if backend in ("auto", "faiss") else None
        if faiss is not None and self.n:
            if ivf_path is not None and ivf_path.exists():
                self._faiss_index = read_ivf_mapped(faiss, ivf_path)
                self._faiss_index.nprobe = nprobe
                self.search_mode = "approximate"
            else:
                path = vectors_path or _matrix_file(vectors)
                if path is not None and mapped_flat_supported():
                    try:
                        self._faiss_index = MappedFlatIP(path, self.n, self.dim)
                    except MappedUnsupported:   # FAISS copied after all: stream with torch
                        self._faiss_index = None
        self.backend = "faiss" if self._faiss_index is not None else "torch"

    @property
    def heavy(self) -> bool:
        """Whether a search reads enough to be run off the event loop (`EmbeddingIndex.search`)."""
        return self.search_mode == "approximate" or self.n * self.dim > OFF_LOOP_ELEMENTS

    def search(self, query: np.ndarray, k: int) -> list[int]:
        if self.n == 0 or k <= 0:
            return []
        q = np.asarray(query, dtype=np.float32).reshape(1, -1)
        if q.shape[1] != self.dim:
            raise IndexMismatch(f"query vector has dimension {q.shape[1]}, the index {self.dim}: "
                                "the query embedder is not the one the index was built with")
        q = q / max(float(np.linalg.norm(q)), 1e-12)
        if self._faiss_index is not None:
            _, ids = self._faiss_index.search(q, min(k, self.n))
            return [int(i) for i in ids[0] if i >= 0]
        from kernels.topk import topk_inner_product

        _, ids = topk_inner_product(self.vectors, q[0], k)
        return [int(i) for i in ids]


def read_ivf_mapped(faiss: Any, path: str | Path) -> Any:
    """A written IVF index with its inverted lists (and, where FAISS can, its coarse
    quantizer) memory-mapped read-only from the file instead of read into memory: the same
    index, searched by the same code, sharing the file's pages with every other process."""
    flags = getattr(faiss, "IO_FLAG_MMAP_IFC", None)
    if flags is not None:
        try:
            return faiss.read_index(str(path), flags)
        except RuntimeError:  # an index type this FAISS cannot map zero-copy: map its lists
            pass
    return faiss.read_index(str(path), faiss.IO_FLAG_MMAP)


def _matrix_file(vectors: np.ndarray) -> str | None:
    """The file of a memory-mapped float16 matrix that covers the whole file, else None."""
    name = getattr(vectors, "filename", None)
    if (name is None or getattr(vectors, "offset", 0) != 0 or vectors.dtype != np.float16
            or not vectors.flags.c_contiguous):
        return None
    try:
        return name if os.path.getsize(name) == vectors.nbytes else None
    except OSError:
        return None


def load_meta(store_path: str | Path) -> IndexMeta:
    """The index's meta.json; IndexMismatch for an index this version cannot use."""
    d = index_dir(store_path)
    path = d / "meta.json"
    if not path.exists():
        raise FileNotFoundError(f"{path}: no embedding index; run `agentsweep cache index "
                                f"{store_path}`")
    raw = msgspec.json.decode(path.read_bytes())
    fmt = raw.get("format", 1) if isinstance(raw, dict) else None
    if fmt != INDEX_FORMAT:
        raise IndexMismatch(f"{d}: index format {fmt}, this agentsweep reads {INDEX_FORMAT} "
                            "(recorded recall gate); rebuild it: `agentsweep cache index "
                            f"{store_path} --embedder SPEC`")
    meta = msgspec.convert(raw, type=IndexMeta)
    if meta.text_format != TEXT_FORMAT:
        raise IndexMismatch(f"{d}: vectors embed text format {meta.text_format!r}, queries use "
                            f"{TEXT_FORMAT!r}; rebuild it with `agentsweep cache index`")
    return meta


class EmbeddingIndex:
    """The index directory of one store; tools are loaded lazily on first search."""

    def __init__(self, store_path: str | Path, *, backend: str = "auto",
                 check_store: bool = True) -> None:
        self.dir = index_dir(store_path)
        self.meta = load_meta(store_path)
        if check_store:
            with CacheStore(store_path) as store:
                sha = store.header.blob_sha256
            if sha != self.meta.store_sha256:
                raise IndexMismatch(f"{self.dir} was built for other contents of {store_path} "
                                    "(store sha256 differs); rebuild it with "
                                    "`agentsweep cache index`")
        self.backend = backend
        self._tools: dict[str, ToolIndex] = {}
        self._thread: ThreadPoolExecutor | None = None  # the search thread, made on first need

    def check_embedder(self, embedder: Any) -> None:
        """IndexMismatch unless `embedder` is the model (and dimension) the index was built
        with. Embedders without a `name`, and OpenAI embedders whose model is not resolved yet,
        are checked on dimension only (at search time, `ToolIndex.search`)."""
        name = getattr(embedder, "name", "") or ""
        if name and not name.startswith(("http://", "https://")) \
                and name != self.meta.embedder_model:
            raise IndexMismatch(
                f"{self.dir} was built with embedder {self.meta.embedder_model!r} (spec "
                f"{self.meta.embedder!r}); queries would use {name!r}. Set sandbox.embedder to "
                "the same model or rebuild: `agentsweep cache index STORE --embedder SPEC`")
        known = getattr(embedder, "known_dim", None)
        if isinstance(known, int) and known and known != self.meta.dim:
            raise IndexMismatch(f"{self.dir} holds dimension {self.meta.dim}, embedder {name!r} "
                                f"gives {known}; rebuild the index with the query embedder")

    async def embed_query(self, embedder: Any, text: str) -> np.ndarray:
        """Embed one query text and check the embedder against the index (name resolved by
        then for OpenAI embedders)."""
        vec = np.asarray((await embedder.embed([text]))[0])
        self.check_embedder(embedder)
        return vec

    def rows(self, name: str) -> int | None:
        """The rows indexed for tool `name` (None: not indexed), without opening it."""
        ts = self.meta.tools.get(name)
        return None if ts is None else ts.rows

    async def search(self, name: str, query: np.ndarray, k: int) -> list[int]:
        """Ids of tool `name`'s `k` rows nearest `query` ([] for a tool not indexed). Opening a
        tool (an IVF file: up to ~2 s) and a heavy search (`ToolIndex.heavy`) run on the index's
        one search thread, in the order asked; a small open tool is searched here."""
        tool = self._tools.get(name)
        if tool is not None and not tool.heavy:
            return tool.search(query, k)
        if self._thread is None:
            self._thread = ThreadPoolExecutor(1, thread_name_prefix="index-search")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._thread, self._open_and_search, name, query, k)

    def _open_and_search(self, name: str, query: np.ndarray, k: int) -> list[int]:
        tool = self.tool(name)
        return [] if tool is None else tool.search(query, k)

    def close(self) -> None:
        """Stop the search thread (searches still queued are cancelled)."""
        if self._thread is not None:
            self._thread.shutdown(wait=False, cancel_futures=True)
            self._thread = None

    def tool(self, name: str) -> ToolIndex | None:
        ts = self.meta.tools.get(name)
        if ts is None:
            return None
        if name not in self._tools:
            n = ts.rows
            path = self.dir / f"{name}.f16"
            vecs = (np.memmap(path, dtype=np.float16, mode="r", shape=(n, self.meta.dim))
                    if n else np.zeros((0, self.meta.dim), np.float16))
            ivf = self.dir / f"{name}.ivf"
            use_ivf = ts.search == "approximate" and ivf.exists()
            self._tools[name] = ToolIndex(vecs, ivf_path=ivf if use_ivf else None,
                                          backend=self.backend, nprobe=ts.nprobe or IVF_NPROBE,
                                          vectors_path=path if n else None)
        return self._tools[name]

    def describe(self) -> dict[str, Any]:
        """What a run manifest records of retrieval: embedder, dimension, text format, and per
        tool the search mode in effect with the recall measured when the index was built."""
        m = self.meta
        faiss_ok = self.backend != "torch" and _faiss() is not None
        exact_kernel = "faiss-mapped" if faiss_ok and mapped_flat_supported() else "torch-stream"
        tools = {}
        for name, ts in m.tools.items():
            effective = ts.search if faiss_ok else "exact"
            d: dict[str, Any] = {"rows": ts.rows, "search": effective, "reason": ts.reason,
                                 "kernel": "faiss-ivf-mapped" if effective == "approximate"
                                 else exact_kernel}
            if effective != ts.search:
                d["reason"] = "no-faiss-at-query-time"
            if ts.recall_at_k is not None:
                d.update(recall_at_8=ts.recall_at_k, recall_sample=ts.recall_sample,
                         nprobe=ts.nprobe, nlist=ts.nlist)
            tools[name] = d
        return {"embedder": m.embedder, "embedder_model": m.embedder_model, "dim": m.dim,
                "text_format": m.text_format, "index_format": m.format,
                "min_recall": m.min_recall, "recall_k": m.recall_k,
                "backend": "faiss" if faiss_ok else "torch", "tools": tools}
