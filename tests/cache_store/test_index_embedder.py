"""Embedding index: embedder/format/store mismatch errors, and a build through the OpenAI
embedder on a stub server (the sandbox's retrieval and `agentsweep cache index` with it).
The recall gate and the metadata: test_index.py."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest
import pytest_asyncio
from aiohttp import web

from cache_store import index as idx
from cache_store.importer import import_cache
from cache_store.index import EmbeddingIndex, IndexMismatch, build_index
from cache_store.keys import normalize_call
from cache_store.sandbox import SandboxSettings, open_sandbox

from .conftest import TIME, FakeClient, FakeEmbedder, mini_schemas
from .index_support import (
    DIM,
    _seed,
    clustered,
)

faiss = pytest.importorskip("faiss")


# -- mismatches ----------------------------------------------------------------------------------
@pytest.fixture
def store(release_dir: Path, tmp_path: Path) -> Path:
    out = tmp_path / "c.store"
    import_cache(release_dir, out)
    return out


class NamedFake(FakeEmbedder):
    def __init__(self, name: str, dim: int = 64) -> None:
        self.name, self.dim, self.known_dim = name, dim, dim


async def test_embedder_mismatch_is_a_clear_error(store: Path, tmp_path: Path) -> None:
    await build_index(store, NamedFake("model-a"), embedder_name="spec-a", progress=False)
    index = EmbeddingIndex(store)
    index.check_embedder(NamedFake("model-a"))
    index.check_embedder(FakeEmbedder())  # no name: dimension checked at search time
    with pytest.raises(IndexMismatch, match=r"built with embedder 'model-a'.*'model-b'"):
        index.check_embedder(NamedFake("model-b"))
    with pytest.raises(IndexMismatch, match="dimension 64, embedder 'model-a' gives 32"):
        index.check_embedder(NamedFake("model-a", dim=32))
    with pytest.raises(IndexMismatch, match="query vector has dimension 32"):
        index.tool("weather_current_conditions").search(np.ones(32, np.float32), 2)
    settings = SandboxSettings(store=str(store), simulated_store=str(tmp_path / "sim"),
                               miss_log=str(tmp_path / "m.jsonl"))
    with pytest.raises(IndexMismatch, match="model-b"):
        await open_sandbox(settings, tool_schemas=mini_schemas(), simulator_client=FakeClient(),
                           simulator_model="m", embedder=NamedFake("model-b"))


async def test_old_format_and_other_store_are_refused(store: Path, release_dir: Path,
                                                      tmp_path: Path) -> None:
    await build_index(store, FakeEmbedder(), embedder_name="fake", progress=False)
    meta_path = idx.index_dir(store) / "meta.json"
    good = meta_path.read_bytes()
    old = {"embedder": "local", "dim": 64, "store_sha256": "x", "rows": {"a": 1}}
    meta_path.write_text(json.dumps(old))
    with pytest.raises(IndexMismatch, match="format 1.*rebuild"):
        EmbeddingIndex(store)
    meta_path.write_bytes(good.replace(idx.TEXT_FORMAT.encode(), b"other-text"))
    with pytest.raises(IndexMismatch, match="text format 'other-text'"):
        EmbeddingIndex(store)
    meta_path.write_bytes(good)
    (release_dir / "web_search_cache.json").write_text(
        json.dumps({normalize_call({"query": "x"}, TIME): "y"}), encoding="utf-8")
    import_cache(release_dir, store, force=True)
    with pytest.raises(IndexMismatch, match="store sha256 differs"):
        EmbeddingIndex(store)


# -- the OpenAI-compatible embedder (what vLLM serves) -------------------------------------------
def _stub_vector(text: str) -> list[float]:
    return clustered(1, np.random.default_rng(_seed(text)))[0].tolist()


@pytest_asyncio.fixture(loop_scope="function")
async def emb_server():
    calls: list[dict] = []

    async def embeddings(request: web.Request) -> web.Response:
        body = await request.json()
        calls.append(body)
        data = [{"object": "embedding", "index": i, "embedding": _stub_vector(t)}
                for i, t in enumerate(body["input"])]
        return web.json_response({"object": "list", "model": body["model"], "data": data})

    async def models(request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "Qwen/Qwen3-Embedding-8B"}]})

    app = web.Application()
    app.router.add_post("/v1/embeddings", embeddings)
    app.router.add_get("/v1/models", models)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}/v1", calls
    await runner.cleanup()


async def test_openai_embedder_builds_and_serves_the_index(big_store: Path, tmp_path: Path,
                                                           emb_server) -> None:
    from backends.embedder import make_embedder

    url, calls = emb_server
    spec = f"openai:{url}#Qwen/Qwen3-Embedding-8B"
    async with make_embedder(spec, batch_size=64) as emb:
        meta = await build_index(big_store, emb, embedder_name=spec, progress=False,
                                 ivf_threshold=1000, recall_sample=300)
    assert meta.embedder == spec and meta.embedder_model == "Qwen/Qwen3-Embedding-8B"
    assert meta.tools["web_search"].search == "approximate"
    assert {c["model"] for c in calls} == {"Qwen/Qwen3-Embedding-8B"}
    assert max(len(c["input"]) for c in calls) == 64
    assert '{"page": 0, "query": "q0"}' not in calls[0]["input"]  # embedding text, not JSON
    assert any("page: 0 | query: q0" in c["input"] for c in calls)

    # the sandbox rebuilds the query embedder from the recorded spec and retrieves with it
    settings = SandboxSettings(store=str(big_store), simulated_store=str(tmp_path / "sim"),
                               miss_log=str(tmp_path / "m.jsonl"))
    sb = await open_sandbox(settings, tool_schemas=mini_schemas(), simulator_client=FakeClient(),
                            simulator_model="m")
    examples = await sb.retrieve("web_search", '{"page": 3, "query": "q10"}', "addr")
    assert examples[0][0] == '{"page": 3, "query": "q10"}' and len(examples) == 8
    assert sb.index.describe()["embedder_model"] == "Qwen/Qwen3-Embedding-8B"
    await sb.embedder.close()
    sb.close()

    # an embedder spec naming no model takes the server's; a different served model is refused
    other = SandboxSettings(store=str(big_store), embedder=f"openai:{url}#other-model",
                            simulated_store=str(tmp_path / "sim"), miss_log=str(tmp_path / "m"))
    with pytest.raises(IndexMismatch, match="other-model"):
        await open_sandbox(other, tool_schemas=mini_schemas(), simulator_client=FakeClient(),
                           simulator_model="m")
    async with make_embedder(f"openai:{url}") as unnamed:
        index = EmbeddingIndex(big_store)
        index.check_embedder(unnamed)  # not resolved yet: nothing to compare
        vec = await index.embed_query(unnamed, "page: 1 | query: q1")
        assert vec.shape == (DIM,)


def test_cli_index_prints_the_gate(big_store: Path, capsys, emb_server_thread) -> None:
    from evaluator.cli import main

    url = emb_server_thread
    rc = main(["cache", "index", str(big_store), "--embedder",
               f"openai:{url}#Qwen/Qwen3-Embedding-8B",
               "--ivf-threshold", "1000", "--recall-sample", "200", "--min-recall", "0.95"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "embedder Qwen/Qwen3-Embedding-8B" in out and ">= 0.95" in out
    assert "web_search: 3000 rows, approximate (IVF nlist" in out and "on 200 sampled rows" in out
    assert "weather_current_conditions: 3 rows, exact (small tool)" in out
    rc = main(["cache", "index", str(big_store), "--embedder", "openai:127.0.0.1:1/v1#m"])
    assert rc == 1 and "error: embedder spec" in capsys.readouterr().err


@pytest.fixture
def emb_server_thread():
    """The stub embeddings server on its own loop in a thread (the CLI runs asyncio.run)."""
    import threading

    loop = asyncio.new_event_loop()
    started: dict = {}
    ready = threading.Event()

    async def start() -> None:
        async def embeddings(request: web.Request) -> web.Response:
            body = await request.json()
            data = [{"index": i, "embedding": _stub_vector(t)} for i, t in enumerate(body["input"])]
            return web.json_response({"data": data})

        app = web.Application()
        app.router.add_post("/v1/embeddings", embeddings)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        started["runner"] = runner
        started["url"] = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}/v1"
        ready.set()

    thread = threading.Thread(target=lambda: (loop.run_until_complete(start()), loop.run_forever()),
                              daemon=True)
    thread.start()
    assert ready.wait(10)
    yield started["url"]
    asyncio.run_coroutine_threadsafe(started["runner"].cleanup(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)
