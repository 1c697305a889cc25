"""Trial reruns end to end through the CLI against the stub server, under the paper profile:
a judge that answers in prose fails the trial (the reference reruns it); `agentsweep run
--resume RUN_DIR --judge` plays such a trial again, as a new record of the same unit with the
next attempt number, until its 4th attempt, after which it is dropped: no score, and a
further resume plays nothing. Skipped when ../shared/data/vitabench is absent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import VITA_DATA

REPO = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.skipif(
    not (VITA_DATA / "delivery" / "tasks_en.json").is_file(),
    reason=f"VitaBench data not present at {VITA_DATA} (shared data, read-only)")


def _table(headers: dict[str, str]) -> str:
    return "{ " + ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in headers.items()) \
        + " }"


def _agentsweep(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    environ = dict(os.environ, AGENTSWEEP_HOME=str(home))
    environ.pop("AGENTSWEEP_PLUGINS", None)
    environ["PYTHONPATH"] = str(REPO) + os.pathsep + environ.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "evaluator.cli", *args], cwd=REPO,
                          env=environ, capture_output=True, text=True, timeout=300,
                          check=False)


def test_a_trial_the_judge_cannot_read_is_rerun_then_dropped(tmp_path: Path) -> None:
    from perf.stub_server import start_stub

    agent = {"X-Stub-Mode": "text", "X-Stub-Replies": "All done. ###STOP###"}
    user = {"X-Stub-Mode": "text", "X-Stub-Replies": "I need lunch."}
    prose = {"X-Stub-Mode": "text", "X-Stub-Replies": "Every rubric looks satisfied to me."}
    run_dir = tmp_path / "vita"
    with start_stub("--mode", "text") as stub, start_stub("--mode", "text") as judge:
        endpoint = f'[{{ base_url = "{judge.url}", extra_headers = {_table(prose)} }}]'
        first = _agentsweep(
            "run", "--data", "vitabench", "--data-dir", str(VITA_DATA.parent), "--subset",
            "delivery", "--limit", "1", "--judge", "--engine-url", stub.url, "--out",
            str(tmp_path), "--name", "vita", "--progress", "off", "--set", "trials=1",
            "--set", f"agent.endpoint.extra_headers={_table(agent)}",
            "--set", f"user.endpoint.extra_headers={_table(user)}",
            "--set", f"judge.endpoints={endpoint}", home=tmp_path)
        assert first.returncode == 0, first.stderr
        for _ in range(3):
            again = _agentsweep("run", "--resume", str(run_dir), "--judge", "--progress",
                                "off", home=tmp_path)
            assert again.returncode == 0, again.stderr
            assert "1 this session" in again.stdout, again.stdout
        last = _agentsweep("run", "--resume", str(run_dir), "--judge", "--progress", "off",
                           home=tmp_path)
        assert last.returncode == 0 and "0 this session" in last.stdout, last.stdout
    records = [json.loads(x) for x in (run_dir / "episodes.jsonl").read_text().splitlines()]
    assert [r["extra"]["trial_attempt"] for r in records] == [1, 2, 3, 4]
    assert len({r["unit"]["trial"] for r in records}) == 1
    judgements = [json.loads(x) for x in (run_dir / "judgements.jsonl").read_text().splitlines()]
    assert judgements and all(j["error"].startswith("trial rerun: window 1/")
                              for j in judgements)
    report = _agentsweep("report", str(run_dir), "--out",
                         str(tmp_path / "report"), home=tmp_path)
    assert report.returncode == 0, report.stderr
    vita = json.loads((tmp_path / "report" / "report.json").read_text())["runs"][0][
        "benchmarks"]["vitabench"]
    assert (vita["dropped"], vita["awaiting_rerun"], vita["n_scored"]) == (1, 0, 0)
