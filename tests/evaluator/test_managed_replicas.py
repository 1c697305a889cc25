"""Managed replicas (`[engine] replicas`, `--replicas N --gpus-per-replica G`): N servers from
a factory (here stub servers with the simulated engine, no real engine), one router over them
shared by the embedded roles, a replica killed mid-run restarted through its callback; the
GPU sets and CPU shares each replica gets; replica weights and a routed judge."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace
from typing import ClassVar

import pytest

from backends.types import Endpoint
from evaluator.run.managed import replica_kwargs
from evaluator.run.results import EPISODES_FILE, iter_failures, iter_records
from perf.stub_process import free_port

ENGINE = ["--mode", "tool", "--tool-turns", "2", "--kv-tokens", "40000", "--max-running", "8",
          "--prefill-us", "20", "--decode-ms", "2.0", "--completion-tokens", "24"]


class FakeServer:
    """What `start_replicas` needs of a VLLMServer, serving a stub."""

    made: ClassVar[list[FakeServer]] = []

    def __init__(self, model, **kw):
        self.kw = kw
        self.port = kw.get("port") or free_port()
        self.stub = None
        self.starts = 0
        self.attached = False
        self.device = kw["device"]
        self.seeds_safe = True
        self.model = "stub-model"
        FakeServer.made.append(self)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def endpoint(self) -> Endpoint:
        return Endpoint(base_url=self.base_url, model=self.model)

    async def astart(self):
        from perf.stub_server import start_stub

        self.starts += 1
        self.stub = await asyncio.to_thread(start_stub, *ENGINE, port=self.port)
        return self

    async def astop(self):
        if self.stub is not None:
            stub, self.stub = self.stub, None
            await asyncio.to_thread(stub.stop)


def _engine(**kw):
    base = {"replicas": 2, "gpus_per_replica": 0, "tensor_parallel_size": 1,
            "max_model_len": 4096, "cpu_kv_cache_gb": 2.0, "extra_args": [],
            "startup_timeout_s": 60.0}
    return SimpleNamespace(**{**base, **kw})


def test_replicas_get_disjoint_gpu_sets_or_a_share_of_the_cores(tmp_path, monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    e = _engine(replicas=3, gpus_per_replica=2)
    kws = [replica_kwargs(e, i, "gpu", tmp_path) for i in range(3)]
    assert [k["gpus"] for k in kws] == ["0,1", "2,3", "4,5"]
    assert {k["tensor_parallel_size"] for k in kws} == {2}
    assert kws[1]["log_path"] == tmp_path / "engine-1.log"
    assert replica_kwargs(_engine(tensor_parallel_size=2), 1, "gpu", tmp_path)["gpus"] == "2,3"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,5,6,7")  # the visible ones, in order
    assert [replica_kwargs(_engine(gpus_per_replica=2), i, "gpu", tmp_path)["gpus"]
            for i in range(2)] == ["4,5", "6,7"]
    monkeypatch.setattr("backends.server_launch.allowed_cpus", lambda: list(range(16)))
    cpu = [replica_kwargs(_engine(replicas=4), i, "cpu", tmp_path) for i in range(4)]
    assert {k["cpu_threads"] for k in cpu} == {4} and "gpus" not in cpu[0]
    assert [k["cpu_ids"] for k in cpu] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11],
                                           [12, 13, 14, 15]]   # each its own cores
    monkeypatch.setattr("backends.server_launch.allowed_cpus", lambda: [2, 3])
    assert [replica_kwargs(_engine(replicas=3), i, "cpu", tmp_path)["cpu_ids"]
            for i in range(3)] == [[2], [3], [2]]             # more replicas than cores: shared
    assert replica_kwargs(_engine(replicas=2, eager=True), 0, "cpu", tmp_path)["eager"] is True
    assert "eager" not in replica_kwargs(_engine(replicas=2), 0, "cpu", tmp_path)


def test_run_over_managed_replicas_restarts_a_killed_one(tmp_path):
    from evaluator.run.sweep import RunRequest, run_sweep

    FakeServer.made.clear()
    cfg = tmp_path / "run.toml"
    cfg.write_text('[engine]\ndevice = "cpu"\n'
                   '[agent.routing.health]\nprobe_interval_s = 0.1\nrestart_after_s = 0.2\n'
                   'restart_backoff_s = 0.5\nall_down_wait_s = 20.0\n')
    run_dir = tmp_path / "m"
    request = RunRequest(config_path=str(cfg), progress="off", server_factory=FakeServer,
                         sample_interval_s=0.2, overrides=[
                             ("engine.replicas", 2, "--replicas"), ("out", str(tmp_path), ""),
                             ("name", "m", ""), ("data.limit", 3, ""), ("trials", 3, "")])

    async def main():
        sweep = asyncio.create_task(run_sweep(request))
        while not (run_dir / EPISODES_FILE).exists() or \
                len((run_dir / EPISODES_FILE).read_text().splitlines()) < 2:
            await asyncio.sleep(0.02)
            assert not sweep.done(), sweep.result()
        victim = FakeServer.made[1]
        await asyncio.to_thread(victim.stub.stop)  # a crash, not astop()
        return await sweep

    result = asyncio.run(main())
    assert result.exit_code == 0, result.summary
    assert len(FakeServer.made) == 2
    assert len({s.port for s in FakeServer.made}) == 2
    from backends.server_launch import allowed_cpus

    assert {s.kw["cpu_threads"] for s in FakeServer.made} == {max(1, len(allowed_cpus()) // 2)}
    if len(allowed_cpus()) >= 2:
        assert not set(FakeServer.made[0].kw["cpu_ids"]) & set(FakeServer.made[1].kw["cpu_ids"])
    assert FakeServer.made[1].starts >= 2  # restarted by the router's health loop
    assert all(s.stub is None for s in FakeServer.made)  # stopped at the end
    assert list(iter_failures(run_dir)) == []
    keys = [r.unit.key for r in iter_records(run_dir)]
    assert len(keys) == len(set(keys))
    manifest = json.loads((run_dir / "manifest.json").read_text())
    agent = next(r for r in manifest["roles"] if r["role"] == "agent")
    assert agent["replicas"] == [s.base_url for s in FakeServer.made]
    user = next(r for r in manifest["roles"] if r["role"] == "user")
    assert user["replicas"] == agent["replicas"]  # one router shared by the embedded roles
    end = manifest["ends"][-1]  # the router's state at the end of the run
    snap = end["routers"]["agent,user,tool_simulator"]
    assert snap["router"]["restarts"] >= 1 and snap["router"]["failed"] == 0
    assert [r["url"] for r in snap["replicas"]] == agent["replicas"]
    assert any("out" in n for n in snap["notes"]) and end["episodes"] == len(keys)
    rows = (run_dir / "timeseries.jsonl").read_text().splitlines()
    last = json.loads(rows[-1])
    shared = [r for r in last["replicas"] if r["role"].startswith("agent,user")]
    assert len(shared) == 2 and sum(r["requests"] for r in shared) > 0


def test_replicas_config_is_validated(tmp_path):
    from evaluator.config import load_config

    cfg = tmp_path / "bad.toml"
    cfg.write_text('[engine]\nreplicas = 2\nurl = "http://127.0.0.1:1/v1"\n')
    with pytest.raises(Exception, match="not with `url`"):
        load_config(cfg)
    cfg.write_text("[engine]\nreplicas = 0\n")
    with pytest.raises(Exception, match="replicas: at least 1"):
        load_config(cfg)


def test_progress_line_shows_replicas_up_failovers_and_restarts():
    from backends.router import Router
    from evaluator.run.progress import routers_part

    r = Router(["http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"], model="m")
    r.replicas[1].health.healthy = False
    r.stats.failovers, r.stats.restarts = 3, 1
    assert routers_part({"agent,user": r}) == "replicas agent,user 1/2 up, 3 failovers, 1 restarts"
    assert routers_part({}) == ""


def test_router_notes_are_shown_once_each():
    from backends.router import Router
    from evaluator.run.progress import new_notes

    r = Router(["http://127.0.0.1:9/v1"], model="m")
    seen: dict[str, int] = {}
    r.note("a", "replica X out: connection failure")
    assert new_notes({"agent": r}, seen) == ["router [agent]: replica X out: connection failure"]
    assert new_notes({"agent": r}, seen) == []
    r.note("b", "replica X rejoined")
    assert new_notes({"agent": r}, seen) == ["router [agent]: replica X rejoined"]
