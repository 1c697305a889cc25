"""GroupTravelBench end to end through the CLI against stub servers (`agentsweep run --data
grouptravelbench --data-dir ../shared/data ... --judge --report`):

- the oracle agent (`oracle.py`: answers only in the formats the built-in prompt describes)
  with a POI table of its places (`--poi-table`): PC, GU, GF and PV well above 0, the judge S
  and the Other composite in the report, with the judges in either `options.judge_layout`;
- a stub agent that calls `web_search` and never gives a plan, run without the POI table by
  `options.poi_table=none`: the chat runs its rounds and the deviation "GU/GF/PV without POI
  table" is in the manifest and the report;
- the paper profile without a POI table refuses to start with one line naming the option; a
  broken table stops the run naming its file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluator.benchmarks.grouptravelbench.data import load_grouptravel_file

from ..oracle_http import OracleProcess, run_cli
from .oracle import poi_table

REPO = Path(__file__).resolve().parents[3]
DATA_DIR = REPO.parent / "shared" / "data"
SAMPLE = DATA_DIR / "grouptravelbench" / "test_sample.jsonl"
pytestmark = pytest.mark.skipif(not SAMPLE.is_file(),
                                reason=f"GroupTravelBench data absent ({SAMPLE})")
DIMS = ("hallucination_factuality", "tool_usage_reasoning", "interaction_quality",
        "conflict_coordination", "plan_humanization")
# one stub answer that both judges read: the review (ratings Good, S = 75) and the meta-review
# (Good: x 4/5), as the reference's XML
JUDGE_ANSWER = ("<response>" + "".join(
    f"<{d}><reasoning>ok</reasoning><rating>Good</rating></{d}>" for d in DIMS)
    + "</response><meta_evaluation><reasoning>sound</reasoning><rating>Good</rating>"
    "</meta_evaluation>")


def _oracle(home: Path) -> OracleProcess:
    return OracleProcess("tests.benchmarks.grouptravelbench.oracle", "--data", str(SAMPLE),
                         home=home)


def _judge_endpoint(url: str) -> str:
    return (f'judge.endpoints=[{{base_url="{url}", '
            f'extra_headers={{"X-Stub-Replies" = "{JUDGE_ANSWER}"}}}}]')


@pytest.mark.parametrize("layout", ["reference", "prefix"])
def test_the_oracle_scores_through_agentsweep_run(tmp_path, layout):
    from perf.stub_server import start_stub

    tasks = load_grouptravel_file(SAMPLE, limit=2).tasks
    poi = tmp_path / "all_poi_by_city.json"
    poi.write_text(json.dumps(poi_table(tasks), ensure_ascii=False, indent=1), "utf-8")
    with _oracle(tmp_path) as oracle, start_stub("--mode", "text") as stub:
        r = run_cli("run", "--data", "grouptravelbench", "--data-dir", str(DATA_DIR), "--limit",
                    "2", "--trials", "1", "--agent-url", oracle.url, "--agent-model", "oracle",
                    "--engine-url", stub.url, "--poi-table", str(poi), "--out", str(tmp_path),
                    "--name", "oracle", "--set", _judge_endpoint(stub.url),
                    "--set", f"options.judge_layout={layout}", "--judge", "--report",
                    "--progress", "off", home=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    run = tmp_path / "oracle"
    records = [json.loads(x) for x in (run / "episodes.jsonl").read_text().splitlines()]
    assert [x["termination"] for x in records] == ["plan_generated"] * 2
    judgements = [json.loads(x) for x in (run / "judgements.jsonl").read_text().splitlines()]
    rules = [j for j in judgements if j["kind"] == "gtb_metrics"]
    assert len(rules) == 2 and all(j["reasoning"]["_poi_table"] == str(poi) for j in rules)
    for j in rules:
        s = j["scores"]
        assert s["pc"] == 1.0 and s["pv"] == 1.0 and s["gu"] > 2 and s["gf"] > 10, s
    # the judge layout is in the judgements' versions, and scoring reads those (S below)
    suffix = "+prefix" if layout == "prefix" else ""
    assert {j["prompt_version"] for j in judgements if j["kind"] != "gtb_metrics"} == {
        "gtb-judge-v2" + suffix, "gtb-meta-v2" + suffix}
    report = json.loads((run / "report.json").read_text())
    section = report["runs"][0]["benchmarks"]["grouptravelbench"]
    overall = section["overall"]
    assert overall["pc"]["average"] == 1.0 and overall["pv"]["average"] == 1.0
    assert section["judge"]["score"] == 60.0 and section["judge_errors"] == 0
    assert section["other"] == pytest.approx(
        (100 + overall["gf"]["average"] + 100 + 60) / 4)
    md = (run / "report.md").read_text()
    assert "| oracle | overall | 2 | 100.0 |" in md and "| 60.00 |" in md
    assert "_POI table: " + str(poi) + "_" in md
    manifest = json.loads((run / "manifest.json").read_text())
    assert "options.poi_table" not in manifest["deviations"]     # a path is the paper's table
    assert "prompts" in manifest["deviations"]                    # the built-in prompts
    assert "options.judge_layout" not in manifest["deviations"]   # not a paper field
    assert manifest["resolved_config"]["options"]["judge_layout"] == layout


def test_a_run_without_the_poi_table_is_recorded_as_a_deviation(tmp_path):
    from perf.stub_server import start_stub

    choice = json.dumps([["web_search", {"query": "Xian snacks"}]])
    with start_stub("--mode", "tool", "--tool-turns", "1") as stub, \
            start_stub("--mode", "schema") as judge:
        r = run_cli("run", "--data", "grouptravelbench", "--data-dir", str(DATA_DIR), "--limit",
                    "1", "--engine-url", stub.url, "--out", str(tmp_path), "--name", "gtb",
                    "--set", f'judge.endpoints=[{{base_url="{judge.url}"}}]',
                    "--set", "judge.structured_output=true",  # the paper profile reads free text
                    "--set", f"agent.endpoint.extra_headers={{'X-Stub-Tool-Choices' = '{choice}'}}",
                    "--set", "options.poi_table=none",
                    "--judge", "--report", "--progress", "off", home=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    run = tmp_path / "gtb"
    records = [json.loads(x) for x in (run / "episodes.jsonl").read_text().splitlines()]
    rec = records[0]
    assert rec["termination"] == "max_turn_reached" and not rec["extra"]["plan_generated"]
    # the paper profile's reference rendering (the agent's request shape) is in the version
    assert rec["extra"]["prompt_version"] == "grouptravelbench-v5+ref-render"
    assert rec["extra"]["chat"]
    calls = [e for e in rec["extra"]["chat"] if e.get("type") == "tool_call"]
    assert calls and calls[0]["name"] == "web_search" and rec["tool_calls"]
    assert rec["tool_calls"][0]["source"] == "simulated"
    judgements = [json.loads(x) for x in (run / "judgements.jsonl").read_text().splitlines()]
    kinds = {j["kind"]: j for j in judgements}
    assert set(kinds) == {"gtb_metrics", "gtb_judge", "gtb_meta"}
    assert kinds["gtb_metrics"]["prompt_version"] == "gtb-metrics-v3+poi=none"
    # a null agent (no table, no plan: the stub's replies) scores 0 on every rule metric
    metrics = kinds["gtb_metrics"]
    assert metrics["scores"].get("pc", 0) == 0 and metrics["score"] == 0
    assert not {"gu", "gf", "pv"} & set(metrics["scores"])
    assert kinds["gtb_judge"]["score"] is not None and len(kinds["gtb_judge"]["scores"]) == 5
    manifest = json.loads((run / "manifest.json").read_text())
    dev = manifest["deviations"]["options.poi_table"]
    assert dev["used"] == "none" and dev["note"] == "GU/GF/PV without POI table"
    assert "options.poi_table=none" in r.stdout and "GU/GF/PV without POI table" in r.stdout
    md = (run / "report.md").read_text()
    assert "options.poi_table=none" in md and "GU/GF/PV without POI table" in md
    assert "GroupTravelBench" in md and "PC %" in md and "judge S" in md
    assert "difficulty" in md and "compromises" in md.lower()


def test_the_paper_profile_needs_the_poi_table_and_a_broken_one_is_named(tmp_path):
    base = ("run", "--data", "grouptravelbench", "--data-dir", str(DATA_DIR), "--limit", "1",
            "--engine-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path), "--check")
    r = run_cli(*base, home=tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "no POI table" in r.stderr and "--poi-table PATH" in r.stderr
    assert "--set options.poi_table=none" in r.stderr
    bad = tmp_path / "poi2category" / "all_poi_by_city.json"
    bad.parent.mkdir()
    bad.write_text('{"西安市": [\n {"name": "大雁塔", "poi_type": "attractions"},\n'
                   ' {"name": "碑林", "opening_hours": {"rules": [{"weekdays": [8]}]}}\n]}',
                   "utf-8")
    r = run_cli(*base, "--poi-table", str(bad), home=tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert f"{bad}:3: field `西安市[1].opening_hours.rules[0].weekdays`" in r.stderr
    ok = run_cli(*base, "--set", "options.poi_table=none", home=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert "GU/GF/PV without POI table" in ok.stdout
    r = run_cli("data", "check", str(bad), home=tmp_path)
    assert r.returncode == 1
    assert f"{bad}:3: field `西安市[1].opening_hours.rules[0].weekdays`: must be a list of 1..7" \
        in r.stdout
