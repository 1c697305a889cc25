"""A sweep on a two-node Ray cluster on this machine (`ray.cluster_utils.Cluster`, one CPU a
node; stub servers, the toy benchmark, judged): the driver stopped with SIGTERM stops its
runners and records every running cell as interrupted (the agent's stub does not answer before
the stop, so no running cell can finish first: a runner learns of a stop at its next heartbeat,
and a cell that finishes before then is fairly recorded as done); resumed, with a stub that
answers, on the same port, it loses a whole worker node
mid-cell and still finishes on the head node with every unit recorded exactly once, the lost
node's lease reclaimed and every episode judged (issue 28, "A Ray node lost mid-sweep")."""

from __future__ import annotations

import json
import re
import shutil
import signal
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest

from evaluator.judges.pool import read_judgements
from evaluator.judges.transcript import trajectory_hash
from evaluator.records import EpisodeRecord
from evaluator.run.manifest import read_manifest
from evaluator.run.results import iter_records
from perf.stub_process import free_port, start_stub, stub_counters
from tests.evaluator.test_sweep import _grid
from tests.evaluator.test_sweep_ray import CELLS, Sweep, _cell_of, _lines
from tests.toybench.judges import EXACT, GRADE

pytestmark = pytest.mark.slow
TOY_KINDS = {EXACT, GRADE}   # toybench's judgements of every episode (rule, model)


def _raylet_pid(node) -> int:
    return node.all_processes["raylet"][0].process.pid


def _runners_under(raylet: int) -> list:
    """The cell-runner processes a node's raylet started."""
    import psutil

    out = []
    for p in psutil.process_iter(["cmdline"]):
        try:
            if any("CellRunner" in part for part in (p.info["cmdline"] or [])) and \
                    any(a.pid == raylet for a in p.parents()):
                out.append(p)
        except psutil.Error:
            pass
    return out


def _latest(run_dir: Path) -> dict[str, EpisodeRecord]:
    return {r.unit.key: r for r in iter_records(run_dir)}


def _wait_for_cells_calling(p: Sweep, root: Path, agent_url: str, raylets: list[int]) -> None:
    """Until the runner of each raylet holds a cell and the agent's stub has received a model
    call from each cell (concurrency 1: one call in flight a cell). A bound on a stuck
    cluster, not a timing assertion; the sweep's own output is shown if hit."""
    deadline = time.monotonic() + 600
    while True:
        cells = {_cell_of(r.pid, root) for raylet in raylets for r in _runners_under(raylet)}
        cells.discard(None)
        if len(cells) >= len(raylets) and \
                stub_counters(agent_url)["requests"] >= len(raylets):
            return
        if p.poll() is not None or time.monotonic() > deadline:
            p.kill()
            _, err = p.communicate()
            pytest.fail(f"no model call from a cell of each runner (exit {p.returncode}):\n"
                        f"{err[-4000:]}")
        time.sleep(0.05)


def _resume_and_lose(root: Path, args: tuple[str, ...], home: Path, cluster, worker
                     ) -> tuple[str, str, str]:
    """`sweep --resume`; the worker node removed while its runner is inside a cell that has
    recorded a unit since the resume and has 2+ units left: (that cell, stdout, stderr)."""
    before = {c: _lines(root / c) for c in CELLS}
    p = Sweep("--resume", str(root), *args, home=home)
    lost_cell = None
    deadline = time.monotonic() + 600
    while lost_cell is None:   # a cell of the worker's runner, going, 2+ units left
        assert p.poll() is None, p.communicate()[1][-4000:]
        assert time.monotonic() < deadline, "no runner on the worker node ran a cell"
        for r in _runners_under(_raylet_pid(worker)):
            cell = _cell_of(r.pid, root)
            if cell and before[cell] < _lines(root / cell) <= CELLS[cell] - 2:
                lost_cell = cell
        time.sleep(0.02)
    cluster.remove_node(worker, allow_graceful=False)
    out, err = p.communicate(timeout=600)
    assert p.returncode == 0, err
    return lost_cell, out, err


def test_a_node_lost_mid_sweep_loses_and_repeats_nothing_and_judging_completes(
        tmp_path, monkeypatch):
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    # the cluster's session files in a directory of its own (not /tmp/ray), short enough for
    # Ray's socket paths
    private = tempfile.mkdtemp(prefix="agsw-", dir="/tmp")
    monkeypatch.setenv("RAY_TMPDIR", private)
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    # every process of the cluster and the driver on the loopback address (Ray would take
    # 127.0.0.1 for this node's network address; this keeps the test off the network)
    monkeypatch.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    from ray._private import ray_constants

    monkeypatch.setattr(ray_constants, "ENABLE_RAY_CLUSTER", False)  # read at import
    fast_health = {"health_check_initial_delay_ms": 0, "health_check_period_ms": 500,
                   "health_check_failure_threshold": 4}
    cluster = Cluster(initialize_head=True, connect=False, head_node_args={
        "num_cpus": 1, "include_dashboard": False, "_system_config": fast_health})
    try:
        worker = cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        root = tmp_path / "ray" / "g"
        port = free_port()
        with start_stub("--mode", "schema") as judge:
            args = ("--ray", cluster.address, "--lease-timeout", "20")
            # 1. SIGTERM to the driver while both runners are inside a cell, each cell's first
            # model call held by a stub that answers long after the stop must have ended (so
            # no running cell can finish before the stop reaches its runner): each runner
            # stops its cell and reports it
            with start_stub("--mode", "text", "--sleep", "3600", port=port) as agent:
                grid = _grid(tmp_path / "g.toml", tmp_path / "ray", agent.url, judge.url,
                             concurrency=1)
                p = Sweep(str(grid), *args, home=tmp_path)
                _wait_for_cells_calling(p, root, agent.url,
                                        [_raylet_pid(worker), _raylet_pid(cluster.head_node)])
                p.proc.send_signal(signal.SIGTERM)
                _, err = p.communicate(timeout=120)   # a bound on a stuck stop, not a timing
            assert p.returncode == 130, err
            assert "continue with `agentsweep sweep --resume" in err, err
            assert "\x1b[" not in err              # no colour codes in a log file
            state = {c["name"]: c["exit_code"] for c in
                     json.loads((root / "sweep.json").read_text())["cells"]}
            started = {c for c in CELLS if (root / c / "manifest.json").exists()}
            assert len(started) >= 2, state           # a cell of each runner was running
            # every running cell recorded as interrupted (none could finish), not null or 0
            assert all(state[c] == 130 for c in started), (state, err[-4000:])
            assert all(state[c] is None for c in set(CELLS) - started), state
            # each runner stopped its cell itself (the run's end is recorded, interrupted), not
            # the driver's fallback for a runner that never reported
            ends = {c: read_manifest(root / c).ends for c in started}
            assert all(e and e[-1].interrupted for e in ends.values()), ends
            deadline = time.monotonic() + 60
            while _runners_under(_raylet_pid(worker)) + _runners_under(
                    _raylet_pid(cluster.head_node)):
                assert time.monotonic() < deadline, "a cell runner outlived the driver"
                time.sleep(0.2)

            # 2. resumed against a stub that answers, where the other one was; the worker
            # node is lost while its runner is inside a cell
            agent = start_stub("--mode", "text", "--sleep", "0.3", port=port)
            try:
                lost_cell, out, err = _resume_and_lose(root, args, tmp_path, cluster, worker)
            finally:
                agent.stop()
    finally:
        cluster.shutdown()
        ray.shutdown()
        shutil.rmtree(private, ignore_errors=True)

    # the lost runner's lease went back to the queue and its cell was resumed on the head
    back = re.search(r"(runner-\d+) failed \((\w+).*cells back in the queue: (\S+)", err)
    assert back and back.group(3) == lost_cell, err
    assert f"cell {lost_cell}: runner {back.group(1)} died; the cell is resumed" in out, out
    # every unit recorded exactly once, every episode judged (rule and model judgement)
    for name, units in CELLS.items():
        counts = Counter((r.unit.task, r.unit.trial) for r in iter_records(root / name))
        assert len(counts) == units and set(counts.values()) == {1}, name
        judged: dict[str, set[str]] = {}
        for j in read_judgements(root / name):
            if j.error is None:
                judged.setdefault(j.trajectory_hash, set()).add(j.kind)
        for rec in _latest(root / name).values():
            assert judged.get(trajectory_hash(rec)) == TOY_KINDS, (name, rec.unit.key)
    state = json.loads((root / "sweep.json").read_text())
    assert {c["exit_code"] for c in state["cells"]} == {0}
    assert {c["owed"] for c in state["cells"]} == {0}
    assert "\x1b[" not in err
