"""`agentsweep run` as a subprocess: kill -9 then --resume, Ctrl-C, 503s, the real engine."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from evaluator.run.results import EPISODES_FILE, iter_failures, iter_records

FAKE = "tests.evaluator.run_fakes:one_call_episode"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def stub():
    from perf.stub_server import start_stub

    with start_stub("--mode", "text") as s:
        yield s


def _cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "evaluator.cli", "run", *args]


def _env(sleep: float) -> dict[str, str]:
    env = dict(os.environ, FAKE_EPISODE_SLEEP=str(sleep))
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, check=False, **kw)


def _start(args: list[str], sleep: float) -> subprocess.Popen[str]:
    return subprocess.Popen(_cmd(*args), cwd=REPO, env=_env(sleep), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _wait_for_lines(path: Path, n: int, proc: subprocess.Popen[str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") >= n:
            return
        if proc.poll() is not None:
            raise AssertionError(f"run ended early: {proc.communicate()}")
        time.sleep(0.01)
    raise AssertionError(f"{path} never reached {n} lines")


def _base(stub, out: Path, name: str) -> list[str]:
    return ["--engine-url", stub.url, "--out", str(out), "--name", name,
            "--set", f"protocol.entry={FAKE}"]


def test_sigkill_then_resume_records_every_unit_exactly_once(stub, tmp_path):
    args = [*_base(stub, tmp_path, "k"), "--trials", "4", "--concurrency", "3",
            "--progress", "plain"]
    proc = _start(args, sleep=0.05)
    run_dir = tmp_path / "k"
    _wait_for_lines(run_dir / EPISODES_FILE, 6, proc)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    before = [r.unit.key for r in iter_records(run_dir)]
    assert 6 <= len(before) < 48
    done = _run(_cmd("--resume", str(run_dir), "--progress", "off"), cwd=REPO,
                          env=_env(0.0), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    counts = Counter(r.unit.key for r in iter_records(run_dir))
    assert len(counts) == 48 and set(counts.values()) == {1}
    assert set(before) <= set(counts)
    assert f"{48 - len(before)} this session, {len(before)} resumed" in done.stdout


def test_sigint_exits_130_with_finished_episodes_persisted(stub, tmp_path):
    args = [*_base(stub, tmp_path, "i"), "--trials", "2", "--concurrency", "2",
            "--set", "shutdown_grace_s=30"]
    proc = _start(args, sleep=0.3)
    run_dir = tmp_path / "i"
    _wait_for_lines(run_dir / EPISODES_FILE, 1, proc)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "--resume" in out
    keys = [r.unit.key for r in iter_records(run_dir)]
    assert 1 <= len(keys) < 24 and len(set(keys)) == len(keys)
    assert (run_dir / EPISODES_FILE).read_bytes().endswith(b"\n")  # no torn line
    done = _run(_cmd("--resume", str(run_dir)), cwd=REPO, env=_env(0.0),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert Counter(r.unit.key for r in iter_records(run_dir)).most_common(1)[0][1] == 1
    assert len(list(iter_records(run_dir))) == 24


def test_503s_are_infrastructure_failures_not_agent_failures(stub, tmp_path):
    args = [*_base(stub, tmp_path, "f"), "--limit", "1",
            "--agent-url", stub.url,
            "--set", 'agent.endpoint.extra_headers={ "X-Stub-Status" = "503" }',
            "--set", "agent.endpoint.max_retries=1",
            "--set", "retry.max_attempts=2", "--set", "retry.backoff_s=0.01"]
    r = _run(_cmd(*args), cwd=REPO, env=_env(0.0), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 3, r.stderr
    run_dir = tmp_path / "f"
    assert list(iter_records(run_dir)) == []
    fails = list(iter_failures(run_dir))
    assert len(fails) == 3 and {f.kind for f in fails} == {"infrastructure"}
    assert all(f.attempts == 2 and "503" in f.error for f in fails)
    # the server recovers: --resume runs the failed units again
    r = _run(_cmd("--resume", str(run_dir), "--set", "agent.endpoint.extra_headers={}"),
                       cwd=REPO, env=_env(0.0), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert len(list(iter_records(run_dir))) == 3


def test_bad_config_exits_2_naming_file_line_and_field(tmp_path):
    cfg = tmp_path / "bad.toml"
    cfg.write_text("[data]\nlimit = 'x'\n")
    r = _run(_cmd(str(cfg), "--out", str(tmp_path)), cwd=REPO, env=_env(0.0),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert f"{cfg}:2" in r.stderr and "data.limit" in r.stderr


@pytest.mark.integration
def test_sample_run_against_the_engine(engine, tmp_path):
    # a CPU engine on a busy machine is slow, not down: the run's requests wait while the
    # engine works (docs/client.md) instead of ending as infrastructure errors; the cap stays
    # at 15 minutes so that the whole suite keeps within CI's 30
    r = _run(
        _cmd("--engine-url", engine.base_url, "--out", str(tmp_path), "--name", "e",
             "--limit", "1", "--trials", "1"),
        cwd=REPO, env=_env(0.0), capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    recs = list(iter_records(tmp_path / "e"))
    assert len(recs) == 3 and {x.subset for x in recs} == {"single_turn", "multi_turn",
                                                            "unsolvable"}
    assert all(x.usage["agent"].prompt_tokens > 0 for x in recs)
    assert "cached-token share" in r.stdout
