"""The real-engine modes of the measurements (`perf.engine_saturation`, `perf.routing
--engine-urls / --embedded 2`, `perf.saturation --engine-url / --embedded 1`), exercised on stub
servers with the simulated engine: tiny workloads, nothing timed."""

from __future__ import annotations

import asyncio
from typing import ClassVar

import pytest

from perf import engine_saturation, routing, saturation
from perf.real_engines import base_url, engine_extra_args, reset_prefix_caches
from perf.stub_process import free_port
from perf.stub_server import start_stub

ENGINE = ["--kv-tokens", "20000", "--max-running", "8", "--prefill-us", "5",
          "--decode-ms", "0.2", "--completion-tokens", "8"]


class FakeServer:
    """What `start_replicas` needs of a VLLMServer, serving a stub with the simulated engine."""

    made: ClassVar[list[FakeServer]] = []

    def __init__(self, model, **kw):
        self.kw = kw
        self.port = kw.get("port") or free_port()
        self.stub = None
        self.model = "stub-model"
        self.pid = None
        FakeServer.made.append(self)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def astart(self):
        self.stub = await asyncio.to_thread(start_stub, *ENGINE, "--kv-tokens", "3000",
                                            port=self.port)
        return self

    async def astop(self):
        if self.stub is not None:
            stub, self.stub = self.stub, None
            await asyncio.to_thread(stub.stop)


@pytest.fixture
def stubs():
    made = [start_stub(*ENGINE) for _ in range(2)]
    yield made
    for s in made:
        s.stop()


def test_engine_saturation_replays_agentsweeps_requests(stubs, capsys):
    a = engine_saturation.build_parser().parse_args(
        ["--engine-url", stubs[0].root, "--tasks", "2", "--trials", "2", "--turns", "2",
         "--concurrency", "3", "--max-tokens", "8"])
    ours, theirs = asyncio.run(engine_saturation.amain(a))
    assert ours.requests == theirs.requests == 2 * 2 * 2
    assert ours.prompt_tokens == theirs.prompt_tokens > 0
    assert ours.completion_tokens == theirs.completion_tokens == 8 * 8
    # the cache was emptied before the generator: it sees the same hits, not all-hits
    assert ours.prefix_hit == pytest.approx(theirs.prefix_hit)
    out = capsys.readouterr().out
    assert "agentsweep / generator generated tokens/s:" in out
    assert "reset_prefix_cache failed" not in out


def test_reset_prefix_cache_empties_the_stub_engine_cache(stubs):
    from backends.client import ChatClient
    from backends.types import ChatMessage, Endpoint

    async def go():
        async with ChatClient(Endpoint(base_url=stubs[0].url)) as c:
            msgs = [ChatMessage(role="system", content="x" * 400)]
            await c.chat(msgs)
            warm = (await c.chat(msgs)).usage.cached_tokens
            assert await reset_prefix_caches([stubs[0].url]) == [True]
            cold = (await c.chat(msgs)).usage.cached_tokens
        return warm, cold

    warm, cold = asyncio.run(go())
    assert warm > 0 and cold == 0


def test_routing_on_two_given_urls_compares_the_three_policies(stubs, capsys):
    a = routing.build_parser().parse_args(
        ["--engine-urls", f"{stubs[0].url},{stubs[1].root}", "--tasks", "3", "--trials", "2",
         "--turns", "2", "--episodes", "4"])
    res = asyncio.run(routing.amain_real(a))
    assert list(res) == list(routing.POLICIES)
    for r in res.values():
        assert r.requests == 3 * 2 * 2 and sum(r.per_replica) == r.requests
        assert r.prefix_hit is not None and 0 < r.prefix_hit < 1
    assert res["hash"].affinity == 1.0
    out = capsys.readouterr().out
    assert "real, sticky least-loaded vs round-robin" in out and "stub only" in out
    assert "reset_prefix_cache failed" not in out


def test_saturation_on_an_embedded_engine_started_through_the_factory(capsys, tmp_path):
    FakeServer.made.clear()
    a = saturation.build_parser().parse_args(
        ["--embedded", "1", "--num-blocks", "100", "--max-num-seqs", "4", "--tasks", "3",
         "--trials", "2", "--turns", "2", "--log-dir", str(tmp_path)])
    rows = asyncio.run(saturation.amain(a, factory=FakeServer))
    assert [r.label for r in rows] == ["depth_first", "fifo", "breadth_first", "no admission"]
    assert all(r.requests == 3 * 2 * 2 for r in rows)
    [server] = FakeServer.made
    assert server.stub is None  # stopped at the end
    assert server.kw["extra_args"] == ["--num-gpu-blocks-override", "100", "--max-num-seqs", "4"]
    assert server.kw["log_path"] == tmp_path / "engine-0.log"
    out = capsys.readouterr().out
    assert "KV cache 2992 tokens" in out and "depth-first vs no admission" in out


def test_helpers():
    assert base_url("http://h:1") == "http://h:1/v1"
    assert base_url("http://h:1/v1/") == "http://h:1/v1"
    a = saturation.build_parser().parse_args(["--embedded", "1"])
    assert engine_extra_args(a) == []
    a = routing.build_parser().parse_args(["--embedded", "2", "--engine-arg=--enforce-eager",
                                           "--max-num-seqs", "8"])
    assert engine_extra_args(a) == ["--max-num-seqs", "8", "--enforce-eager"]
