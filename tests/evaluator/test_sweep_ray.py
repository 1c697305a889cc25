"""`agentsweep sweep --ray local`: the grid of test_sweep on a private one-node Ray cluster
(stub servers, the toy benchmark): the same records as the local executor, and a cell runner
sent SIGTERM mid-cell stops, reports its cell, and the next runner resumes it without losing or
repeating a unit; the private cluster started again when Ray is slow to start it, and Ray's
forwarded logs without colour codes off a terminal. The lease table and a runner's loop on
their own: test_sweep_ray_leases.py; the driver stopped with SIGTERM and a node lost
mid-sweep: test_sweep_ray_nodes.py."""

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


def _gone(pids_of, timeout_s: float = 60) -> bool:
    deadline = time.monotonic() + timeout_s
    while pids_of():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


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
