"""GroupTravelBench end to end through the CLI against stub servers: `agentsweep run
--data grouptravelbench --data-dir ../shared/data --limit 1 --judge --report`. The agent's
stub calls `web_search` in its first turns (answered by the tool simulator: no cache ships
with the data) and then replies text that never contains a plan, so the chat runs its
rounds and ends after the final-plan attempts ("max_turn_reached", no plan); the rule judge scores it (PC
computed, plan metrics errors) and the LLM judge and meta-judge (a schema stub) rate it."""

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

    choice = json.dumps([["web_search", {"query": "Xian snacks"}]])
    with start_stub("--mode", "tool", "--tool-turns", "1") as stub, \
            start_stub("--mode", "schema") as judge:
        r = _cli("run", "--data", "grouptravelbench", "--data-dir", str(DATA_DIR), "--limit",
                 "1", "--engine-url", stub.url, "--out", str(tmp_path), "--name", "gtb",
                 "--set", f'judge.endpoints=[{{base_url="{judge.url}"}}]',
                 "--set", "judge.structured_output=true",  # the paper profile reads free text
                 "--set", f"agent.endpoint.extra_headers={{'X-Stub-Tool-Choices' = '{choice}'}}",
                 "--judge", "--report", "--progress", "off", home=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    run = tmp_path / "gtb"
    records = [json.loads(x) for x in (run / "episodes.jsonl").read_text().splitlines()]
    assert records and {x["benchmark"] for x in records} == {"grouptravelbench"}
    rec = records[0]
    assert rec["termination"] == "max_turn_reached" and not rec["extra"]["plan_generated"]
    assert rec["extra"]["prompt_version"] == "grouptravelbench-v4" and rec["extra"]["chat"]
    calls = [e for e in rec["extra"]["chat"] if e.get("type") == "tool_call"]
    assert calls and calls[0]["name"] == "web_search" and rec["tool_calls"]
    assert rec["tool_calls"][0]["source"] == "simulated"
    judgements = [json.loads(x) for x in (run / "judgements.jsonl").read_text().splitlines()]
    kinds = {j["kind"]: j for j in judgements}
    assert set(kinds) == {"gtb_metrics", "gtb_judge", "gtb_meta"}
    assert kinds["gtb_metrics"]["judge_model"] == "rule"
    assert kinds["gtb_judge"]["score"] is not None and len(kinds["gtb_judge"]["scores"]) == 5
    report = json.loads((run / "report.json").read_text())
    assert "GroupTravelBench" in r.stdout and "PC %" in r.stdout and "judge S" in r.stdout
    assert "difficulty" in r.stdout and "compromises" in r.stdout.lower()
    assert report
