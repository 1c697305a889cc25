"""The lease table of `agentsweep sweep --ray` (`CellQueue`) and a cell runner's loop on
their own, without a Ray cluster (fake actor calls): leases, heartbeats, a late runner, a lease
that lapses while the sweep stops, a stopped sweep's interrupted cells, and a signalled runner
that reports its cell and stops. The sweep on a Ray cluster: test_sweep_ray.py and
test_sweep_ray_nodes.py."""

from __future__ import annotations

import os
import time

import pytest

from evaluator.sweep.leases import LOST, OK, STOP
from evaluator.sweep.ray_exec import CellQueue
from tests.evaluator.test_sweep import _grid


def test_the_lease_table():
    q = CellQueue(["a", "b"], lease_timeout_s=0.05)
    assert q.lease("r1") == "a" and q.lease("r2") == "b" and q.lease("r3") is None
    assert q.heartbeat("r1", "a") == OK and q.heartbeat("r2", "a") == LOST
    assert q.release("r2") == ["b"]                  # r2 died: b waits again, first in line
    assert q.lease("r3") == "b"
    q.done("r1", "a", 0)
    q.done("r2", "b", 0)                             # r2 no longer holds b: ignored
    assert q.status()["codes"] == {"a": 0} and q.status()["leased"] == {"b": "r3"}
    time.sleep(0.1)
    assert q.expire() == ["b"] and q.lease("r4") == "b"
    q.done("r4", "b", 130, owed=2)   # its runner was signalled: recorded, and back in line
    assert q.status()["pending"] == ["b"] and q.status()["codes"]["b"] == 130
    assert q.status()["owed"] == {"a": 0, "b": 2}
    assert q.lease("r5") == "b"
    q.done("r5", "b", 0)             # resumed and finished by the next runner
    assert q.status()["codes"] == {"a": 0, "b": 0} and q.status()["owed"]["b"] == 0


def test_a_late_runner_keeps_its_cell_while_nobody_took_it():
    """A runner starved past its lease (a loaded machine) is late, not gone: while its cell
    waits in line, its heartbeat takes the lease back and its report counts; once another
    runner took the cell, it hears LOST and its report is ignored."""
    q = CellQueue(["a", "b"], lease_timeout_s=0.005)
    assert q.lease("r1") == "a"
    time.sleep(0.02)
    assert q.expire() == ["a"] and q.status()["pending"] == ["a", "b"]
    assert q.heartbeat("r1", "a") == OK                       # nobody took it: r1 keeps it
    assert q.status()["leased"] == {"a": "r1"} and q.status()["pending"] == ["b"]
    time.sleep(0.02)
    assert q.expire() == ["a"]
    q.done("r1", "a", 0)                                      # lapsed, untaken: the report counts
    assert q.status()["codes"] == {"a": 0} and q.status()["pending"] == ["b"]
    assert q.lease("r1") == "b"
    time.sleep(0.02)
    assert q.expire() == ["b"] and q.lease("r2") == "b"       # taken by r2 meanwhile
    assert q.heartbeat("r1", "b") == LOST
    q.done("r1", "b", 130)                                    # ignored: r2 reports b
    assert q.status()["codes"] == {"a": 0} and q.status()["leased"] == {"b": "r2"}


def test_a_lease_that_lapses_while_the_sweep_stops_is_interrupted_not_waiting():
    """Stopping a sweep on a loaded machine: every heartbeat answers STOP (a starved runner
    whose lease lapsed stops too), a lapsed lease is recorded as interrupted (no cell is left
    without an exit code), and the late runner's own report still counts."""
    q = CellQueue(["a", "b", "c"], lease_timeout_s=0.005)
    assert q.lease("r1") == "a" and q.lease("r2") == "b"
    q.stop()
    time.sleep(0.02)
    assert sorted(q.expire()) == ["a", "b"]
    assert q.heartbeat("r1", "a") == STOP and q.heartbeat("r9", "zz") == STOP
    st = q.status()
    assert st["codes"] == {"a": 130, "b": 130} and st["pending"] == ["c"] and st["leased"] == {}
    q.done("r1", "a", 0)                                      # it finished before it heard
    assert q.status()["codes"] == {"a": 0, "b": 130}
    assert q.stopped() == [] and q.lease("r3") is None


def test_a_stopped_sweep_records_every_running_cell_as_interrupted():
    q = CellQueue(["a", "b", "c", "d"], lease_timeout_s=60)
    assert [q.lease(r) for r in ("r1", "r2", "r3")] == ["a", "b", "c"]
    q.stop()
    assert q.heartbeat("r1", "a") == STOP and q.lease("r4") is None  # nothing more leased
    q.done("r1", "a", 130)                           # stopped its cell and reported
    assert q.release("r2") == ["b"]                  # died while stopping: nobody resumes b
    assert q.stopped() == ["c"]                      # r3 never reported
    st = q.status()
    assert st["codes"] == {"a": 130, "b": 130, "c": 130} and st["pending"] == ["d"]
    assert st["leased"] == {}


class _Remote:
    """An actor method as a runner calls it: `await queue.method.remote(...)`."""

    def __init__(self, fn) -> None:
        self.fn = fn

    def remote(self, *args):
        async def call():
            return self.fn(*args)
        return call()


class _Queue:
    """The lease table behind fake actor calls; `beats`: what happens at a heartbeat (OK:
    nothing, LOST: another runner takes the lease over, STOP: the sweep stops)."""

    def __init__(self, table: CellQueue, beats: str = OK) -> None:
        self.table, self.calls = table, []
        for name in ("lease", "done", "give_back"):
            setattr(self, name, _Remote(self._log(name, getattr(table, name))))

        def heartbeat(runner: str, cell: str) -> str:
            if beats in (LOST, "late"):
                table.release(runner)
                table.lease("runner-2")
            elif beats == STOP:
                table.stop()
            return table.heartbeat(runner, cell)

        self.heartbeat = _Remote(heartbeat)

    def _log(self, name, fn):
        def call(*args):
            self.calls.append((name, *args))
            return fn(*args)
        return call


@pytest.mark.parametrize("beats", [OK, LOST, STOP, "late"])
def test_a_signalled_runner_reports_its_cell_and_stops(tmp_path, monkeypatch, beats):
    """A cell that ends with 130 although the queue did not stop it: the runner itself was
    signalled (SIGTERM or Ctrl-C). It reports the cell (exit 130, recorded in sweep.json,
    the cell waits for the next runner) and leases nothing more. Stopped by the queue (lease
    lost, sweep stopping) it goes on leasing: the queue decides. "late": the runner was
    starved past its lease (its heartbeat answered LOST) and then signalled: a signal still
    stops it."""
    import asyncio

    from evaluator.sweep import local, ray_exec
    from evaluator.sweep.grid import expand, load_sweep

    monkeypatch.setattr(ray_exec, "HEARTBEAT_S", 0.01)
    ran = []

    class Executor:
        def __init__(self, *a, **kw) -> None:
            pass

        async def run(self, cell, stop=None):
            ran.append(cell.name)
            if beats != OK:  # runs until the queue's answer stops it
                await asyncio.wait_for(stop.wait(), 30)
            return local.CellRun(130, 1, signalled=beats in (OK, "late"))

        async def aclose(self) -> None:
            pass

    monkeypatch.setattr(local, "CellExecutor", Executor)
    sweep = load_sweep(_grid(tmp_path / "g.toml", tmp_path / "out", "http://127.0.0.1:9/v1",
                             "http://127.0.0.1:9/v1"))
    cells = expand(sweep)
    first, second = cells[0].name, cells[1].name
    table = CellQueue([first, second], lease_timeout_s=60)
    queue = _Queue(table, beats)
    runner = ray_exec.CellRunner(sweep, cells, {}, "runner-1", "off", os.getcwd())
    done = asyncio.run(ray_exec._runner_loop(runner, queue))
    assert ("done", "runner-1", first, 130, 1) in queue.calls   # every cell run is reported
    st = table.status()
    if beats == OK:   # signalled: it stops after that cell, which waits for the next runner
        assert done == [(first, 130)] and ran == [first]
        assert st["codes"] == {first: 130} and st["owed"] == {first: 1}
        assert st["pending"] == [first, second] and st["leased"] == {}
    elif beats == LOST:   # the lease went to runner-2 (its report is ignored); it goes on
        assert ran == [first, second] and done == [(first, 130), (second, 130)]
        assert st["codes"] == {} and st["leased"] == {first: "runner-2", second: "runner-2"}
    elif beats == "late":  # lease lost, then signalled: its report is ignored and it stops
        assert ran == [first] and done == [(first, 130)]
        assert st["codes"] == {} and st["leased"] == {first: "runner-2"}
    else:                 # the sweep stops: the cell is recorded as interrupted, no new lease
        assert ran == [first] and done == [(first, 130)]
        assert st["codes"] == {first: 130} and st["pending"] == [second]
