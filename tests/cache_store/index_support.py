"""What the embedding-index tests share (test_index.py, test_index_embedder.py,
test_index_mapped.py): seeded unit vectors, clustered (IVF finds every neighbour) or uniform
(adversarial for IVF) and an embedder of them (`VecEmbedder`); their `big_store` fixture is in
conftest.py."""

from __future__ import annotations

import hashlib

import numpy as np

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


class VecEmbedder:
    """Embeds text to a fixed vector per text (seeded by its hash): clustered or uniform."""

    def __init__(self, kind: str = "clustered", name: str = "vec-emb") -> None:
        self.kind, self.name = kind, name
        self.known_dim = DIM

    async def embed(self, texts: list[str]) -> np.ndarray:
        gen = clustered if self.kind == "clustered" else uniform
        return np.concatenate([gen(1, np.random.default_rng(_seed(t))) for t in texts])
