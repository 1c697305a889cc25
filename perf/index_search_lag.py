"""What a tool-sandbox retrieval search costs the event loop: the old inline search against
`EmbeddingIndex.search` (heavy searches on the index's search thread), side by side.

    python -m perf.index_search_lag [--rows 50000] [--dim 1024] [--searches 200] [--episodes 32]

Builds a store of one tool with `--rows` cached calls and its exact index (float16 matrix,
`--dim` dimensions, a seeded random embedder: the scan's cost depends on the matrix size, not
on the vectors), then runs `--episodes` concurrent coroutines that together make `--searches`
searches while a ticker asks the loop for a 1 ms sleep over and over. Printed per mode: wall
time, searches/s, and how late the ticker woke (p50 / p99 / max ms over 1 ms): the time every
other episode of the process waited. The same neighbours in both modes are checked.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from cache_store.importer import import_cache
from cache_store.index import EmbeddingIndex, build_index
from cache_store.keys import normalize_call

TOOL = "web_search"
TIME = "2025-10-24 10:00:00"


class SeededEmbedder:
    """Unit vectors seeded by the text (CRC-32: the same in every process; no model)."""

    name = "seeded-random"

    def __init__(self, dim: int) -> None:
        self.dim = self.known_dim = dim

    async def embed(self, texts: list[str]) -> np.ndarray:
        out = np.empty((len(texts), self.dim), np.float32)
        for i, t in enumerate(texts):
            v = np.random.default_rng(zlib.crc32(t.encode())).standard_normal(self.dim)
            out[i] = v / np.linalg.norm(v)
        return out


def make_store(work: Path, rows: int, dim: int) -> Path:
    src = work / "src"
    src.mkdir()
    calls = {normalize_call({"query": f"q{i}"}, TIME): f"r{i}" for i in range(rows)}
    (src / f"{TOOL}_cache.json").write_text(json.dumps(calls), encoding="utf-8")
    store = work / "lag.store"
    import_cache(src, store)
    asyncio.run(build_index(store, SeededEmbedder(dim), embedder_name="seeded", progress=False,
                            ivf_threshold=rows + 1))
    return store


async def measure(index: EmbeddingIndex, queries: np.ndarray, episodes: int,
                  inline: bool) -> dict[str, Any]:
    late: list[float] = []
    stop = asyncio.Event()

    async def ticker() -> None:
        while not stop.is_set():
            t = time.perf_counter()
            await asyncio.sleep(0.001)
            late.append(time.perf_counter() - t - 0.001)

    found: dict[int, list[int]] = {}
    nxt = iter(range(len(queries)))

    async def episode() -> None:
        for i in nxt:
            if inline:
                tool = index.tool(TOOL)
                assert tool is not None
                found[i] = tool.search(queries[i], 8)
                await asyncio.sleep(0)
            else:
                found[i] = await index.search(TOOL, queries[i], 8)

    tick = asyncio.create_task(ticker())
    await asyncio.sleep(0.01)
    t0 = time.perf_counter()
    await asyncio.gather(*(episode() for _ in range(episodes)))
    wall = time.perf_counter() - t0
    stop.set()
    await tick
    ms = np.array(late) * 1000
    return {"wall": wall, "per_s": len(queries) / wall, "p50": float(np.percentile(ms, 50)),
            "p99": float(np.percentile(ms, 99)), "max": float(ms.max()),
            "ids": [found[i] for i in range(len(queries))]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=50_000)
    ap.add_argument("--dim", type=int, default=1024)
    ap.add_argument("--searches", type=int, default=200)
    ap.add_argument("--episodes", type=int, default=32)
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(dir=os.environ.get("AGENTSWEEP_PERF_DIR")) as tmp:
        t = time.perf_counter()
        store = make_store(Path(tmp), a.rows, a.dim)
        print(f"store + exact index: {a.rows:,} rows x {a.dim} dims "
              f"({a.rows * a.dim * 2 / 2**20:.0f} MiB float16) in {time.perf_counter() - t:.1f} s")
        queries = np.random.default_rng(1).standard_normal((a.searches, a.dim)).astype(np.float32)
        results = {}
        for inline in (True, False):
            index = EmbeddingIndex(store)
            index.tool(TOOL)  # opened beforehand in both modes: the scan alone is compared
            results[inline] = asyncio.run(measure(index, queries, a.episodes, inline))
            index.close()
    same = results[True]["ids"] == results[False]["ids"]
    print(f"{a.searches} searches by {a.episodes} concurrent episodes; the loop's lateness on "
          "a 1 ms sleep (what every other episode waits)")
    print(f"{'mode':>22} {'wall s':>7} {'searches/s':>11} {'late p50 ms':>12} "
          f"{'late p99 ms':>12} {'late max ms':>12}")
    for inline, label in ((True, "inline (before)"), (False, "search thread (now)")):
        r = results[inline]
        print(f"{label:>22} {r['wall']:7.2f} {r['per_s']:11.0f} {r['p50']:12.2f} "
              f"{r['p99']:12.2f} {r['max']:12.2f}")
    old, new = results[True], results[False]
    p99, worst = old["p99"] / max(new["p99"], 1e-9), old["max"] / max(new["max"], 1e-9)
    print(f"ratio inline / search thread: loop lateness p99 {p99:.1f}x, max {worst:.1f}x; "
          "searches/s "
          f"{new['per_s'] / old['per_s']:.2f}x; same neighbours: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
