"""GroupTravelBench end to end through the CLI against the stub server: `agentsweep run
--data grouptravelbench --data-dir ../shared/data --limit 1 --judge --report`. The stub's
text replies never contain a plan, so the chat runs its rounds and ends at the forced final
plan ("no_plan"); the rule judge still scores it (PC computed, plan metrics errors)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
DATA_DIR = REPO.parent / "shared" / "data"


def _cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, AGENTSWEEP_HOME=str(home))
    env.pop("AGENTSWEEP_PLUGINS", None)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "evaluator.cli", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.skipif(not (DATA_DIR / "grouptravelbench" / "test_sample.jsonl").is_file(),
                    reason=f"GroupTravelBench data absent ({DATA_DIR}/grouptravelbench)")
def test_one_task_runs_is_judged_and_reported(tmp_path):
    from perf.stub_server import start_stub

    with start_stub("--mode", "text") as stub:
        r = _cli("run", "--data", "grouptravelbench", "--data-dir", str(DATA_DIR), "--limit",
                 "1", "--engine-url", stub.url, "--out", str(tmp_path), "--name", "gtb",
                 "--judge", "--report", "--progress", "off", home=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    run = tmp_path / "gtb"
    records = [json.loads(x) for x in (run / "episodes.jsonl").read_text().splitlines()]
    assert records and {x["benchmark"] for x in records} == {"grouptravelbench"}
    rec = records[0]
    assert rec["termination"] in ("plan", "no_plan")
    assert rec["extra"]["prompt_version"] == "grouptravelbench-v1" and rec["extra"]["chat"]
    judgements = [json.loads(x) for x in (run / "judgements.jsonl").read_text().splitlines()]
    assert {(j["kind"], j["judge_model"]) for j in judgements} == {("gtb_metrics", "rule")}
    assert "GroupTravelBench" in r.stdout and "PC %" in r.stdout
