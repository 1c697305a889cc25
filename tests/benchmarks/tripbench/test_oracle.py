"""TRIP-Bench's scoring end to end with a scripted oracle (`oracle.py`): on a generated task set
of every group (easy, mid, plain hard, LIT, FIT, AIS, PMR), `agentsweep run --judge --report`
walks each dialogue graph to its end and the rule judge passes every final plan, strict; the
null agent's run (test_run_cli.py: no plan) scores 0."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from ..oracle_http import OracleProcess, run_cli


def _run_with_oracle(data: Path, name: str, home: Path, *oracle_args: str
                     ) -> subprocess.CompletedProcess[str]:
    with OracleProcess("tests.benchmarks.tripbench.oracle", "--data", str(data), *oracle_args,
                       home=home) as oracle:
        return run_cli("run", "--bench", "tripbench", "--data", str(data), "--engine-url",
                       oracle.url, "--out", str(home / "runs"), "--name", name, "--judge",
                       "--report", "--progress", "off", home=home)


def test_the_oracle_scores_every_group_through_agentsweep_run(tmp_path: Path) -> None:
    data = tmp_path / "trip"
    g = run_cli("data", "tripbench", "generate", "--seed", "3", "--out", str(data), "--tasks",
                "7", home=tmp_path)
    assert g.returncode == 0, g.stderr[-3000:]
    r = _run_with_oracle(data, "oracle", tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    run = tmp_path / "runs" / "oracle"
    records = [json.loads(x) for x in (run / "episodes.jsonl").read_text().splitlines()]
    assert len(records) == 7
    assert sorted(x["extra"]["hard_set"] for x in records) == ["", "", "", "AIS", "FIT",
                                                                "LIT", "PMR"]
    for rec in records:
        extra = rec["extra"]
        assert rec["termination"] == "completed"
        assert extra["turn_reached"] == extra["graph_turns"] >= 2
        assert extra["final_plan_turn"] == extra["graph_turns"]
        assert extra["scripted_user_turns"] == extra["graph_turns"]   # the notes, plainly
    judgements = [json.loads(x) for x in (run / "judgements.jsonl").read_text().splitlines()]
    assert len(judgements) == 7
    for j in judgements:
        assert j["kind"] == "tripbench_rules" and not j.get("error")
        assert j["score"] == 1.0 and j["scores"]["strict"] == 1.0, j["reasoning"]
        assert j["scores"]["f_feas"] == 0.0 and j["scores"]["f_user"] == 0.0
    summary = json.loads((run / "report.json").read_text())["runs"][0]["benchmarks"][
        "tripbench"]
    assert summary["overall"]["units"] == 7
    assert summary["overall"]["strict"] == summary["overall"]["loose"] == 100.0
    assert all(v == 0.0 for v in summary["violations"].values())
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["profile"] == "paper" and not manifest.get("deviations")

    # the same tasks, every second one (0, 2, 4, 6) answered without a plan: those fail, the
    # others pass, and the pooled Overall is 3 of 7
    half = _run_with_oracle(data, "half", tmp_path, "--miss-every", "2")
    assert half.returncode == 0, half.stderr[-3000:]
    run = tmp_path / "runs" / "half"
    scores = {j["unit"]["task"].rsplit("/", 1)[1]: j["score"] for j in map(
        json.loads, (run / "judgements.jsonl").read_text().splitlines())}
    assert scores == {f"trip-3-{i:04d}": float(i % 2) for i in range(7)}
    summary = json.loads((run / "report.json").read_text())["runs"][0]["benchmarks"][
        "tripbench"]
    assert summary["overall"]["strict"] == round(100 * 3 / 7, 2)       # 42.86
