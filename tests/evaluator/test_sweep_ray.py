"""`agentsweep sweep --ray local`: the grid of test_sweep on a private one-node Ray cluster
(stub servers, the toy benchmark): the same records as the local executor, and a cell runner
sent SIGTERM mid-cell stops, reports its cell, and the next runner resumes it without losing or
repeating a unit; the lease table and a runner's loop on their own. The driver stopped with
SIGTERM and a node lost mid-sweep: test_sweep_ray_nodes.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from evaluator.sweep.leases import LOST, OK, STOP
from evaluator.sweep.ray_exec import CellQueue
from tests.evaluator.test_sweep import REPO, _comparable, _grid, _records

CELLS = {"cold__all": 6, "cold__first2": 4, "warm__all": 6, "warm__first2": 4}


class Sweep:
    """`agentsweep sweep ARGS` in the background, its output in files (a pipe nobody reads
    while Ray forwards its workers' logs could fill up and block the driver)."""

    def __init__(self, *args: str, home: Path, env: dict[str, str] | None = None) -> None:
        env = dict(os.environ, AGENTSWEEP_HOME=str(home), RAY_AUTH_MODE="disabled", **(env or {}))
        env.pop("AGENTSWEEP_PLUGINS", None)
        env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
        n = len(list(home.glob("sweep-*.out")))
        self.out, self.err = home / f"sweep-{n}.out", home / f"sweep-{n}.err"
        with self.out.open("w") as out, self.err.open("w") as err:
            self.proc = subprocess.Popen([sys.executable, "-m", "evaluator.cli", "sweep", *args],
                                         cwd=REPO, env=env, stdout=out, stderr=err, text=True)

    def poll(self) -> int | None:
        return self.proc.poll()

    def kill(self) -> None:
        self.proc.kill()

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        self.proc.wait(timeout=timeout)
        return self.out.read_text(), self.err.read_text()


def _sweep(*args: str, home: Path, env: dict[str, str] | None = None) -> Sweep:
    return Sweep(*args, home=home, env=env)


def _runner_pids() -> list[int]:
    import psutil

    pids = []
    for p in psutil.process_iter(["cmdline"]):
        if any("CellRunner" in part for part in (p.info["cmdline"] or [])):
            pids.append(p.pid)
    return pids


def _lines(run_dir: Path) -> int:
    """Records in a run directory's episodes file."""
    try:
        return (run_dir / "episodes.jsonl").read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def _cell_of(pid: int, root: Path) -> str | None:
    """The cell whose run directory a runner process holds (its flock), if any."""
    import psutil

    try:
        for f in psutil.Process(pid).open_files():
            path = Path(f.path)
            if path.name == ".sweep.lock" and path.parent.parent == root:
                return path.parent.name
    except psutil.Error:
        return None
    return None


def _episode_lines(root: Path) -> int:
    n = 0
    for f in root.glob("*/episodes.jsonl"):
        try:
            n += f.read_bytes().count(b"\n")
        except FileNotFoundError:
            pass
    return n


def _wait_for_episodes(p: Sweep, root: Path, lines: int) -> None:
    """Until the cells' episode files hold `lines` records in all. A bound on a stuck
    cluster, not a timing assertion: a loaded 2-core CI machine starts Ray slowly, so it is
    generous, and the sweep's own output is shown if hit."""
    deadline = time.monotonic() + 600
    while _episode_lines(root) < lines:
        if p.poll() is not None or time.monotonic() > deadline:
            p.kill()
            _, err = p.communicate()
            pytest.fail(f"the cells never held {lines} episodes (exit {p.returncode}):\n"
                        f"{err[-4000:]}")
        time.sleep(0.02)


def _gone(pids_of, timeout_s: float = 60) -> bool:
    deadline = time.monotonic() + timeout_s
    while pids_of():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


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


@pytest.mark.slow
def test_a_grid_on_ray_local_equals_the_local_run_and_survives_a_signalled_runner(tmp_path):
    """`--ray local` starts a cluster of its own (a RAY_ADDRESS naming a dead cluster is not
    looked at); a runner sent SIGTERM mid-cell stops that cell (exit 130, recorded), leases
    nothing more, and the next runner resumes the cell; the records equal the local run's."""
    pytest.importorskip("ray")
    from perf.stub_server import free_port, start_stub

    with start_stub("--mode", "text", "--sleep", "0.3") as agent, \
            start_stub("--mode", "schema") as judge:
        # one episode at a time (0.3 s each): the signal below lands inside a cell, not after
        # it (with all its episodes in flight at once a cell ended within milliseconds of its
        # second record, and the test raced the runner to it)
        local = _grid(tmp_path / "local.toml", tmp_path / "local", agent.url, judge.url,
                      concurrency=1)
        p = _sweep(str(local), home=tmp_path)
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        grid = _grid(tmp_path / "ray.toml", tmp_path / "ray", agent.url, judge.url,
                     concurrency=1)
        root = tmp_path / "ray" / "g"
        p = _sweep(str(grid), "--ray", "local", "--lease-timeout", "30", home=tmp_path,
                   env={"RAY_ADDRESS": f"127.0.0.1:{free_port()}"})
        signalled = None
        deadline = time.monotonic() + 600
        while signalled is None:   # a runner inside a cell that has 2+ units left
            assert p.poll() is None, p.communicate()[1][-4000:]
            assert time.monotonic() < deadline, "no runner ran a cell"
            for pid in _runner_pids():
                cell = _cell_of(pid, root)
                if cell and 1 <= _lines(root / cell) <= CELLS[cell] - 2:
                    os.kill(pid, signal.SIGTERM)
                    signalled = (pid, cell)
            time.sleep(0.02)
        assert _gone(lambda: [q for q in _runner_pids() if q == signalled[0]]), \
            "the signalled runner kept going"
        out, err = p.communicate(timeout=600)
    assert p.returncode == 0, err
    pid, cell = signalled
    assert f"runner-1: stopped by a signal; cell {cell} exit 130" in err, err
    assert f"cell {cell}: runner-1 was stopped (exit 130); the cell is resumed" in out, out
    assert "runner-1 failed" not in err, err           # it stopped; it did not crash
    assert "\x1b[" not in err                          # no colour codes in a log file
    for name, units in CELLS.items():
        ray_records = _records(root / name)
        counts = Counter((r["unit"]["task"], r["unit"]["trial"]) for r in ray_records)
        assert len(counts) == units and set(counts.values()) == {1}, name
        local_records = _records(tmp_path / "local" / "g" / name)
        assert sorted(map(_comparable, ray_records)) == sorted(map(_comparable, local_records))
    report = json.loads((root / "grid.json").read_text())
    assert {c["exit_code"] for c in report["cells"]} == {0}
    assert "| cold |" in out


class _FakeRay:
    """`ray.init` that fails `fails` times as Ray does when a new node misses its 30 s to
    register, then starts; records what it was asked."""

    def __init__(self, fails: int, error: str = "The current node timed out during startup.") \
            -> None:
        self.fails, self.error, self.calls, self.up = fails, error, [], False

    def init(self, **kw):
        self.calls.append(kw)
        Path(kw["_temp_dir"], "session_x").mkdir()
        if len(self.calls) <= self.fails:
            raise Exception(self.error)  # noqa: TRY002 - what Ray raises
        self.up = True

    def is_initialized(self):
        return self.up

    def shutdown(self):
        self.up = False


def test_ray_local_is_a_private_cluster_started_again_when_slow(monkeypatch, capsys):
    """`--ray local` asks Ray for a new cluster (address "local": RAY_ADDRESS and
    /tmp/ray/ray_current_cluster are not read) in a directory of its own, removed at the end;
    a start that missed Ray's registration window is retried, another error is one line."""
    from evaluator.sweep.grid import SweepError
    from evaluator.sweep.ray_cluster import LOCAL_ATTEMPTS, RaySession

    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")
    ray = _FakeRay(fails=LOCAL_ATTEMPTS - 1)
    session = RaySession(ray, "local").open()
    dirs = [Path(c["_temp_dir"]) for c in ray.calls]
    assert len(ray.calls) == LOCAL_ATTEMPTS and len(set(dirs)) == LOCAL_ATTEMPTS
    assert all(c["address"] == "local" and c["_node_ip_address"] == "127.0.0.1"
               for c in ray.calls)
    assert [d.exists() for d in dirs] == [False] * (LOCAL_ATTEMPTS - 1) + [True]
    assert "slow to start" in capsys.readouterr().err
    session.close()
    assert not dirs[-1].exists() and not ray.up
    for fails, error in ((LOCAL_ATTEMPTS, "The current node timed out during startup."),
                         (1, "no space left on device")):
        ray = _FakeRay(fails=fails, error=error)
        with pytest.raises(SweepError, match=f"--ray local: the private Ray cluster did not "
                                             f"start: {error}"):
            RaySession(ray, "local").open()
        assert len(ray.calls) == fails and not any(Path(c["_temp_dir"]).exists()
                                                   for c in ray.calls)


def test_forwarded_ray_logs_carry_no_colour_codes_off_a_terminal(monkeypatch):
    from evaluator.sweep import ray_cluster

    for name in ("RAY_COLOR_PREFIX", "RAY_DEDUP_LOGS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    pytest.importorskip("ray")
    ray_cluster.import_ray()
    assert "RAY_COLOR_PREFIX" not in os.environ         # a terminal: Ray's colours stay
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    ray_cluster.import_ray()
    assert os.environ["RAY_COLOR_PREFIX"] == "0" and os.environ["RAY_DEDUP_LOGS"] == "0"
    monkeypatch.setenv("RAY_COLOR_PREFIX", "1")         # the user's choice wins
    ray_cluster.import_ray()
    assert os.environ["RAY_COLOR_PREFIX"] == "1"
