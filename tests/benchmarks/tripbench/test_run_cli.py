"""TRIP-Bench end to end through the CLI against the stub server: `agentsweep data tripbench
generate`, then `agentsweep run --bench tripbench --data DIR --limit 2 --judge --report`. The
agent's stub calls `get_city_center_coords` (answered live by the generated world) and then
replies text without a plan; the simulator's stub answers JSON. Every dialogue runs its graph
to the end ("completed"), the rule judge scores each episode (no plan: every check violated)
and the report shows TRIP-Bench's tables; `agentsweep judge` judges it again without any
server."""

from __future__ import annotations

import json

from evaluator.benchmarks.tripbench.protocol import PROMPT_VERSION

from ..oracle_http import run_cli


def test_generate_run_judge_report(tmp_path):
    from perf.stub_server import start_stub

    data = tmp_path / "trip"
    g = run_cli("data", "tripbench", "generate", "--seed", "0", "--out", str(data), "--tasks", "7",
                home=tmp_path)
    assert g.returncode == 0, g.stderr[-3000:]
    assert (data / "world.sqlite").is_file() and (data / "tasks.jsonl").is_file()
    assert "easy 1, mid 1, hard 1, LIT 1, FIT 1, AIS 1, PMR 1" in g.stdout
    again = run_cli("data", "tripbench", "generate", "--out", str(data), home=tmp_path)
    assert again.returncode == 2 and "--force" in again.stderr

    choice = json.dumps([["get_city_center_coords", {"city_name": "Shanghai"}]])
    said = json.dumps({"instruction_ids": ["TRIP"], "user_query": "Please plan my trip."})
    with start_stub("--mode", "tool", "--tool-turns", "2") as stub:
        r = run_cli("run", "--bench", "tripbench", "--data", str(data), "--limit", "1",
                    "--subset", "easy,mid,LIT,hard-pmr",
                    "--engine-url", stub.url, "--out", str(tmp_path / "runs"), "--name", "tb",
                    "--set", f"agent.endpoint.extra_headers={{'X-Stub-Tool-Choices' = '{choice}'}}",
                    "--set", "user.endpoint.extra_headers={'X-Stub-Mode' = 'text', "
                             f"'X-Stub-Replies' = '{said}'}}",
                    "--judge", "--report", "--progress", "off", home=tmp_path)
        # table 5's single-turn protocol through the run's [options]: a recorded deviation
        one = run_cli("run", "--bench", "tripbench", "--data", str(data), "--limit", "1",
                      "--subset", "mid", "--engine-url", stub.url, "--out", str(tmp_path / "runs"),
                      "--name", "single", "--set", "options.protocol=single_turn",
                      "--set", "user.endpoint.extra_headers={'X-Stub-Mode' = 'text', "
                               f"'X-Stub-Replies' = '{said}'}}",
                      "--progress", "off", home=tmp_path)
    assert one.returncode == 0, one.stderr[-3000:]
    single = json.loads((tmp_path / "runs" / "single" / "episodes.jsonl").read_text())
    assert single["extra"]["protocol"] == "single_turn" and single["n_user_turns"] == 1
    assert single["termination"] == "completed"
    manifest = json.loads((tmp_path / "runs" / "single" / "manifest.json").read_text())
    assert manifest["deviations"]["options.protocol"] == {"profile": "multi_turn",
                                                          "used": "single_turn"}
    assert r.returncode == 0, r.stderr[-3000:]
    run = tmp_path / "runs" / "tb"
    records = [json.loads(x) for x in (run / "episodes.jsonl").read_text().splitlines()]
    # the subsets are the splits; a record's subset stays the task's difficulty
    assert sorted(x["subset"] for x in records) == ["easy", "hard", "hard", "mid"]
    assert sorted(x["extra"]["hard_set"] for x in records) == ["", "", "LIT", "PMR"]
    for rec in records:
        assert rec["benchmark"] == "tripbench" and rec["termination"] == "completed"
        extra = rec["extra"]
        assert extra["prompt_version"] == PROMPT_VERSION and extra["protocol"] == "multi_turn"
        assert extra["turn_reached"] == extra["graph_turns"] == rec["n_user_turns"]
        assert rec["tool_calls"] and rec["tool_calls"][0]["source"] == "live"
        assert "Shanghai" in rec["tool_calls"][0]["content"]
        assert extra["final_plan"] == "" and extra["context_tokens_max"] > 0
        assert [m["content"] for m in rec["messages"] if m["role"] == "user"][1] == \
            "Please plan my trip."
    judgements = [json.loads(x) for x in (run / "judgements.jsonl").read_text().splitlines()]
    assert len(judgements) == 4
    for j in judgements:
        assert j["kind"] == "tripbench_rules" and j["judge_model"] == "rule"
        assert j["score"] == 0.0 and j["scores"]["f_feas"] == 4.0
        assert j["scores"]["finished"] == 1.0
        assert j["scores"]["turns_judged"] >= 2 and j["scores"]["turn_strict"] == 0.0
    assert "TRIP-Bench success (Overall strict / loose, %)" in r.stdout
    assert "difficulty hard" in r.stdout and "violations by check" in r.stdout
    assert "split LIT" in r.stdout and "pass@k / pass^k / avg@k" in r.stdout
    assert "context max" in r.stdout
    report = json.loads((run / "report.json").read_text())
    summary = report["runs"][0]["benchmarks"]["tripbench"]
    assert summary["overall"] == {"units": 4, "strict": 0.0, "loose": 0.0,
                                  "turn_strict": 0.0, "turn_loose": 0.0}
    assert summary["violations"]["structural_validity"] == 100.0
    assert list(summary["splits"]) == ["easy", "mid", "LIT", "PMR"]
    assert summary["paper_overall"] is None          # FIT and AIS did not run
    assert summary["curves"]["overall"]["loose pass@k"][0]["value"] == 0.0
    manifest = json.loads((run / "manifest.json").read_text())
    assert "tripbench" in json.dumps(manifest)
    # judging again later needs no server: the benchmark's judges are rule checks only
    (run / "judgements.jsonl").unlink()
    j = run_cli("judge", str(run), home=tmp_path)
    assert j.returncode == 0, j.stderr[-3000:]
    assert "judged 4 (0 judge errors)" in j.stdout
    assert "tripbench  strict 0.0%  loose 0.0% over 4 episodes" in j.stdout
