"""One VitaBench episode end to end on the embedded engine (integration).

`agentsweep run` plays one real delivery task (agent, user simulator and tool environment all
on the engine, a short step limit and small output caps so that it takes seconds on a CPU),
writes the record and the report; then `agentsweep judge` sends the trajectory to the
sliding-window evaluator on the same engine. The 135M model rarely ends an episode by itself,
so the judged copy is the same trajectory marked as ended by the agent (a step-limit episode
is scored 0 without a judge call, as the reference does).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from evaluator.judges.pool import read_judgements
from evaluator.run.results import EPISODES_FILE, iter_records

from .helpers import VITA_DATA

REPO = Path(__file__).resolve().parents[3]
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not (VITA_DATA / "delivery" / "tasks_en.json").is_file(),
                       reason=f"VitaBench delivery tasks not present under {VITA_DATA}"),
]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "evaluator.cli", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=1500, check=False)


def test_one_delivery_episode_runs_reports_and_is_judged_on_the_engine(engine, tmp_path):
    r = _cli("run", "--bench", "vitabench", "--domain", "delivery", "--data", str(VITA_DATA),
             "--limit", "1", "--trials", "1", "--engine-url", engine.base_url,
             "--out", str(tmp_path), "--name", "v", "--progress", "off", "--report",
             "--set", "protocol.max_steps=5", "--set", "agent.sampling.max_tokens=48",
             "--set", "user.sampling.max_tokens=32")
    assert r.returncode == 0, r.stderr[-3000:]
    run_dir = tmp_path / "v"
    (rec,) = list(iter_records(run_dir))
    assert (rec.benchmark, rec.subset) == ("vitabench", "delivery")
    assert rec.termination in ("max_steps", "agent_stop", "user_stop")
    assert 1 <= rec.extra["steps"] <= 5
    assert rec.usage["agent"].prompt_tokens > 0 and rec.usage["user"].prompt_tokens > 0
    assert any(m.role == "user" and m.content for m in rec.messages)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["profile"] == "paper"
    assert manifest["deviations"]["protocol.max_steps"] == {"profile": 300, "used": 5}
    report = (run_dir / "report.md").read_text()
    assert "vitabench" in report.lower() and rec.termination in report

    # the judge on the engine, over the same trajectory ended by the agent
    judged = tmp_path / "j"
    judged.mkdir()
    for name in ("manifest.json", "config.toml"):
        (judged / name).write_bytes((run_dir / name).read_bytes())
    ended = msgspec.structs.replace(rec, termination="agent_stop")
    (judged / EPISODES_FILE).write_bytes(msgspec.json.encode(ended) + b"\n")
    r = _cli("judge", str(judged), "--judge-url", engine.base_url, "--judge-model", engine.model,
             "--set", "judge.structured_output=true", "--set", "judge.sampling.max_tokens=512")
    assert r.returncode == 0, r.stderr[-3000:]
    assert "judged 1 (" in r.stdout
    (j,) = read_judgements(judged)
    assert j.kind == "sliding_window" and j.judge_model == engine.model
    assert j.prompt_version.startswith("sliding-window-v3")
    assert j.unit == rec.unit and j.attempts >= 1
    if j.error is None:      # a verdict: one 0/1 state per rubric, the unit's score from them
        assert j.scores and set(j.scores.values()) <= {0.0, 1.0}
        assert j.score == (1.0 if all(j.scores.values()) else 0.0)
    else:                    # the small model's answer never parsed: a judge error, not a 0
        assert j.score is None and "window" in j.error
    assert _cli("report", str(judged)).returncode == 0
    assert "judge.structured_output=true (agentsweep judge --set)" in (
        judged / "report.md").read_text()
