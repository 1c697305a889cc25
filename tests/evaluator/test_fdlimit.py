"""File descriptors: the soft open-file limit is lifted at start, pools and admission caps fit
the limit, and running out of descriptors (EMFILE) is an infrastructure retry, not a unit
failure. The low limits are set with resource.setrlimit in subprocesses."""

from __future__ import annotations

import errno
import json
import os
import resource
import subprocess
import sys
from collections import Counter
from pathlib import Path

import aiohttp
import pytest

from backends.errors import RetriesExhausted
from backends.fdlimit import connection_budget, is_fd_exhaustion, nofile_limit
from bench_data.types import Task
from evaluator.config import AdmissionConfig
from evaluator.records import EpisodeRecord
from evaluator.run.resources import fd_caps
from evaluator.run.results import iter_failures, iter_records
from evaluator.run.scheduler import make_units
from tests.evaluator.test_scheduler import FAST_RETRY, _record, _run

REPO = Path(__file__).resolve().parents[2]
FAKE = "tests.evaluator.run_fakes:one_call_episode"


def _env() -> dict[str, str]:
    env = dict(os.environ, FAKE_EPISODE_SLEEP="0")
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _limit(soft: int, hard: int):
    def preexec() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    return preexec


def test_fd_exhaustion_is_recognised_through_wrappers():
    emfile = OSError(errno.EMFILE, "Too many open files")
    assert is_fd_exhaustion(emfile) and is_fd_exhaustion(OSError(errno.ENFILE, "x"))
    assert not is_fd_exhaustion(OSError(errno.ENOENT, "x")) and not is_fd_exhaustion(None)
    try:
        try:
            raise emfile
        except OSError as exc:
            raise RuntimeError("open failed") from exc
    except RuntimeError as wrapped:
        assert is_fd_exhaustion(wrapped)
    conn = aiohttp.ClientConnectorError(None, emfile)  # type: ignore[arg-type]
    assert is_fd_exhaustion(conn)
    assert not is_fd_exhaustion(RetriesExhausted("u", 1, "HTTP 503"))


def test_admission_caps_fit_the_connection_pool():
    pool, cfg = fd_caps(400, AdmissionConfig(initial_cap=256, min_cap=16, max_cap=4096))
    assert pool == 100 and (cfg.min_cap, cfg.initial_cap, cfg.max_cap) == (16, 100, 100)
    default = AdmissionConfig()
    assert fd_caps(1 << 20, default)[1] is default  # room enough: unchanged
    pool, cfg = fd_caps(8, AdmissionConfig(initial_cap=8, min_cap=8, max_cap=8))
    assert pool == 4 and cfg.min_cap == cfg.initial_cap == cfg.max_cap == 4


def test_the_budget_leaves_a_reserve_below_the_soft_limit():
    soft, hard = nofile_limit()
    assert 4 <= connection_budget() < soft <= hard


def test_agentsweep_lifts_the_soft_limit_to_the_hard_one():
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard < 300:
        pytest.skip(f"hard limit {hard}: nothing to show")
    code = ("import resource, sys\nfrom evaluator.cli import main\n"
            "assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == 256\n"
            "main(['data', 'list'])\n"
            "print('LIMIT', *resource.getrlimit(resource.RLIMIT_NOFILE))\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=_env(), text=True,
                       capture_output=True, timeout=120, preexec_fn=_limit(256, hard),
                       check=False)
    assert r.returncode == 0, r.stderr[-2000:]
    line = next(x for x in r.stdout.splitlines() if x.startswith("LIMIT"))
    assert line.split()[1:] == [str(hard), str(hard)]


async def test_emfile_in_an_episode_is_retried_not_a_unit_failure(tmp_path):
    tasks = [Task(benchmark="b", subset="s", task_id=f"t{i}") for i in range(3)]
    units = make_units("r", tasks, 2, 0)
    calls: Counter[str] = Counter()

    async def fn(unit, task, ticket) -> EpisodeRecord:
        calls[unit.key] += 1
        if calls[unit.key] == 1:
            raise OSError(errno.EMFILE, "Too many open files")
        if unit.key.endswith("t2#1"):
            raise OSError(errno.ENOENT, "No such file")  # another OS error: the unit's own
        return _record(unit, task)

    outcome, counters, _ = await _run(tmp_path, units, fn, concurrency=2, retry=FAST_RETRY)
    records = list(iter_records(tmp_path))
    assert len(records) == 5 and {r.infra_retries for r in records} == {1}
    assert counters.infra_retries == counters.fd_retries == 6 and counters.infra_failures == 0
    fails = list(iter_failures(tmp_path))
    assert [(f.unit.key, f.kind) for f in fails] == [("b/s/t2#1", "error")]
    assert outcome.finished == 5 and outcome.failed == 1


def test_a_run_under_a_low_hard_limit_finishes_every_unit(tmp_path):
    """128 descriptors in all, 192 requests asked to be in flight: the pool and the admission
    caps shrink to fit instead of failing connections with EMFILE."""
    from perf.stub_server import start_stub

    with start_stub("--mode", "text") as stub:
        headers = json.dumps({"X-Stub-Sleep": "0.02"}).replace(":", " =")
        cmd = [sys.executable, "-m", "evaluator.cli", "run", "--engine-url", stub.url,
               "--out", str(tmp_path), "--name", "fd", "--trials", "16",
               "--concurrency", "192", "--progress", "off",
               "--set", f"protocol.entry={FAKE}",
               "--set", f"agent.endpoint.extra_headers={headers}",
               "--set", "agent.endpoint.max_retries=0", "--set", "retry.max_attempts=1",
               "--set", "admission.initial_cap=192", "--set", "admission.adaptive=false"]
        r = subprocess.run(cmd, cwd=REPO, env=_env(), text=True, capture_output=True,
                           timeout=300, preexec_fn=_limit(128, 128), check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "open-file limit 128" in r.stderr and "capped at" in r.stderr
    keys = [rec.unit.key for rec in iter_records(tmp_path / "fd")]
    assert len(keys) == 192 and len(set(keys)) == 192
    assert list(iter_failures(tmp_path / "fd")) == []


def test_the_sample_under_a_hard_limit_of_128_finishes_with_20000_requests_asked(tmp_path):
    """perf.fd_limit at small scale: 240 sample episodes (simulated tool answers through the
    answer log, multi-turn user simulator) all started at once, 20,000 requests in flight
    asked for, under soft = hard = 128 descriptors: every unit finishes, none fails, the run
    never holds more descriptors than the limit, and the simulated answers are one file."""
    from perf.fd_limit import _env, read_run, run_command, run_round
    from perf.stub_server import start_stub

    home = tmp_path / "home"
    home.mkdir()
    with start_stub("--mode", "text") as stub:
        cmd = run_command(stub.url, tmp_path, "fd", 20, 20_000, 0.01, home)
        r = run_round(cmd, _env(home), 128, tmp_path / "fd.log", timeout_s=300)
    r.update(read_run(tmp_path / "fd"))
    log = (tmp_path / "fd.log").read_text(errors="replace")
    assert r["rc"] == 0, log[-3000:]
    assert (r["finished"], r["failed"]) == (240, 0), r
    assert "open-file limit 128" in log and "capped at" in log
    assert 0 < r["peak_fds"] <= 128
    # retries for want of a descriptor were absorbed (or never needed): nothing failed
    assert r["fd_episode_retries"] <= r["infra_retries"]
    assert sorted(p.name for p in (home / "simulated").iterdir()) == ["answers.log"]
    assert "simulated" in log  # the tool simulator answered misses


def test_emfile_in_the_middle_of_a_run_is_absorbed(tmp_path):
    """Fault test: three episodes each take every free descriptor for 0.3 s (as if another
    part of the process leaked them) while 48 sample episodes run under a hard limit of 128:
    the connections and files opened meanwhile fail with EMFILE, the client and the scheduler
    retry them, and every unit finishes with no failure."""
    from perf.fd_limit import _env, read_run, run_command, run_round
    from perf.stub_server import start_stub

    home = tmp_path / "home"
    home.mkdir()
    with start_stub("--mode", "text") as stub:
        cmd = run_command(stub.url, tmp_path, "starved", 4, 20_000, 0.01, home)
        cmd += ["--set", "protocol.entry=tests.evaluator.fd_fakes:starved_episode"]
        env = dict(_env(home), FD_HOG_EPISODES="3", FD_HOG_S="0.3")
        r = run_round(cmd, env, 128, tmp_path / "starved.log", timeout_s=300)
    r.update(read_run(tmp_path / "starved"))
    log = (tmp_path / "starved.log").read_text(errors="replace")
    assert r["rc"] == 0, log[-3000:]
    assert (r["finished"], r["failed"]) == (48, 0), r
    assert r["fd_request_retries"] + r["fd_episode_retries"] > 0, r
