"""A run directory written by an older version is resumed, judged and reported with the same
numbers.

`tests/fixtures/old_run/run` was written by `tests/fixtures/make_old_run.py` at commit 6825ad5,
before benchmarks became plugins: the built-in sample (3 subsets x 2 tasks x 2 trials) against
the stub server, judged by the stub's canned `schema` judge, with three units missing and two
units not judged. `expected/` is that commit's report of the complete run. Today's code must
rerun the missing units into the same trajectories (same prompts, same sandbox answers and
error texts), judge exactly the missing judgement keys (the same prompt versions), and report
the same numbers.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.fixtures.make_old_run import unit_facts

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "old_run"


def _cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, AGENTSWEEP_HOME=str(home))
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "evaluator.cli", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def _tables(markdown: str) -> list[str]:
    """The report's lines from the Summary table on (the title and Runs table name the
    directory and the time), up to the throughput table: the resume recorded its own
    telemetry (timeseries.jsonl), which the old code did not. Notes under the titles (the
    lines in _italics_) are text, not numbers: left out."""
    lines = [x for x in markdown.splitlines() if x and not x.startswith("_")]
    end = next((i for i, x in enumerate(lines) if x.startswith("### Throughput")), len(lines))
    out = lines[lines.index("### Summary"):end]
    while out and not out[-1]:
        out.pop()
    return out


@pytest.fixture(scope="module")
def resumed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from perf.stub_server import start_stub

    root = tmp_path_factory.mktemp("old")
    run_dir = root / "full"  # the run's name when it was written (the report's label)
    shutil.copytree(FIXTURE / "run", run_dir)
    home = root / "home"
    with start_stub("--mode", "text") as stub, start_stub("--mode", "schema") as judge:
        r = _cli("run", "--resume", str(run_dir), "--engine-url", stub.url, "--progress", "off",
                 home=home)
        assert r.returncode == 0, r.stderr
        assert "3 this session, 9 resumed" in r.stdout, r.stdout
        r = _cli("judge", str(run_dir), "--judge-url", judge.url, home=home)
        assert r.returncode == 0, r.stderr
    r = _cli("report", str(run_dir), "--bootstrap", "200", home=home)
    assert r.returncode == 0, r.stderr
    return run_dir


def test_resumed_units_have_the_same_trajectories_and_prompt_versions(resumed):
    want = json.loads((FIXTURE / "expected" / "units.json").read_text())
    got = unit_facts(resumed)
    assert sorted(got) == sorted(want)
    for key, facts in want.items():
        assert got[key]["trajectory_hash"] == facts["trajectory_hash"], key
        assert got[key]["prompt_version"] == facts["prompt_version"], key


def test_judging_writes_exactly_the_missing_judgement_keys(resumed):
    want = json.loads((FIXTURE / "expected" / "units.json").read_text())
    got = unit_facts(resumed)
    for key, facts in want.items():
        assert got[key]["judgements"] == facts["judgements"], key
    lines = [json.loads(x) for x in (resumed / "judgements.jsonl").read_text().splitlines()]
    keys = Counter((j["trajectory_hash"], j["judge_model"], j["prompt_version"], j["kind"])
                   for j in lines)
    assert set(keys.values()) == {1}  # nothing judged twice: old keys were recognised


def test_report_numbers_are_identical(resumed):
    want = json.loads((FIXTURE / "expected" / "report.json").read_text())["runs"][0]
    got = json.loads((resumed / "report.json").read_text())["runs"][0]
    assert got["subsets"] == want["subsets"]
    # the TravelBench section: report.json's `travel` is `benchmarks.travelbench` since
    # benchmarks became plugins; its numbers are the same
    assert got["benchmarks"]["travelbench"] == want["travel"]
    # the same facts, plus those added since (for the paired comparison's warnings)
    assert {k: got["info"][k] for k in want["info"]} == want["info"]
    assert set(got["info"]) - set(want["info"]) <= {"benchmark", "judge models", "models"}
    md_want = (FIXTURE / "expected" / "report.md").read_text()
    md_got = (resumed / "report.md").read_text()
    assert _tables(md_got) == _tables(md_want)


def test_the_viewer_shows_the_same_scores_and_verdicts(resumed):
    """expected/view.json: the viewer's rows of the same resumed run, by the old code."""
    from evaluator.view.query import RunView

    v = RunView("r", resumed, "r", persist=False)
    keys = ("key", "score", "verdict", "failed", "termination", "tools", "tool_errors",
            "judgements")
    got = sorted(({k: r[k] for k in keys} for r in v.rows(v.query())), key=lambda r: r["key"])
    assert got == json.loads((FIXTURE / "expected" / "view.json").read_text())
