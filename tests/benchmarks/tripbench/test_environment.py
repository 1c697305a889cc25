"""The environment factory and the episode sandbox."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from bench_data.types import Task
from evaluator.benchmarks.base import BenchmarkError, EnvironmentRequest
from evaluator.benchmarks.tripbench.environment import TripEnvironmentFactory, TripSandbox
from evaluator.benchmarks.tripbench.tools import TOOL_NAMES


def _task(tid: str, source: str = "", **extra) -> Task:
    return Task(benchmark="tripbench", subset="easy", task_id=tid, source=source, extra=extra)


def _request(tmp: Path, tasks: list[Task]) -> EnvironmentRequest:
    return EnvironmentRequest(config=SimpleNamespace(), run_dir=tmp,  # type: ignore[arg-type]
                              taskset=SimpleNamespace(tasks=tasks))  # type: ignore[arg-type]


async def test_world_named_by_the_task_relative_to_its_file(tmp_path: Path,
                                                            world_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "worlds").mkdir()
    (data / "worlds" / "w.sqlite").symlink_to(world_path)
    task = _task("t1", f"{data / 'tasks.jsonl'}:3", world="worlds/w.sqlite")
    factory = TripEnvironmentFactory()
    assert factory.world_path(task) == (data / "worlds" / "w.sqlite").resolve()
    request = _request(tmp_path, [task, _task("t2", f"{data / 'tasks.jsonl'}:4",
                                              world="worlds/w.sqlite")])
    factory.check(request)
    env = await factory.open(request, None, "")
    sandbox = env.episode(task)
    assert env.episode(request.taskset.tasks[1]).world is sandbox.world   # one connection
    assert [t["function"]["name"] for t in sandbox.tools] == list(TOOL_NAMES)
    out = await sandbox.call("get_city_center_coords", '{"city_name": "Hangzhou"}',
                             task_time="2025-10-01 09:00")
    assert out.source == "live" and not out.is_error and out.error_category is None
    assert out.content == "Hangzhou: longitude: 120.1551, latitude: 30.2741"   # the paper's
    bad = await sandbox.call("get_hotel_coordinates", '{"hotel_id": "H0"}', task_time="")
    assert bad.is_error and bad.error_category == "not_found"
    assert bad.content == "Error: no hotel with id 'H0'"
    described = env.describe()
    assert described["simulated"] is False and len(described["tools"]) == 18
    assert (described["tool_output"], described["tool_runner"],
            described["tool_workers"]) == ("text", "processes", 4)
    assert next(iter(described["worlds"].values()))["size"] == "small"
    env.close()
    assert env.worlds == {}


async def test_world_given_to_the_factory(tmp_path: Path, world_path: Path) -> None:
    factory = TripEnvironmentFactory(world=world_path)
    task = _task("t1")                                    # no world of its own, no source
    factory.check(_request(tmp_path, [task]))
    env = await factory.open(_request(tmp_path, [task]), None, "")
    assert isinstance(env.episode(task), TripSandbox)
    env.close()


def test_check_fails_fast(tmp_path: Path) -> None:
    factory = TripEnvironmentFactory()
    with pytest.raises(BenchmarkError, match="no world database"):
        factory.check(_request(tmp_path, [_task("t1")]))
    with pytest.raises(BenchmarkError, match="no source file"):
        factory.check(_request(tmp_path, [_task("t1", world="w.sqlite")]))
    with pytest.raises(BenchmarkError, match="t1.*no world database at"):
        factory.check(_request(tmp_path, [_task("t1", f"{tmp_path}/x.jsonl:1",
                                                world="w.sqlite")]))
    foreign = tmp_path / "foreign.sqlite"
    import sqlite3
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    conn.execute("INSERT INTO meta VALUES ('generator', 'someone else')")
    conn.commit()
    conn.close()
    with pytest.raises(BenchmarkError, match="not written by"):
        TripEnvironmentFactory(world=foreign).check(_request(tmp_path, [_task("t1")]))
    old = tmp_path / "old.sqlite"
    conn = sqlite3.connect(old)
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    conn.executemany("INSERT INTO meta VALUES (?, ?)",
                     [("generator", "agentsweep.tripbench.world"), ("version", "1")])
    conn.commit()
    conn.close()
    with pytest.raises(BenchmarkError, match="version 1 world.*generate the task set again"):
        TripEnvironmentFactory(world=old).check(_request(tmp_path, [_task("t1")]))


async def test_calls_run_off_the_event_loop_and_json_on_request(tmp_path: Path,
                                                                world_path: Path) -> None:
    """The runner's threads answer when asked for (each with its own connection), the loop
    keeps running meanwhile, and `[options] tool_output = "json"` gives JSON answers."""
    import asyncio
    import threading

    config = SimpleNamespace(options={"tool_output": "json", "tool_runner": "threads"})
    factory = TripEnvironmentFactory(world=world_path, threads=2)
    request = EnvironmentRequest(config=config, run_dir=tmp_path,  # type: ignore[arg-type]
                                 taskset=SimpleNamespace(tasks=[_task("t1")]))  # type: ignore
    factory.check(request)
    env = await factory.open(request, None, "")
    sandbox = env.episode(_task("t1"))
    seen: set[str] = set()
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    original = env.runner.impl._run

    def spy(*args):
        seen.add(threading.current_thread().name)
        return original(*args)

    env.runner.impl._run = spy  # type: ignore[method-assign,union-attr]
    tick = asyncio.create_task(ticker())
    outs = await asyncio.gather(*(sandbox.call("search_restaurants",
                                               '{"city": "Shanghai", "sort_key": "distance"}')
                                  for _ in range(20)))
    tick.cancel()
    assert all(json.loads(o.content).get("total", 0) > 0 for o in outs), [o.content for o in outs]
    assert seen and all(name.startswith("tripbench-tool") for name in seen)
    assert ticks > 0
    assert len(env.runner.impl._opened) == len(seen)          # a connection per worker thread
    env.close()
    inline = await factory.open(EnvironmentRequest(
        config=SimpleNamespace(options={"tool_runner": "inline"}),  # type: ignore[arg-type]
        run_dir=tmp_path, taskset=SimpleNamespace(tasks=[_task("t1")])), None, "")  # type: ignore
    assert inline.runner is None and inline.describe()["tool_workers"] == 0
    out = await inline.episode(_task("t1")).call("get_city_center_coords",
                                                 '{"city_name": "Suzhou"}')
    assert out.content.startswith("Suzhou: ")
    inline.close()
    with pytest.raises(BenchmarkError, match="tool_output"):
        factory.check(EnvironmentRequest(
            config=SimpleNamespace(options={"tool_output": "xml"}),  # type: ignore[arg-type]
            run_dir=tmp_path, taskset=SimpleNamespace(tasks=[_task("t1")])))  # type: ignore
