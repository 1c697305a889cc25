"""`agentsweep sweep`: a grid file's checks and expansion, a 2 x 2 grid run end to end against
stub servers (the toy benchmark, judged), its cells equal to plain `agentsweep run`s with the
same settings, and a sweep killed mid-way that resumes without losing or repeating a unit."""

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

from evaluator.sweep.grid import SweepError, expand, load_sweep

REPO = Path(__file__).resolve().parents[2]
TOY = REPO / "tests" / "toybench" / "data"
HEADERS = ('{ "X-Stub-Mode" = "text", "X-Stub-Replies" = "The answer is 5.||It is 42.||'
           'I think 6." }')


def _cli(*args: str, home: Path) -> subprocess.Popen[str]:
    env = dict(os.environ, AGENTSWEEP_HOME=str(home))
    env.pop("AGENTSWEEP_PLUGINS", None)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.Popen([sys.executable, "-m", "evaluator.cli", *args], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _grid(path: Path, out: Path, stub: str, judge: str, name: str = "g",
          concurrency: int = 64) -> Path:
    path.write_text(f'''
name = "{name}"
out = "{out}"
trials = 2
seed = 7
judge = true
[set]
plugins = ["tests.toybench"]
progress = "off"
concurrency = {concurrency}
"engine.url" = "{stub}"
"judge.endpoints" = [{{ base_url = "{judge}" }}]
"agent.endpoint.extra_headers" = {HEADERS}
[[models]]
name = "cold"
set = {{ "agent.sampling.temperature" = 0.0 }}
[[models]]
name = "warm"
set = {{ "agent.sampling.temperature" = 0.9 }}
[[benchmarks]]
name = "all"
data = "{TOY}"
[[benchmarks]]
name = "first2"
data = "{TOY}"
limit = 2
''')
    return path


def _records(run_dir: Path) -> list[dict]:
    return [json.loads(x) for x in (run_dir / "episodes.jsonl").read_text().splitlines() if x]


def _comparable(rec: dict) -> tuple:
    """A record without what differs between two executions (timings, ids of the run)."""
    return (rec["unit"]["task"], rec["unit"]["trial"], rec["unit"]["seed"],
            json.dumps(rec["messages"], sort_keys=True), rec.get("termination", "answer"),
            json.dumps(rec.get("tool_calls", []), sort_keys=True))


@pytest.fixture(scope="module")
def stubs():
    from perf.stub_server import start_stub

    with start_stub("--mode", "text", "--sleep", "0.05") as agent, \
            start_stub("--mode", "schema") as judge:
        yield agent, judge


def test_a_grid_file_is_checked_field_by_field(tmp_path):
    good = tmp_path / "g.toml"
    _grid(good, tmp_path / "out", "http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1")
    cells = expand(load_sweep(good))
    assert [c.name for c in cells] == ["cold__all", "cold__first2", "warm__all", "warm__first2"]
    assert cells == expand(load_sweep(good))  # pure: the same file gives the same cells
    first2 = {k: v for k, v, _ in cells[1].overrides}
    assert first2["data.limit"] == 2 and first2["seed"] == 7 and first2["name"] == "cold__first2"
    cases = [
        ('name = "g"', 'name = "../x"', "name: '../x' must be 1-64 characters"),
        ("trials = 2", "trials = 0", "trials: must be in [1, 1000], got 0"),
        ("trials = 2", "trials = 99999999999", "trials: must be in [1, 1000]"),
        ("seed = 7", "seed = 7\ncolour = 1", "unknown field `colour`"),
        ("limit = 2", "limit = -1", "benchmarks[1].limit: must be >= 0"),
    ]
    for old, line, message in cases:
        bad = tmp_path / "bad.toml"
        bad.write_text(good.read_text().replace(old, line, 1))
        with pytest.raises(SweepError) as e:
            load_sweep(bad)
        assert message in str(e.value) and str(bad) in str(e.value) and "\n" not in str(e.value)
    dup = tmp_path / "dup.toml"
    dup.write_text(good.read_text().replace('name = "warm"', 'name = "cold"'))
    with pytest.raises(SweepError, match=r"models\[1\]\.name: 'cold' is used twice"):
        load_sweep(dup)


def test_a_grid_runs_every_cell_and_equals_local_runs(tmp_path, stubs):
    agent, judge = stubs
    grid = _grid(tmp_path / "g.toml", tmp_path / "sweeps", agent.url, judge.url)
    p = _cli("sweep", str(grid), home=tmp_path)
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    d = tmp_path / "sweeps" / "g"
    report = json.loads((d / "grid.json").read_text())
    assert report["models"] == ["cold", "warm"] and report["benchmarks"] == ["all", "first2"]
    n = {c["bench"]: c["n_scored"] for c in report["cells"]}
    assert n == {"all": 6, "first2": 4}
    assert all(c["exit_code"] == 0 and c["mean_score"] is not None for c in report["cells"])
    assert "| cold |" in out and "| warm |" in out
    # a cell is the run `agentsweep run` makes with the same settings
    p = _cli("run", "--plugin", "tests.toybench", "--data", str(TOY), "--limit", "2",
             "--trials", "2", "--seed", "7", "--engine-url", agent.url, "--out",
             str(tmp_path / "runs"), "--name", "plain", "--progress", "off",
             "--set", "agent.sampling.temperature=0.9",
             "--set", f"agent.endpoint.extra_headers={HEADERS}", home=tmp_path)
    _, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    cell = sorted(map(_comparable, _records(d / "warm__first2")))
    plain = sorted(map(_comparable, _records(tmp_path / "runs" / "plain")))
    assert cell == plain and len(cell) == 4
    # a second sweep into the same place is refused; the grid report can be rewritten
    p = _cli("sweep", str(grid), home=tmp_path)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 2 and "already holds a sweep" in err and "--resume" in err


def _wait_lines(p: subprocess.Popen[str], path: Path, n: int) -> None:
    deadline = time.monotonic() + 120
    while not (path.exists() and path.read_bytes().count(b"\n") >= n):
        assert p.poll() is None, p.communicate()
        assert time.monotonic() < deadline, f"{path} never held {n} lines"
        time.sleep(0.02)


def test_a_stopped_and_killed_sweep_resumes_without_loss_or_repeats_and_judges_all(tmp_path):
    """SIGTERM mid-cell (exit 130, the cell's 130 recorded), resumed and killed (SIGKILL),
    resumed again: every unit once, and every episode judged, those whose judgements were in
    flight at the stop or the kill included (a resume used to judge only its own episodes, and
    the grid showed such a cell with fewer scored units)."""
    from evaluator.judges.transcript import trajectory_hash
    from evaluator.run.results import iter_records
    from perf.stub_server import start_stub
    from tests.toybench.judges import EXACT, GRADE

    with start_stub("--mode", "text", "--sleep", "0.4") as agent, \
            start_stub("--mode", "schema", "--sleep", "0.3") as judge:
        grid = _grid(tmp_path / "g.toml", tmp_path / "sweeps", agent.url, judge.url, "k")
        d = tmp_path / "sweeps" / "k"
        p = _cli("sweep", str(grid), home=tmp_path)
        _wait_lines(p, d / "cold__all" / "episodes.jsonl", 2)
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=120)
        assert p.returncode == 130 and "--resume" in err, err
        state = {c["name"]: c["exit_code"] for c in
                 json.loads((d / "sweep.json").read_text())["cells"]}
        assert state["cold__all"] == 130, state
        p = _cli("sweep", "--resume", str(d), home=tmp_path)
        _wait_lines(p, d / "cold__first2" / "episodes.jsonl", 2)
        os.kill(p.pid, signal.SIGKILL)  # the driver dies mid-cell
        p.communicate()
        changed = grid.read_text().replace("seed = 7", "seed = 8")
        (tmp_path / "other.toml").write_text(changed)
        p = _cli("sweep", str(tmp_path / "other.toml"), "--resume", str(d), home=tmp_path)
        _, err = p.communicate(timeout=60)
        assert p.returncode == 2 and "differs from the sweep" in err
        p = _cli("sweep", "--resume", str(d), home=tmp_path)
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    for cell, units in (("cold__all", 6), ("cold__first2", 4), ("warm__all", 6),
                        ("warm__first2", 4)):
        records = _records(d / cell)
        counts = Counter((r["unit"]["task"], r["unit"]["trial"]) for r in records)
        assert len(counts) == units and set(counts.values()) == {1}, cell
        kinds: dict[str, set[str]] = {}
        for line in (d / cell / "judgements.jsonl").read_text().splitlines():
            j = json.loads(line)
            kinds.setdefault(j["trajectory_hash"], set()).add(j["kind"])
        assert all(kinds.get(trajectory_hash(r)) == {EXACT, GRADE}
                   for r in iter_records(d / cell)), cell
    state = json.loads((d / "sweep.json").read_text())
    assert {c["exit_code"] for c in state["cells"]} == {0}
    assert {c["owed"] for c in state["cells"]} == {0}
    report = json.loads((d / "grid.json").read_text())
    assert {(c["model"], c["bench"]): c["n_scored"] for c in report["cells"]} == {
        ("cold", "all"): 6, ("cold", "first2"): 4, ("warm", "all"): 6, ("warm", "first2"): 4}
    assert "lack judgements" not in out


def test_sweep_out_places_the_sweep_and_resume_keeps_its_directory(tmp_path, stubs,
                                                                   monkeypatch):
    """`sweep --out DIR` replaces the file's `out`; a resume stays in the directory it is
    given, from any working directory, and refuses --out."""
    from evaluator.sweep.local import prepare

    agent, judge = stubs
    grid = _grid(tmp_path / "g.toml", tmp_path / "elsewhere", agent.url, judge.url)
    sweep, cells = prepare(str(grid), None, str(tmp_path / "mine"))
    assert sweep.directory == tmp_path / "mine" / "g"
    assert {next(v for k, v, _ in c.overrides if k == "out") for c in cells} == {
        str(tmp_path / "mine" / "g")}
    with pytest.raises(SweepError, match="a directory is needed"):
        prepare(str(grid), None, " ")
    p = _cli("sweep", str(grid), "--out", str(tmp_path / "mine"), home=tmp_path)
    _, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    assert (tmp_path / "mine" / "g" / "grid.json").exists()
    assert not (tmp_path / "elsewhere").exists()
    p = _cli("sweep", "--resume", str(tmp_path / "mine" / "g"), "--out", "x", home=tmp_path)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 2 and "--out: a resumed sweep stays in its directory" in err
    monkeypatch.chdir(tmp_path)   # elsewhere, and the kept file's `out` is another place
    resumed, cells = prepare(None, str(tmp_path / "mine" / "g"))
    assert resumed.directory == tmp_path / "mine" / "g"
    assert {next(v for k, v, _ in c.overrides if k == "out") for c in cells} == {
        str(tmp_path / "mine" / "g")}


@pytest.mark.parametrize("how", ["RAY_ADDRESS", "recorded", "argument"])
def test_a_ray_sweep_without_a_cluster_writes_nothing(tmp_path, monkeypatch, how):
    """`--ray auto` (or an address) where no cluster answers fails at once, in one line,
    before the sweep directory exists, so the same command works once `ray start --head` has
    run (it used to leave a sweep behind that only `--resume` would take, and a stale address
    was retried for minutes)."""
    pytest.importorskip("ray")
    from evaluator.sweep import ray_exec
    from evaluator.sweep.local import prepare
    from perf.stub_server import free_port

    dead = f"127.0.0.1:{free_port()}"   # nothing listens there
    if how == "recorded":   # a stale record of a cluster `ray start` made, since stopped
        monkeypatch.delenv("RAY_ADDRESS", raising=False)
        monkeypatch.setenv("RAY_TMPDIR", str(tmp_path))
        (tmp_path / "ray").mkdir()
        (tmp_path / "ray" / "ray_current_cluster").write_text(dead)
    else:
        monkeypatch.setenv("RAY_ADDRESS", dead)
    grid = _grid(tmp_path / "g.toml", tmp_path / "out", "http://127.0.0.1:9/v1",
                 "http://127.0.0.1:9/v1")
    sweep, cells = prepare(str(grid), None)
    address = dead if how == "argument" else "auto"
    with pytest.raises(SweepError) as e:
        ray_exec.run_on_ray(sweep, cells, ray_exec.RaySettings(address=address), resume=False)
    # (Ray connects to a loopback address as this node's IP: the message says so)
    port = dead.rsplit(":", 1)[1]
    assert re.search(rf"no Ray cluster answers at \S+:{port} \(", str(e.value)), str(e.value)
    assert {"RAY_ADDRESS": "RAY_ADDRESS", "argument": "the address given",
            "recorded": f"recorded in {tmp_path / 'ray' / 'ray_current_cluster'}): Connection "
                        "refused (a cluster that has stopped? `ray stop` clears the record)"
            }[how] in str(e.value)
    assert "\n" not in str(e.value)
    assert not sweep.directory.exists()
    assert prepare(str(grid), None)[1] == cells      # the same command is still a new sweep


@pytest.mark.parametrize(("given_url", "device", "want"), [
    (None, "cpu", "slow"),        # the sweep started a CPU engine: the long CPU timeout
    (None, "cuda", 0.0),          # a GPU engine: the roles' own timeout
    ("http://127.0.0.1:9/v1", "cpu", 0.0),   # --engine-url: someone else's server
])
def test_cells_on_the_sweeps_own_cpu_engine_get_the_long_request_timeout(
        tmp_path, monkeypatch, given_url, device, want):
    import asyncio

    import backends.server
    import evaluator.run.sweep as run_sweep_mod
    from backends.server_launch import CPU_REQUEST_TIMEOUT_S
    from evaluator.sweep.local import CellExecutor, cell_configs

    class FakeServer:
        def __init__(self, *a, device="cpu", **kw):
            self.device, self.attached = device, False
            self.base_url, self.model = "http://127.0.0.1:7/v1", "m"

        async def astart(self):
            return None

        async def astop(self):
            return None

        def stop(self):
            return None

    monkeypatch.setattr(backends.server, "VLLMServer",
                        lambda *a, **kw: FakeServer(*a, **{**kw, "device": device}))
    seen = []

    async def fake_run_sweep(request):
        seen.append(request)
        return run_sweep_mod.SweepResult(run_dir=tmp_path, exit_code=0)

    monkeypatch.setattr(run_sweep_mod, "run_sweep", fake_run_sweep)
    grid = tmp_path / "g.toml"
    grid.write_text(f'''
name = "g"
out = "{tmp_path / 'out'}"
[set]
plugins = ["tests.toybench"]
[[models]]
name = "m"
[[benchmarks]]
name = "toy"
data = "{TOY}"
''')
    sweep = load_sweep(grid)
    cells = expand(sweep)
    ex = CellExecutor(sweep, cell_configs(sweep, cells), progress="off",
                      engine_log=tmp_path / "engine.log", engine_url=given_url)
    assert asyncio.run(ex.run(cells[0])) == (0, 0, False)   # exit code, owed judgements, signalled
    assert seen[0].min_request_timeout_s == (CPU_REQUEST_TIMEOUT_S if want == "slow" else want)
    assert ("engine.url", given_url or "http://127.0.0.1:7/v1", "sweep's embedded engine") in \
        seen[0].overrides
