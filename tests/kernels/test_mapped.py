"""kernels.mapped: FAISS searching a float16 matrix file in place gives the neighbours of a
flat float32 search, holds no copy of the matrix, and processes share its pages."""

from __future__ import annotations

import multiprocessing as mp
import sys
from pathlib import Path

import numpy as np
import pytest

faiss = pytest.importorskip("faiss")
from kernels import mapped
from kernels.mapped import MappedFlatIP, MappedUnsupported, mapped_flat_supported

from .smaps import anonymous_kb, mapping_kb

pytestmark = pytest.mark.skipif(not mapped_flat_supported(),
                                reason="needs FAISS >= 1.11 on Linux or macOS")


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def _write(path: Path, x: np.ndarray) -> Path:
    np.ascontiguousarray(x, dtype=np.float16).tofile(path)
    return path


def _flat(x: np.ndarray, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Today's exact search: FAISS IndexFlatIP over a float32 copy."""
    index = faiss.IndexFlatIP(x.shape[1])
    index.add(np.asarray(x, dtype=np.float32))
    return index.search(np.asarray(q, dtype=np.float32), k)


@pytest.mark.parametrize(("n", "dim"), [(1, 8), (500, 3), (3000, 64), (300, 4096)])
def test_same_neighbours_as_flat_float32(tmp_path: Path, n: int, dim: int) -> None:
    rng = np.random.default_rng(n + dim)
    x = _unit(rng.standard_normal((n, dim))).astype(np.float16)
    x[n // 2:n // 2 + min(5, n // 3)] = x[0]     # duplicate rows: exact ties
    q = _unit(rng.standard_normal((40, dim))).astype(np.float32)
    q[0] = x[0]
    m = MappedFlatIP(_write(tmp_path / "m.f16", x), n, dim)
    scores, ids = m.search(q, 8)
    ref_s, ref_i = _flat(x, q, 8)
    assert ids.tolist() == ref_i.tolist()
    np.testing.assert_allclose(scores, ref_s, rtol=0, atol=1e-5)
    m.close()


def test_k_beyond_rows_pads_like_faiss(tmp_path: Path) -> None:
    x = np.eye(4, 6, dtype=np.float16)
    m = MappedFlatIP(_write(tmp_path / "m.f16", x), 4, 6)
    _, ids = m.search(np.eye(1, 6, dtype=np.float32), 6)
    assert ids.tolist() == _flat(x, np.eye(1, 6), 6)[1].tolist()
    assert ids[0, 0] == 0 and ids[0, -1] == -1


def test_wrong_size_and_closed_are_clear_errors(tmp_path: Path) -> None:
    path = _write(tmp_path / "m.f16", np.zeros((10, 4)))
    with pytest.raises(ValueError, match=r"80 bytes, \(11, 4\) float16 needs 88"):
        MappedFlatIP(path, 11, 4)
    m = MappedFlatIP(path, 10, 4)
    m.close()
    m.close()   # idempotent
    with pytest.raises(ValueError, match="after close"):
        m.search(np.zeros(4), 1)


def test_unsupported_faiss_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(faiss, "ZeroCopyIOReader")
    assert not mapped_flat_supported()
    with pytest.raises(MappedUnsupported):
        MappedFlatIP(_write(tmp_path / "m.f16", np.zeros((2, 4))), 2, 4)


def test_a_faiss_that_copies_or_lays_out_otherwise_is_unsupported(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def other_layout(faiss, n, dim):
        raise MappedUnsupported("unexpected FAISS IndexScalarQuantizer serialisation")

    mapped._zero_copy_works.cache_clear()
    monkeypatch.setattr(mapped, "sq_fp16_header", other_layout)
    try:
        assert not mapped_flat_supported()
    finally:
        mapped._zero_copy_works.cache_clear()
    monkeypatch.undo()
    assert mapped_flat_supported()


def test_header_matches_faiss_own_serialisation() -> None:
    x = np.random.default_rng(0).standard_normal((7, 12)).astype(np.float16)
    index = faiss.IndexScalarQuantizer(12, faiss.ScalarQuantizer.QT_fp16,
                                       faiss.METRIC_INNER_PRODUCT)
    index.add(x.astype(np.float32))
    own = faiss.serialize_index(index).tobytes()
    assert own == mapped.sq_fp16_header(faiss, 7, 12) + x.tobytes()


# -- memory: no private copy, pages shared between processes ----------------------------------
def _search_and_wait(path: str, n: int, dim: int, ready, go) -> None:
    m = MappedFlatIP(path, n, dim)
    ids = m.search(np.ones((1, dim), np.float32), 8)[1]
    ready.put(ids[0].tolist())
    go.wait(120)


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/PID/smaps")
def test_search_holds_no_copy_and_processes_share_the_pages(tmp_path: Path) -> None:
    n, dim = 8192, 1024                                   # 16 MiB of float16
    x = _unit(np.random.default_rng(3).standard_normal((n, dim))).astype(np.float16)
    path = _write(tmp_path / "m.f16", x)
    before = anonymous_kb()
    m = MappedFlatIP(path, n, dim)
    m.search(np.ones((1, dim), np.float32), 8)            # touches every row
    mine = mapping_kb("self", path)
    assert mine["Rss"] >= 15 * 1024                       # the matrix is mapped and resident
    assert mine["Anonymous"] == 0                         # ... as file pages, not a copy
    assert anonymous_kb() - before < 4 * 1024             # no float32 (32 MiB) copy either
    m.close()

    ctx = mp.get_context("spawn")
    ready, go = ctx.Queue(), ctx.Event()
    procs = [ctx.Process(target=_search_and_wait, args=(str(path), n, dim, ready, go))
             for _ in range(3)]
    for p in procs:
        p.start()
    try:
        answers = [ready.get(timeout=120) for _ in procs]
        assert answers[0] == answers[1] == answers[2]
        seen = [mapping_kb(p.pid, path) for p in procs]
        for s in seen:
            assert s["Rss"] >= 15 * 1024 and s["Anonymous"] == 0
            # the pages are split between the three processes, not held once each
            assert s["Pss"] < 0.45 * s["Rss"]
    finally:
        go.set()
        for p in procs:
            p.join(60)
