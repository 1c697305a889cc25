"""What the embedding-index tests share (test_index.py, test_index_embedder.py,
test_index_mapped.py): seeded unit vectors, clustered (IVF finds every neighbour) or uniform
(adversarial for IVF), an embedder of them (`VecEmbedder`), and the fixture `big_store` (a
3000-row web_search tool beside a 3-row weather tool)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from cache_store.importer import import_cache
from cache_store.keys import normalize_call

from .conftest import TIME

DIM = 32
CENTRES = np.random.default_rng(7).standard_normal((20, DIM))


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def _seed(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


def clustered(n: int, rng: np.random.Generator) -> np.ndarray:
    """Like real embeddings: tight clusters, so IVF finds every neighbour."""
    return _unit(CENTRES[rng.integers(0, len(CENTRES), n)] + 0.1 * rng.standard_normal((n, DIM)))


def uniform(n: int, rng: np.random.Generator) -> np.ndarray:
    """Adversarial for IVF: no structure, neighbours scatter over many lists."""
    return _unit(rng.standard_normal((n, DIM)))


@pytest.fixture(name="big_store")
def big_store_fixture(tmp_path: Path) -> Path:
    src = tmp_path / "big"
    src.mkdir()
    many = {normalize_call({"query": f"q{i}", "page": i % 7}, TIME): f"r{i}" for i in range(3000)}
    (src / "web_search_cache.json").write_text(json.dumps(many), encoding="utf-8")
    few = {normalize_call({"location": c}, TIME): c for c in ("北京市", "上海市", "杭州市")}
    (src / "weather_current_conditions_cache.json").write_text(
        json.dumps(few, ensure_ascii=False), encoding="utf-8")
    store = tmp_path / "big.store"
    import_cache(src, store)
    return store


class VecEmbedder:
    """Embeds text to a fixed vector per text (seeded by its hash): clustered or uniform."""

    def __init__(self, kind: str = "clustered", name: str = "vec-emb") -> None:
        self.kind, self.name = kind, name
        self.known_dim = DIM

    async def embed(self, texts: list[str]) -> np.ndarray:
        gen = clustered if self.kind == "clustered" else uniform
        return np.concatenate([gen(1, np.random.default_rng(_seed(t))) for t in texts])
