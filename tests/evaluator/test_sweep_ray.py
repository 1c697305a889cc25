"""`agentsweep sweep --ray local`: the grid of test_sweep on a private one-node Ray cluster
(stub servers, the toy benchmark): the same records as the local executor, a driver stopped
with SIGTERM and resumed, and a cell runner actor killed (SIGKILL) mid-cell lose and repeat no
unit; the lease table on its own."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from evaluator.sweep.ray_exec import CellQueue
from tests.evaluator.test_sweep import REPO, _comparable, _grid, _records

CELLS = {"cold__all": 6, "cold__first2": 4, "warm__all": 6, "warm__first2": 4}


class Sweep:
    """`agentsweep sweep ARGS` in the background, its output in files (a pipe nobody reads
    while Ray forwards its workers' logs could fill up and block the driver)."""

    def __init__(self, *args: str, home: Path) -> None:
        env = dict(os.environ, AGENTSWEEP_HOME=str(home), RAY_AUTH_MODE="disabled")
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


def _sweep(*args: str, home: Path) -> Sweep:
    return Sweep(*args, home=home)


def _runner_pids() -> list[int]:
    import psutil

    pids = []
    for p in psutil.process_iter(["cmdline"]):
        if any("CellRunner" in part for part in (p.info["cmdline"] or [])):
            pids.append(p.pid)
    return pids


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
    assert q.heartbeat("r1", "a") and not q.heartbeat("r2", "a")
    assert q.release("r2") == ["b"]                  # r2 died: b waits again, first in line
    assert q.lease("r3") == "b"
    q.done("r1", "a", 0)
    q.done("r2", "b", 0)                             # r2 no longer holds b: ignored
    assert q.status()["codes"] == {"a": 0} and q.status()["leased"] == {"b": "r3"}
    time.sleep(0.1)
    assert q.expire() == ["b"] and q.lease("r4") == "b"
    q.done("r4", "b", 130)                           # interrupted, not finished: back in line
    assert q.status()["pending"] == ["b"] and q.status()["codes"]["b"] == 130


def test_a_grid_on_ray_equals_the_local_run_and_survives_a_stopped_driver_and_a_killed_runner(
        tmp_path):
    pytest.importorskip("ray")
    from perf.stub_server import start_stub

    with start_stub("--mode", "text", "--sleep", "0.3") as agent, \
            start_stub("--mode", "schema") as judge:
        # one episode at a time (0.3 s each): the kill below lands inside the first cell, not
        # after it (with all its episodes in flight at once a cell ended within milliseconds
        # of its second record, and the test raced the runner to it)
        local = _grid(tmp_path / "local.toml", tmp_path / "local", agent.url, judge.url,
                      concurrency=1)
        p = _sweep(str(local), home=tmp_path)
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        grid = _grid(tmp_path / "ray.toml", tmp_path / "ray", agent.url, judge.url,
                     concurrency=1)
        # first the driver is stopped with SIGTERM mid-sweep: it records its state, shuts Ray
        # down (no runner left behind) and exits 130 with the resume hint
        p = _sweep(str(grid), "--ray", "local", "--lease-timeout", "30", home=tmp_path)
        _wait_for_episodes(p, tmp_path / "ray" / "g", 1)
        p.proc.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=300)
        assert p.returncode == 130, err
        assert "continue with `agentsweep sweep --resume" in err, err
        assert (tmp_path / "ray" / "g" / "sweep.json").exists()
        assert _gone(_runner_pids), "a cell runner outlived the driver"
        # then it is resumed, and a cell runner is killed (SIGKILL) mid-cell
        before = _episode_lines(tmp_path / "ray" / "g")
        p = _sweep("--resume", str(tmp_path / "ray" / "g"), "--ray", "local",
                   "--lease-timeout", "30", home=tmp_path)
        _wait_for_episodes(p, tmp_path / "ray" / "g", before + 1)
        pids = _runner_pids()
        assert pids, "no cell runner process found"
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        out, err = p.communicate(timeout=600)
    assert p.returncode == 0, err
    # the killed runner is replaced; the cell it held (none when it was between two leases)
    # goes back to the queue and is resumed
    back = re.search(r"runner-1 failed \((?:ActorDiedError|RayActorError|ActorUnavailableError)"
                     r".*cells back in the queue: (\S+)", err)
    assert back and back.group(1) in (*CELLS, "none"), err
    for name, units in CELLS.items():
        ray_records = _records(tmp_path / "ray" / "g" / name)
        counts = Counter((r["unit"]["task"], r["unit"]["trial"]) for r in ray_records)
        assert len(counts) == units and set(counts.values()) == {1}, name
        local_records = _records(tmp_path / "local" / "g" / name)
        assert sorted(map(_comparable, ray_records)) == sorted(map(_comparable, local_records))
    report = json.loads((tmp_path / "ray" / "g" / "grid.json").read_text())
    assert {c["exit_code"] for c in report["cells"]} == {0}
    assert "| cold |" in out
