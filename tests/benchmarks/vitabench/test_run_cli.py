"""VitaBench end to end through the CLI against the stub server: `agentsweep run --data
vitabench --subset delivery --limit 1 --judge --report` on the shared data, two trials of the
task. The stub agent places an order (a database write) and then stops; the stub user talks;
the stub judge marks every rubric satisfied. Skipped when ../shared/data/vitabench is absent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench_data.vitabench import load_vitabench_file

from .helpers import VITA_DATA

REPO = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.skipif(
    not (VITA_DATA / "delivery" / "tasks_en.json").is_file(),
    reason=f"VitaBench data not present at {VITA_DATA} (shared data, read-only)")


def _toml_table(headers: dict[str, str]) -> str:
    return "{ " + ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in headers.items()) \
        + " }"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from perf.stub_server import start_stub

    task = load_vitabench_file(VITA_DATA / "delivery" / "tasks_en.json", limit=1).tasks[0]
    env = task.extra["environment"]
    key, store = next(iter(env["stores"].items()))
    order = {"user_id": env["user_id"], "store_id": key,
             "product_ids": [store["products"][0]["product_id"]], "product_cnts": [1],
             "address": env["location"][0]["address"], "dispatch_time": env["time"],
             "note": "e2e"}
    agent = {"X-Stub-Mode": "tool", "X-Stub-Tool-Turns": "1",
             "X-Stub-Tool-Choices": json.dumps([["create_delivery_order", order]]),
             "X-Stub-Replies": "Your order is placed. ###STOP###"}
    # the paper profile reads the answer as the reference does: a JSON list of every rubric
    # of the reference's list (state and overall rubrics together)
    union = task.extra["rubric_sets"]["union"]
    verdict = [{"rubric_idx": f"rubric_{i}", "rubric": text, "justification": "[2] done",
                "meetExpectation": True} for i, text in enumerate(union)]
    judge_headers = {"X-Stub-Mode": "text", "X-Stub-Replies": json.dumps(verdict)}
    root = tmp_path_factory.mktemp("vita")
    with start_stub("--mode", "text") as stub, start_stub("--mode", "text") as judge:
        endpoint = f'[{{ base_url = "{judge.url}", extra_headers = {_toml_table(judge_headers)} }}]'
        cmd = [sys.executable, "-m", "evaluator.cli", "run", "--data", "vitabench",
               "--data-dir", str(VITA_DATA.parent), "--subset", "delivery", "--limit", "1",
               "--judge", "--report", "--engine-url", stub.url, "--out", str(root),
               "--name", "vita", "--progress", "off", "--set", "trials=2",
               "--set", f"agent.endpoint.extra_headers={_toml_table(agent)}",
               "--set", f"judge.endpoints={endpoint}"]
        environ = dict(os.environ, AGENTSWEEP_HOME=str(root))
        environ.pop("AGENTSWEEP_PLUGINS", None)
        environ["PYTHONPATH"] = str(REPO) + os.pathsep + environ.get("PYTHONPATH", "")
        r = subprocess.run(cmd, cwd=REPO, env=environ, capture_output=True, text=True,
                           timeout=300, check=False)
        assert r.returncode == 0, r.stderr
    return root / "vita"


def _records(run_dir: Path) -> list[dict]:
    return [json.loads(x) for x in (run_dir / "episodes.jsonl").read_text().splitlines()]


def test_two_trials_run_with_the_paper_profile_and_stop_on_the_marker(run_dir):
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["benchmark"] == "vitabench" and manifest["profile"] == "paper"
    assert manifest["resolved_config"]["protocol"]["max_steps"] == 300
    records = _records(run_dir)
    assert len(records) == 2 and {r["termination"] for r in records} == {"agent_stop"}
    for r in records:
        assert [c["source"] for c in r["tool_calls"]] == ["live"], r["tool_calls"]
        assert r["user_messages"][1]["content"] == "Hello, how can I help you?"


def test_each_trial_keeps_its_own_write(run_dir):
    for r in _records(run_dir):
        orders = r["extra"]["db_changes"]["orders"]
        assert len(orders) == 1 and '"e2e"' in json.dumps(orders)


def test_judged_and_reported(run_dir):
    judgements = [json.loads(x) for x in (run_dir / "judgements.jsonl").read_text().splitlines()]
    assert judgements and all(j.get("error") is None and j["score"] == 1.0 for j in judgements)
    report = json.loads((run_dir / "report.json").read_text())["runs"][0]
    vita = report["benchmarks"]["vitabench"]
    assert vita["successes"] == 2
    (delivery,) = vita["domains"]  # one task, two trials, both successes
    assert delivery["domain"] == "delivery" and delivery["max_trials"] == 2
    assert [p["value"] for p in delivery["curves"]["pass^k"]] == [1.0, 1.0]
    assert delivery["terminations"] == {"agent_stop": 2}
    assert delivery["tools"] == [{"tool": "create_delivery_order", "calls": 2, "errors": 0,
                                  "error_rate": 0.0}]
    html = (run_dir / "report.html").read_text()
    assert 'data-plot="vitabench-passk"' in html
