"""Router against stub replicas: failover, rejoin, restarts, hung replicas, missing endpoints."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time

import pytest

from backends.errors import InfrastructureError
from backends.replica_health import HealthSettings
from backends.router import AllReplicasDown, ReplicaSpec, Router, RouterSettings
from backends.router_admission import AdmissionSettings
from backends.types import ChatMessage, Endpoint
from perf.stub_server import StubProcess, start_stub

MSGS = [ChatMessage(role="system", content="be brief " * 20), ChatMessage(role="user", content="hi")]
FAST = HealthSettings(probe_interval_s=0.1, probe_timeout_s=0.5, probe_failures=2,
                      restart_after_s=0.1, restart_backoff_s=0.2, all_down_wait_s=15.0)


def settings(**kw) -> RouterSettings:
    kw.setdefault("health", FAST)
    kw.setdefault("poll_interval_s", 0.1)
    return RouterSettings(**kw)


def port_of(stub: StubProcess) -> int:
    return int(stub.root.rsplit(":", 1)[1])


async def until(cond, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not cond():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.05)


async def test_kill_mid_stream_fails_over_then_rejoins() -> None:
    a, b = start_stub(), start_stub()
    try:
        async with Router([a.url, b.url], model="stub-model", settings=settings()) as router:
            slow = {"X-Stub-Sleep": "0.6"}
            calls = [router.chat(MSGS, session_id=f"s{i}", extra_headers=slow) for i in range(8)]
            running = [asyncio.create_task(c) for c in calls]
            await until(lambda: router.replicas[0].admission.in_flight >= 2)
            a.procs[0].kill()  # in-flight requests on replica 0 lose their connection
            results = await asyncio.gather(*running)  # no error surfaces
            assert all(r.message.content == "stub answer" for r in results)
            st = router.stats
            assert st.failovers >= 1 and st.taken_out == 1 and st.failed == 0
            assert not router.replicas[0].health.healthy
            # the episodes of replica 0 continue on replica 1
            assert all(router.policy.pinned(f"s{i}") == 1 for i in range(8))
            a.stop()
            a = start_stub(port=port_of(a))  # the replica comes back where it was
            await until(lambda: router.replicas[0].health.healthy)
            assert router.stats.rejoined == 1
            placed = [router.policy.place(f"new{i}", 100) for i in range(4)]
            assert 0 in placed  # new episodes go to the rejoined (idle) replica again
    finally:
        a.stop()
        b.stop()


async def test_all_down_raises_infrastructure_error() -> None:
    a = start_stub()
    a.stop()
    s = settings(health=HealthSettings(probe_interval_s=0.1, all_down_wait_s=0.5))
    async with Router([a.url], model="stub-model", settings=s) as router:
        with pytest.raises(AllReplicasDown) as info:
            await router.chat(MSGS, session_id="x")
    assert isinstance(info.value, InfrastructureError)


async def test_managed_replica_restarted_with_backoff() -> None:
    a = start_stub()
    port = port_of(a)
    a.stop()
    started: list[StubProcess] = []

    async def restart() -> None:
        if len(started) == 0 and not hasattr(restart, "failed"):
            restart.failed = True  # type: ignore[attr-defined]
            raise RuntimeError("first restart fails")
        started.append(await asyncio.to_thread(start_stub, port=port))

    spec = ReplicaSpec(Endpoint(base_url=a.url, model="stub-model"), restart)
    try:
        async with Router([spec], settings=settings()) as router:
            r = await router.chat(MSGS, session_id="x")  # waits for the restart, then answers
            assert r.message.content == "stub answer"
            assert router.stats.restarts == 2 and router.stats.restart_errors == 1
            assert router.stats.rejoined == 1 and any("first restart fails" in n
                                                      for n in router.notes)
    finally:
        for s in started:
            s.stop()


async def test_hung_replica_taken_out_and_request_moved() -> None:
    stubs = [start_stub(), start_stub()]
    pid = None
    try:
        urls = [x.url for x in stubs]
        async with Router(urls, model="stub-model", settings=settings()) as router:
            hung = router.policy.place("ep", 0)  # the episode's pin, before the replica hangs
            router.policy.finished(hung, "ep", 0)
            pid = stubs[hung].procs[0].pid
            os.kill(pid, signal.SIGSTOP)  # connections stay open, nothing answers
            r = await asyncio.wait_for(router.chat(MSGS, session_id="ep"), 10)
            assert r.message.content == "stub answer"  # moved once probes failed
            assert router.stats.taken_out == 1 and router.stats.failovers == 1
            assert router.policy.pinned("ep") == 1 - hung
            os.kill(pid, signal.SIGCONT)
            await until(lambda: router.replicas[hung].health.healthy)
    finally:
        if pid is not None:
            os.kill(pid, signal.SIGCONT)
        for x in stubs:
            x.stop()


async def test_server_without_models_and_metrics() -> None:
    with start_stub("--no-models", "--no-metrics", "--record") as a:
        async with Router([a.url], model="my-model", settings=settings()) as router:
            r = await router.chat(MSGS, session_id="sess-1")
            assert r.message.content == "stub answer"
            assert await router.list_models() == [{"id": "my-model", "object": "model"}]
            await until(lambda: router.replicas[0].admission.mode == "latency")
            notes = [n for n in router.notes if "has no GET /v1/models" in n]
            assert len(notes) == 1 and "'my-model'" in notes[0]  # said once
            assert any("no vLLM /metrics" in n for n in router.notes)
            rec = json.loads(await router.get_text("/stub/requests"))[-1]
            assert rec["headers"]["X-Session-ID"] == "sess-1"  # external routers can use it
            assert json.loads(rec["body"])["model"] == "my-model"


async def test_admission_starts_from_kv_bound_on_metrics() -> None:
    s = settings(admission=AdmissionSettings(kappa=2.0, tokens_per_episode=16384, increase=4))
    with start_stub("--kv-tokens", "65536", "--decode-ms", "1") as a:
        async with Router([a.url], settings=s) as router:
            await until(lambda: router.replicas[0].admission.mode == "metrics")
            assert router.replicas[0].admission.limit == 8  # 2 x 65536 / 16384
            await asyncio.gather(*(router.chat(MSGS, session_id=f"s{i}") for i in range(12)))
            assert router.replicas[0].admission.stats.peak_in_flight <= 12
            assert router.snapshot()["replicas"][0]["mode"] == "metrics"
