"""The tool runner's worker processes: same answers as inline, calls spread over the workers,
a dead worker fails its calls as infrastructure errors and is replaced, close stops them."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import threading
from pathlib import Path
from types import SimpleNamespace

import msgspec
import pytest

from backends.errors import InfrastructureError
from evaluator.benchmarks.tripbench.runner import ToolRunner, ToolWorkerLost
from evaluator.benchmarks.tripbench.tool_worker import HEADER, frame, serve
from evaluator.benchmarks.tripbench.tools import execute
from evaluator.benchmarks.tripbench.world import open_world

CALLS = [
    ("get_city_center_coords", '{"city_name": "Hangzhou"}'),
    ("search_restaurants", '{"city": "Shanghai", "sort_key": "distance"}'),
    ("search_hotels", '{"city": "Beijing"}'),
    ("get_hotel_coordinates", '{"hotel_id": "H0"}'),            # an error answer
    ("no_such_tool", "{}"),
    ("search_attractions", "{not json"),
]


@pytest.mark.parametrize("output", ["text", "json"])
async def test_processes_answer_as_inline(world_path: Path, output: str) -> None:
    runner = ToolRunner(2, "processes")
    with open_world(world_path) as world:
        try:
            got = await asyncio.gather(*(runner.call(world, name, args, output)
                                         for name, args in CALLS * 5))
            want = [execute(world, name, args, output) for name, args in CALLS * 5]
            assert [result for result, _ in got] == want
            assert all(seconds >= 0 for _, seconds in got)
            pids = {link.proc.pid for link in runner.impl.links}
            assert len(pids) == 2 and os.getpid() not in pids
        finally:
            runner.close()
    assert runner.impl.links == []


async def test_calls_spread_over_the_workers(world_path: Path) -> None:
    runner = ToolRunner(3, "processes")
    with open_world(world_path) as world:
        try:
            await runner.call(world, *CALLS[0], "text")          # start them
            links = list(runner.impl.links)
            calls = [asyncio.ensure_future(runner.call(world, *CALLS[1], "json"))
                     for _ in range(9)]
            await asyncio.sleep(0)
            assert sorted(len(link.pending) for link in links) == [3, 3, 3]
            assert all(json.loads(r.content)["total"] > 0 for r, _ in await asyncio.gather(*calls))
            assert all(not link.pending for link in links)
        finally:
            runner.close()


async def test_a_dead_worker_fails_its_calls_as_infrastructure_and_is_replaced(
        world_path: Path) -> None:
    runner = ToolRunner(1, "processes")
    with open_world(world_path) as world:
        try:
            await runner.call(world, *CALLS[0], "text")
            dead = runner.impl.links[0].proc
            os.kill(dead.pid, signal.SIGKILL)
            dead.wait()
            with pytest.raises(ToolWorkerLost, match=f"pid {dead.pid} ended") as info:
                await runner.call(world, *CALLS[0], "text")
            assert isinstance(info.value, InfrastructureError)   # retried, not the agent's
            result, _ = await runner.call(world, *CALLS[0], "text")
            assert result.content.startswith("Hangzhou: ")
            assert runner.impl.links[0].proc.pid != dead.pid
        finally:
            runner.close()


async def test_a_tool_that_raises_is_reported_to_the_caller(tmp_path: Path) -> None:
    runner = ToolRunner(1, "processes")
    missing = SimpleNamespace(path=tmp_path / "missing.sqlite")
    try:
        with pytest.raises(RuntimeError, match="failed in its worker: WorldError: no world"):
            await runner.call(missing, *CALLS[0], "text")  # type: ignore[arg-type]
    finally:
        runner.close()


async def test_close_stops_the_workers(world_path: Path) -> None:
    runner = ToolRunner(2, "processes")
    with open_world(world_path) as world:
        await runner.call(world, *CALLS[0], "text")
        procs = [link.proc for link in runner.impl.links]
        runner.close()
    assert all(proc.poll() is not None for proc in procs)


def test_worker_answers_frames_in_order_and_exits_at_eof(world_path: Path) -> None:
    ours, theirs = socket.socketpair()
    thread = threading.Thread(target=serve, args=(theirs,))
    thread.start()
    encode, decode = msgspec.msgpack.Encoder().encode, msgspec.msgpack.Decoder().decode
    for i, (name, args) in enumerate(CALLS[:3]):
        ours.sendall(frame(encode((i, str(world_path), name, args, "text"))))
    reader = ours.makefile("rb")
    answers = []
    for _ in range(3):
        size = int.from_bytes(reader.read(HEADER), "little")
        answers.append(decode(reader.read(size)))
    assert [a[0] for a in answers] == [0, 1, 2]
    assert answers[0][1:3] == ["Hangzhou: longitude: 120.1551, latitude: 30.2741", None]
    ours.shutdown(socket.SHUT_WR)
    thread.join(timeout=60)
    assert not thread.is_alive()
    reader.close()
    ours.close()
    theirs.close()


def test_runner_kinds() -> None:
    with pytest.raises(ValueError, match="processes, threads"):
        ToolRunner(1, "fibres")
    assert ToolRunner(0, "threads").workers == 1


async def test_a_failed_start_is_tried_again(world_path: Path, monkeypatch) -> None:
    import subprocess

    real = subprocess.Popen
    starts = []

    def second_fails(*args, **kwargs):
        starts.append(1)
        if len(starts) == 2:
            raise OSError(24, "Too many open files")
        return real(*args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", second_fails)
    runner = ToolRunner(2, "processes")
    with open_world(world_path) as world:
        try:
            with pytest.raises(OSError, match="Too many open files"):
                await runner.call(world, *CALLS[0], "text")
            assert len(runner.impl.links) == 1             # the first worker is kept
            result, _ = await runner.call(world, *CALLS[0], "text")
            assert result.content.startswith("Hangzhou: ") and len(runner.impl.links) == 2
        finally:
            runner.close()
