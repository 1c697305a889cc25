"""Embedding index: the recall gate (approximate only where recall@8 >= threshold), the
metadata a build records, its reload, and searches off the event loop. Mismatch errors and
the OpenAI embedder: test_index_embedder.py."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import msgspec
import numpy as np
import pytest

from cache_store import index as idx
from cache_store.index import (
    EmbeddingIndex,
    build_index,
    gate_tool,
    recall_at_k,
    summary_lines,
    write_vectors,
)
from cache_store.keys import embedding_text

from .index_support import (
    DIM,
    VecEmbedder,
    _unit,
    clustered,
    uniform,
)

faiss = pytest.importorskip("faiss")


def _gate(tmp_path: Path, x: np.ndarray, **kw) -> idx.ToolSearch:
    path = tmp_path / "t.f16"
    write_vectors(path, x)
    kw.setdefault("min_recall", 0.99)
    kw.setdefault("sample", 400)
    return gate_tool(str(path), x.shape[0], x.shape[1], str(tmp_path / "t.ivf"), **kw)


# -- the gate on vectors -------------------------------------------------------------------------
def test_gate_keeps_ivf_when_recall_is_high(tmp_path: Path) -> None:
    ts = _gate(tmp_path, clustered(4000, np.random.default_rng(0)))
    assert ts.search == "approximate" and ts.reason == "recall"
    assert ts.recall_at_k is not None and ts.recall_at_k >= 0.99
    assert ts.recall_sample == 400 and ts.nprobe == 16 and ts.nlist == 100
    assert ts.trials == [(16, ts.recall_at_k)]
    assert (tmp_path / "t.ivf").exists()


def test_gate_falls_back_to_exact_when_recall_is_low(tmp_path: Path) -> None:
    ts = _gate(tmp_path, uniform(4000, np.random.default_rng(0)), nprobes=[1, 2, 4])
    assert ts.search == "exact" and ts.reason == "recall"
    assert [p for p, _ in ts.trials] == [1, 2, 4]  # the whole ladder was tried
    assert ts.recall_at_k == max(r for _, r in ts.trials) < 0.99
    assert not (tmp_path / "t.ivf").exists()


def test_gate_raises_nprobe_before_giving_up(tmp_path: Path) -> None:
    ts = _gate(tmp_path, clustered(4000, np.random.default_rng(1)), nprobes=[1, 16])
    assert ts.trials[0][0] == 1 and ts.trials[0][1] < 0.99
    assert ts.search == "approximate" and ts.nprobe == 16 and len(ts.trials) == 2


def test_threshold_is_configurable(tmp_path: Path) -> None:
    x = uniform(4000, np.random.default_rng(2))
    low = _gate(tmp_path, x, nprobes=[4], min_recall=0.2)
    assert low.search == "approximate"
    high = _gate(tmp_path, x, nprobes=[4], min_recall=0.99)
    assert high.search == "exact" and high.trials == low.trials  # seeded: same measurement


def test_default_ladder_stays_cheap() -> None:
    assert idx.nprobe_ladder(2000) == [16, 32, 64, 128]   # <= 1/8 of the lists
    assert idx.nprobe_ladder(894) == [16, 32, 64]
    assert idx.nprobe_ladder(100) == [16]                  # at least one rung


def test_recall_counts_ties_and_leaves_the_query_out() -> None:
    # rows 0..3 identical, row 4 orthogonal: for query row 0, rows 1,2,3 tie at score 1
    x = _unit(np.array([[1, 0], [1, 0], [1, 0], [1, 0], [0, 1]], dtype=np.float64))
    exact_ids = np.array([[0, 1, 2]])
    exact_scores = np.array([[1.0, 1.0, 1.0]], dtype=np.float32)
    rows = np.array([0])
    # approximate found 3 and 1 instead of 1 and 2: 3 ties with the exact 2nd -> full recall
    assert recall_at_k(x, np.array([[3, 1, 0]]), exact_ids, exact_scores, rows, 2) == 1.0
    # approximate found the orthogonal row: half
    assert recall_at_k(x, np.array([[0, 1, 4]]), exact_ids, exact_scores, rows, 2) == 0.5
    # -1 (IVF lists too short) is a miss
    assert recall_at_k(x, np.array([[0, 1, -1]]), exact_ids, exact_scores, rows, 2) == 0.5


# -- build, metadata, reload ---------------------------------------------------------------------
@pytest.mark.parametrize(("kind", "mode"), [("clustered", "approximate"), ("uniform", "exact")])
async def test_build_records_the_gate_and_reloads(big_store: Path, kind: str, mode: str) -> None:
    meta = await build_index(big_store, VecEmbedder(kind), embedder_name="spec-x", progress=False,
                             ivf_threshold=1000, recall_sample=300)
    ws = meta.tools["web_search"]
    assert ws.search == mode and ws.recall_sample == 300 and ws.recall_at_k is not None
    assert (ws.recall_at_k >= 0.99) == (mode == "approximate")
    small = meta.tools["weather_current_conditions"]
    assert (small.search, small.reason, small.recall_at_k) == ("exact", "small", None)
    assert meta.embedder == "spec-x" and meta.embedder_model == "vec-emb" and meta.dim == DIM
    d = idx.index_dir(big_store)
    assert (d / "web_search.ivf").exists() == (mode == "approximate")
    raw = json.loads((d / "meta.json").read_text())
    assert raw["format"] == idx.INDEX_FORMAT and raw["text_format"] == idx.TEXT_FORMAT
    assert raw["tools"]["web_search"]["search"] == mode

    index = EmbeddingIndex(big_store)
    assert index.meta == meta
    tool = index.tool("web_search")
    assert tool.search_mode == mode and tool.n == 3000
    info = index.describe()
    assert info["tools"]["web_search"]["search"] == mode
    assert info["tools"]["web_search"]["recall_at_8"] == ws.recall_at_k
    assert info["tools"]["weather_current_conditions"] == {"rows": 3, "search": "exact",
                                                           "reason": "small",
                                                           "kernel": "faiss-mapped"}
    assert info["tools"]["web_search"]["kernel"] == (
        "faiss-ivf-mapped" if mode == "approximate" else "faiss-mapped")
    assert info["embedder_model"] == "vec-emb" and info["min_recall"] == 0.99
    json.dumps(info)  # goes into the run manifest
    text = "\n".join(summary_lines(meta))
    assert f"web_search: 3000 rows, {mode}" in text and "recall@8" in text
    # a row's own text finds itself first, whichever search was chosen
    q = (await VecEmbedder(kind).embed([embedding_text('{"page": 5, "query": "q5"}')]))[0]
    assert tool.search(q, 8)[0] == 5

    exact = EmbeddingIndex(big_store, backend="torch")
    assert exact.describe()["tools"]["web_search"]["search"] == "exact"
    assert exact.describe()["tools"]["web_search"]["kernel"] == "torch-stream"


@pytest.mark.parametrize(("kind", "threshold"), [("clustered", 1000), ("uniform", 10**6)])
async def test_opens_and_heavy_searches_leave_the_event_loop_with_the_same_ids(
        big_store: Path, monkeypatch: pytest.MonkeyPatch, kind: str, threshold: int) -> None:
    import threading

    await build_index(big_store, VecEmbedder(kind), embedder_name="s", progress=False,
                      ivf_threshold=threshold, recall_sample=300)
    where: list[tuple[str, int]] = []
    real_search, real_init = idx.ToolIndex.search, idx.ToolIndex.__init__

    def search(self: idx.ToolIndex, q: np.ndarray, k: int) -> list[int]:
        where.append((threading.current_thread().name, self.n))
        return real_search(self, q, k)

    def init(self: idx.ToolIndex, *a: object, **kw: object) -> None:
        where.append(("open:" + threading.current_thread().name, 0))
        real_init(self, *a, **kw)

    monkeypatch.setattr(idx.ToolIndex, "search", search)
    monkeypatch.setattr(idx.ToolIndex, "__init__", init)
    reference = EmbeddingIndex(big_store)  # the tools searched the old way, inline
    texts = [embedding_text(f'{{"page": {i % 7}, "query": "q{i}"}}') for i in (5, 77, 2999)]
    qs = list(await VecEmbedder(kind).embed(texts))
    want = [reference.tool("web_search").search(q, 8) for q in qs]
    small_want = reference.tool("weather_current_conditions").search(qs[0], 2)
    where.clear()

    index = EmbeddingIndex(big_store)
    monkeypatch.setattr(idx, "OFF_LOOP_ELEMENTS", 3000 * DIM - 1)  # web_search: heavy
    got = await asyncio.gather(*(index.search("web_search", q, 8) for q in qs))
    assert got == want and got[0][0] == 5
    # opened once and searched, all three, on the one search thread, never on the loop's
    thread = where[0][0].removeprefix("open:")
    assert thread.startswith("index-search")
    assert where == [("open:" + thread, 0)] + [(thread, 3000)] * 3
    where.clear()  # open now, and still heavy: the search thread again
    assert await index.search("web_search", qs[1], 8) == want[1]
    assert where == [(thread, 3000)]
    assert index.tool("web_search").heavy and (index.tool("web_search").search_mode
                                               == ("approximate" if kind == "clustered"
                                                   else "exact"))

    where.clear()  # a small tool: opened on the thread the first time, then searched inline
    assert await index.search("weather_current_conditions", qs[0], 2) == small_want
    assert await index.search("weather_current_conditions", qs[0], 2) == small_want
    loop_thread = threading.current_thread().name
    assert where == [("open:" + thread, 0), (thread, 3), (loop_thread, 3)]
    assert await index.search("no_such_tool", qs[0], 2) == []
    assert index.rows("no_such_tool") is None and index.rows("web_search") == 3000
    index.close()
    index.close()  # twice is harmless


async def test_rebuild_drops_a_stale_ivf(big_store: Path) -> None:
    await build_index(big_store, VecEmbedder("clustered"), embedder_name="s", progress=False,
                      ivf_threshold=1000, recall_sample=200)
    assert (idx.index_dir(big_store) / "web_search.ivf").exists()
    await build_index(big_store, VecEmbedder("uniform"), embedder_name="s", progress=False,
                      ivf_threshold=1000, recall_sample=200, nprobes=[1])
    assert not (idx.index_dir(big_store) / "web_search.ivf").exists()
    assert EmbeddingIndex(big_store).tool("web_search").search_mode == "exact"


def test_meta_struct_roundtrip() -> None:
    ts = idx.ToolSearch(rows=10, search="approximate", reason="recall", nlist=4, nprobe=2,
                        recall_at_k=0.995, recall_sample=10, trials=[(1, 0.9), (2, 0.995)])
    assert msgspec.json.decode(msgspec.json.encode(ts), type=idx.ToolSearch) == ts
