"""The toy benchmark of docs/adding_a_benchmark.md, end to end against the stub server: a
benchmark registered from outside agentsweep's import list (`--plugin`, $AGENTSWEEP_PLUGINS)
runs, is judged (a rule check and an LLM grader, the stub's canned `schema` judge) and
reported with its own section, through the generic CLI only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "toybench" / "data"
AGENT = {
    "X-Stub-Mode": "tool", "X-Stub-Tool-Share": "0.7",
    "X-Stub-Tool-Choices": json.dumps([["calculator", {"expression": "6 * 7"}],
                                       ["calculator", {"expression": "2 +"}]]),
    "X-Stub-Replies": "The answer is 5.||It is 42.||I think 6.||No idea.",
}


def _cli(*args: str, home: Path, plugins: str = "") -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, AGENTSWEEP_HOME=str(home))
    env.pop("AGENTSWEEP_PLUGINS", None)
    if plugins:
        env["AGENTSWEEP_PLUGINS"] = plugins
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "evaluator.cli", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from perf.stub_server import start_stub

    root = tmp_path_factory.mktemp("toy")
    headers = "{ " + ", ".join(f"{json.dumps(k)} = {json.dumps(v)}"
                               for k, v in AGENT.items()) + " }"
    with start_stub("--mode", "text") as stub, start_stub("--mode", "schema") as judge:
        r = _cli("run", "--plugin", "tests.toybench", "--data", str(DATA), "--engine-url",
                 stub.url, "--out", str(root), "--name", "toy", "--judge", "--progress", "off",
                 "--set", f"agent.endpoint.extra_headers={headers}",
                 "--set", "agent.sampling.temperature=0.5",
                 "--set", f'judge.endpoints=[{{ base_url = "{judge.url}" }}]', home=root)
        assert r.returncode == 0, r.stderr
    return root / "toy"


def test_a_plugin_benchmark_runs_with_its_paper_profile(run_dir):
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["benchmark"] == "toybench" and manifest["profile"] == "paper"
    assert manifest["resolved_config"]["plugins"] == ["tests.toybench"]
    assert manifest["trials"] == 2 and manifest["resolved_config"]["protocol"]["max_steps"] == 3
    assert manifest["sandbox"] == {"tools": "calculator (in-process)"}
    records = [json.loads(x) for x in (run_dir / "episodes.jsonl").read_text().splitlines()]
    assert len(records) == 6 and {r["benchmark"] for r in records} == {"toybench"}
    assert all(r["extra"]["prompt_version"] == "toybench-agent-v1" for r in records)
    calls = [c for r in records for c in r.get("tool_calls", [])]
    assert {c["source"] for c in calls} == {"live", "error"}  # 6*7 answered, "2 +" rejected
    assert any('"result": 42' in c["content"] for c in calls)


def test_its_judges_and_scores(run_dir):
    judgements = [json.loads(x) for x in (run_dir / "judgements.jsonl").read_text().splitlines()]
    kinds = {(j["kind"], j["judge_model"], j["prompt_version"]) for j in judgements}
    assert kinds == {("toy_exact", "rule", "toy-exact-v1"),
                     ("toy_grade", "stub-model", "toy-grader-v1")}
    assert all(j.get("error") is None for j in judgements)


def test_the_report_has_its_section_and_the_judge_summary_its_lines(run_dir):
    home = run_dir.parent
    r = _cli("report", str(run_dir), "--bootstrap", "50", home=home)
    assert r.returncode == 0, r.stderr
    assert "Toybench" in r.stdout and "grader agrees" in r.stdout
    report = json.loads((run_dir / "report.json").read_text())["runs"][0]
    section = report["benchmarks"]["toybench"]
    assert section["units"] == 6 and 0.0 <= section["accuracy"] <= 1.0
    assert report["subsets"][0]["n_scored"] == 6
    # the run directory names its plugin: judging it again needs no flag
    from perf.stub_server import start_stub

    with start_stub("--mode", "schema") as judge:
        r = _cli("judge", str(run_dir), "--rerun", "--judge-url", judge.url, home=home)
    assert r.returncode == 0, r.stderr
    assert "0 without a judge" in r.stdout and "toybench     accuracy" in r.stdout


def test_data_list_shows_a_plugin_from_the_environment(tmp_path):
    r = _cli("data", "list", "--data-dir", str(tmp_path), home=tmp_path,
             plugins="tests.toybench")
    assert r.returncode == 0, r.stderr
    assert "toybench  [Toybench; data not found]" in r.stdout
    assert "subsets: arith; protocols: arith" in r.stdout
    args = ("run", "--data", str(DATA), "--progress", "off", "--engine-url",
            "http://127.0.0.1:9/v1", "--out", str(tmp_path))
    r = _cli(*args, home=tmp_path)  # not registered: its data is nobody's
    assert r.returncode == 2 and "no benchmark files found" in r.stderr
    r = _cli(*args, home=tmp_path, plugins="tests.toybench")  # the data is found and loaded
    assert r.returncode == 2 and "cannot attach to http://127.0.0.1:9/v1" in r.stderr
