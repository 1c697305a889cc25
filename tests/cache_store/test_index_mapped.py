"""One copy of the index per node: the tool search reads its files in place (exact: the mapped
float16 matrix; approximate: the IVF lists mapped from their file), returns the neighbours of
the design that held float32 copies, and processes share the pages."""

from __future__ import annotations

import multiprocessing as mp
import sys
from pathlib import Path

import numpy as np
import pytest

from cache_store import index as idx
from cache_store import recall_gate
from cache_store.index import EmbeddingIndex, ToolIndex, build_index, write_vectors
from kernels.mapped import MappedFlatIP, MappedUnsupported, mapped_flat_supported

from ..kernels.smaps import anonymous_kb, mapping_kb
from .index_support import (
    DIM,
    VecEmbedder,
    _unit,
    clustered,
    uniform,
)

faiss = pytest.importorskip("faiss")
needs_mapped = pytest.mark.skipif(not mapped_flat_supported(),
                                  reason="needs FAISS >= 1.11 on Linux or macOS")


def _matrix(tmp_path: Path, x: np.ndarray) -> np.memmap:
    path = tmp_path / "t.f16"
    write_vectors(path, x)
    return np.memmap(path, dtype=np.float16, mode="r", shape=x.shape)


def _queries(x: np.ndarray, n: int, seed: int = 5) -> np.ndarray:
    """Rows plus noise, not normalised (ToolIndex.search normalises)."""
    rng = np.random.default_rng(seed)
    return (np.asarray(x[rng.integers(0, len(x), n)], np.float32)
            + 0.05 * rng.standard_normal((n, x.shape[1])).astype(np.float32))


def _todays_flat(x: np.ndarray, q: np.ndarray) -> list[list[int]]:
    """The search this design replaced: IndexFlatIP over a float32 copy, normalised query."""
    flat = faiss.IndexFlatIP(x.shape[1])
    flat.add(np.asarray(x, np.float32))
    qn = q / np.linalg.norm(q, axis=1, keepdims=True)
    return flat.search(qn.astype(np.float32), 8)[1].tolist()


@needs_mapped
@pytest.mark.parametrize("dim", [DIM, 4096])
def test_exact_search_returns_todays_neighbours(tmp_path: Path, dim: int) -> None:
    rng = np.random.default_rng(dim)
    x = _unit(rng.standard_normal((2000 if dim == DIM else 300, dim)))
    x[100:104] = x[7]                      # duplicated params: exact ties
    vecs = _matrix(tmp_path, x)
    ti = ToolIndex(vecs)
    assert ti.backend == "faiss" and ti.search_mode == "exact"
    assert isinstance(ti._faiss_index, MappedFlatIP)
    q = _queries(vecs, 60)
    q[0] = vecs[7]
    assert [ti.search(row, 8) for row in q] == _todays_flat(vecs, q)


def test_approximate_search_returns_todays_neighbours(tmp_path: Path) -> None:
    x = clustered(4000, np.random.default_rng(0))
    vecs = _matrix(tmp_path, x)
    ts = recall_gate.gate_tool(str(tmp_path / "t.f16"), 4000, DIM, str(tmp_path / "t.ivf"),
                               min_recall=0.99, sample=300)
    assert ts.search == "approximate"
    ti = ToolIndex(vecs, ivf_path=tmp_path / "t.ivf", nprobe=ts.nprobe)
    assert ti.search_mode == "approximate"
    loaded = faiss.read_index(str(tmp_path / "t.ivf"))     # how it was read before: a copy
    loaded.nprobe = ts.nprobe
    q = _queries(vecs, 100)
    qn = (q / np.linalg.norm(q, axis=1, keepdims=True)).astype(np.float32)
    want = [[int(i) for i in r if i >= 0] for r in loaded.search(qn, 8)[1]]
    assert [ti.search(row, 8) for row in q] == want


def _refuse(*_a: object) -> None:
    raise MappedUnsupported("FAISS did not read the matrix as a zero-copy view")


@pytest.mark.parametrize("why", ["unsupported", "refused at open"])
def test_without_a_mapping_faiss_the_torch_kernel_streams(tmp_path: Path, why: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    if why == "unsupported":
        monkeypatch.setattr(idx, "mapped_flat_supported", lambda: False)
    else:
        monkeypatch.setattr(idx, "MappedFlatIP", _refuse)
    x = _unit(np.random.default_rng(2).standard_normal((1500, DIM)))
    vecs = _matrix(tmp_path, x)
    ti = ToolIndex(vecs)
    assert ti.backend == "torch" and ti._faiss_index is None
    q = _queries(vecs, 10)
    assert [ti.search(row, 8) for row in q] == _todays_flat(vecs, q)


@pytest.mark.parametrize("kind", ["clustered", "uniform"])
def test_the_gate_streams_the_matrix_and_builds_the_same_index(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    gen = clustered if kind == "clustered" else uniform
    x = gen(3000, np.random.default_rng(4))
    write_vectors(tmp_path / "t.f16", x)

    def gate(tag: str) -> idx.ToolSearch:
        return recall_gate.gate_tool(str(tmp_path / "t.f16"), 3000, DIM,
                                     str(tmp_path / f"{tag}.ivf"), min_recall=0.99, sample=300,
                                     nprobes=[2, 16])

    whole = gate("whole")                                   # one block: 3000 x 32 floats
    monkeypatch.setattr(recall_gate, "BLOCK_BYTES", 4 * DIM * 150)  # 150 rows a block
    blocks = gate("blocks")
    assert blocks == whole and whole.search == ("approximate" if kind == "clustered" else "exact")
    if whole.search == "approximate":
        assert (tmp_path / "blocks.ivf").read_bytes() == (tmp_path / "whole.ivf").read_bytes()
    # the exact reference, a block at a time, is faiss.knn over the whole float32 matrix
    vecs = np.memmap(tmp_path / "t.f16", dtype=np.float16, mode="r", shape=(3000, DIM))
    xf = np.asarray(vecs, np.float32)
    s, i = recall_gate.exact_knn(faiss, xf[:50], vecs, 9)
    ref_s, ref_i = faiss.knn(xf[:50], xf, 9, metric=faiss.METRIC_INNER_PRODUCT)
    assert i.tolist() == ref_i.tolist()
    np.testing.assert_allclose(s, ref_s, atol=1e-5)


# -- memory ----------------------------------------------------------------------------------
def _open_and_search(store: str, tool: str, ready, go) -> None:
    index = EmbeddingIndex(store)
    ti = index.tool(tool)
    q = np.ones(DIM, np.float32)
    ready.put((ti.search_mode, ti.search(q, 8)))
    go.wait(120)


@needs_mapped
@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/PID/smaps")
@pytest.mark.parametrize(("kind", "mode", "suffix"),
                         [("clustered", "approximate", "ivf"), ("uniform", "exact", "f16")])
async def test_processes_share_one_copy_of_a_tool(big_store: Path, kind: str, mode: str,
                                                  suffix: str) -> None:
    await build_index(big_store, VecEmbedder(kind), embedder_name="s", progress=False,
                      ivf_threshold=1000, recall_sample=200)
    path = idx.index_dir(big_store) / f"web_search.{suffix}"
    before = anonymous_kb()
    mine = EmbeddingIndex(big_store).tool("web_search")
    mine.search(np.ones(DIM, np.float32), 8)
    assert mine.search_mode == mode
    assert mapping_kb("self", path)["Rss"] > 0                  # searched from the mapped file
    assert anonymous_kb() - before < 2 * 1024                   # with no copy of it

    ctx = mp.get_context("spawn")
    ready, go = ctx.Queue(), ctx.Event()
    procs = [ctx.Process(target=_open_and_search, args=(str(big_store), "web_search", ready, go))
             for _ in range(3)]
    for p in procs:
        p.start()
    try:
        answers = [ready.get(timeout=120) for _ in procs]
        assert answers == [(mode, mine.search(np.ones(DIM, np.float32), 8))] * 3
        for p in procs:
            seen = mapping_kb(p.pid, path)
            assert seen["Rss"] > 0 and seen["Anonymous"] == 0
            assert seen["Pss"] * 3 <= seen["Rss"] + 8      # split between the 4 mappers
    finally:
        go.set()
        for p in procs:
            p.join(60)
