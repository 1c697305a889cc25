"""A `paper` run of TravelBench says whether its inputs are the reference's: with the built-in
prompts the summary names the prompt set as a deviation; with an (unedited) import of the
reference's prompts and nothing else changed it says "deviations: none", and the run's inputs
are then rendered and read as the reference's (the options of the paper profile, recorded in
the manifest). End to end on stub servers and TravelBench's data (../shared/data/travelbench);
the "reference" is the invented checkout of tests/evaluator/test_prompt_sets.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaluator.benchmarks.travelbench.prompt_import import import_reference
from evaluator.prompt_sets import NOT_REFERENCE_NOTE
from tests.evaluator.test_prompt_sets import make_checkout

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / ".." / "shared" / "data" / "travelbench"
pytestmark = pytest.mark.skipif(not (DATA / "single_turn.jsonl").is_file(),
                                reason=f"no TravelBench data at {DATA.resolve()}")
JUDGE = ("<response><reasoning_planning><rating>较好</rating></reasoning_planning>"
         "<summarization_extraction><rating>一般</rating></summarization_extraction>"
         "<presentation><rating>优秀</rating></presentation></response> "
         "<meta_evaluation><rating>较好</rating></meta_evaluation>")


def _run(tmp: Path, name: str, prompts: str, agent_url: str, judge_url: str
         ) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, AGENTSWEEP_HOME=str(tmp / "home"))
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    headers = "{ " + f'"X-Stub-Replies" = {json.dumps(JUDGE, ensure_ascii=False)}' + " }"
    cmd = [sys.executable, "-m", "evaluator.cli", "run", "--data", str(DATA), "--subset",
           "single_turn", "--limit", "1", "--engine-url", agent_url, "--out", str(tmp),
           "--name", name, "--judge", "--progress", "off", "--set", f'prompts="{prompts}"',
           "--set", (f'judge.endpoints=[{{ base_url = "{judge_url}", extra_headers = '
                    f"{headers} }}]")]
    return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
                          check=False)


def test_paper_runs_say_whether_the_prompts_are_the_references(tmp_path):
    from perf.stub_server import start_stub

    import_reference(make_checkout(tmp_path / "ref"), tmp_path / "home" / "prompts" / "ref",
                     name="ref")
    with start_stub("--mode", "text") as agent, start_stub("--mode", "text") as judge:
        builtin = _run(tmp_path, "builtin", "builtin", agent.url, judge.url)
        imported = _run(tmp_path, "imported", "ref", agent.url, judge.url)
    assert builtin.returncode == 0, builtin.stderr
    assert imported.returncode == 0, imported.stderr
    assert ("profile paper; deviations: prompts=builtin (paper: the reference's, imported "
            f"(agentsweep prompts import)): {NOT_REFERENCE_NOTE}") in builtin.stdout
    assert "profile paper; deviations: none" in imported.stdout
    for name in ("builtin", "imported"):
        manifest = json.loads((tmp_path / name / "manifest.json").read_text())
        assert manifest["resolved_config"]["options"] == {  # the judges in the reference's order
            "rendering": "reference", "judge_answers": "reference", "judge_layout": "reference"}
        judgements = [json.loads(x) for x in (tmp_path / name / "judgements.jsonl")
                      .read_text().splitlines()]
        # three trials, rubric and meta judged, read as the reference reads them
        assert {j["prompt_version"].split("+ref-answers")[0] for j in judgements} == {
            "travel-rubric-v2+ref-render", "travel-meta-v1+ref-render"}
        assert all(j.get("error") is None for j in judgements)
        assert {j["kind"]: j["scores"] for j in judgements} == {
            "travel_rubric": {"reasoning_planning": 4.0, "summarization_extraction": 3.0,
                              "presentation": 5.0}, "meta": {"meta": 4.0}}
    records = [json.loads(x) for x in (tmp_path / "imported" / "episodes.jsonl")
               .read_text().splitlines()]
    system = records[0]["messages"][0]["content"]
    assert system.startswith("\nFake single-turn helper at ") and system.endswith(".\n")
