"""The engine a run starts on a small CPU (at most 2 cores) runs eagerly on every core unless
the config says otherwise (`[engine] eager`, `cpu_threads`); elsewhere vLLM's own choices stay.
The server is replaced by a recorder: these tests look at what it was asked to start."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from evaluator.config import load_config
from evaluator.run.managed import replica_kwargs
from evaluator.run.resources import Resources, start_engine


class Recorder:
    made: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, *args: Any, **kw: Any) -> None:
        Recorder.made.append(kw)
        self.base_url = "http://127.0.0.1:9/v1"

    async def astart(self) -> None:
        return None


@pytest.fixture
def recorder(monkeypatch):
    Recorder.made = []
    monkeypatch.setattr("backends.server.VLLMServer", Recorder)
    return Recorder.made


async def _started(tmp_path, monkeypatch, cores: int, engine: str = "") -> dict[str, Any]:
    monkeypatch.setattr("backends.server_launch.allowed_cpus", lambda: list(range(cores)))
    config, _ = load_config(text=f'[engine]\ndevice = "cpu"\n{engine}')
    await start_engine(config, tmp_path, Resources(fd_budget=64), judge=False)
    return Recorder.made[-1]


async def test_two_cores_eager_on_both(tmp_path, monkeypatch, recorder):
    kw = await _started(tmp_path, monkeypatch, 2)
    assert kw["eager"] is True and kw["cpu_threads"] == 2 and kw["device"] == "cpu"


async def test_more_cores_keep_vllms_choices(tmp_path, monkeypatch, recorder):
    kw = await _started(tmp_path, monkeypatch, 8)
    assert kw["eager"] is False and kw["cpu_threads"] is None


async def test_what_the_config_says_is_kept(tmp_path, monkeypatch, recorder):
    kw = await _started(tmp_path, monkeypatch, 2, "eager = false\ncpu_threads = 0\n")
    assert kw["eager"] is False and kw["cpu_threads"] is None   # 0 = vLLM's binding
    kw = await _started(tmp_path, monkeypatch, 8, "eager = true\ncpu_threads = 3\n")
    assert kw["eager"] is True and kw["cpu_threads"] == 3


def test_replicas_of_at_most_two_cores_run_eagerly(tmp_path, monkeypatch):
    auto, _ = load_config(text="[engine]\nreplicas = 4\n")
    monkeypatch.setattr("backends.server_launch.allowed_cpus", lambda: list(range(8)))
    assert replica_kwargs(auto.engine, 0, "cpu", tmp_path)["eager"] is True     # 2 cores each
    assert "eager" not in replica_kwargs(auto.engine, 0, "gpu", tmp_path)
    monkeypatch.setattr("backends.server_launch.allowed_cpus", lambda: list(range(16)))
    assert "eager" not in replica_kwargs(auto.engine, 0, "cpu", tmp_path)      # 4 each
    off, _ = load_config(text="[engine]\nreplicas = 4\neager = false\n")
    monkeypatch.setattr("backends.server_launch.allowed_cpus", lambda: list(range(8)))
    assert "eager" not in replica_kwargs(off.engine, 0, "cpu", tmp_path)
