"""Infrastructure faults are never scored: a run whose agent, user-simulator, tool-simulator and
judge endpoints answer garbled HTTP 200 bodies (truncated, not JSON, no choices, no message)
retries them and ends with exactly the episodes, judgements and scores of a healthy run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaluator.run.results import iter_records
from perf.stub_process import stub_counters

REPO = Path(__file__).resolve().parents[2]
AGENT = {
    "X-Stub-Mode": "tool", "X-Stub-Tool-Turns": "2", "X-Stub-Tool-Share": "0.8",
    # web_search answers that are not in the sample cache go to the tool simulator
    "X-Stub-Tool-Choices": json.dumps([["web_search", {"query": "garble test unseen query"}],
                                       ["web_search", {"query": "another unseen query"}],
                                       ["weather_current_conditions", {"location": "Suzhou"}]]),
    "X-Stub-Replies": "Here is your plan.||I found two options.||[Unsolved]",
}


def _toml(headers: dict[str, str]) -> str:
    return "{ " + ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in headers.items()) + " }"


def _cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, AGENTSWEEP_HOME=str(home))
    env.pop("AGENTSWEEP_PLUGINS", None)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "evaluator.cli", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def _garbled(url: str) -> int:
    return stub_counters(url)["garbled"]


def _run(root: Path, name: str, stubs: dict[str, str], garble: dict[str, str],
         *extra: str) -> Path:
    def headers(role: str, base: dict[str, str]) -> str:
        return _toml({**base, **garble.get(role, {})})  # type: ignore[dict-item]

    r = _cli("run", "--out", str(root), "--name", name, "--limit", "1", "--trials", "2",
             "--judge", "--progress", "off",
             "--agent-url", stubs["agent"],
             "--set", f"agent.endpoint.extra_headers={headers('agent', AGENT)}",
             "--set", "agent.sampling.temperature=0.5",
             "--set", f'user.endpoint.base_url="{stubs["user"]}"',
             "--set", f"user.endpoint.extra_headers={headers('user', {})}",
             "--set", f'tool_simulator.endpoint.base_url="{stubs["sim"]}"',
             "--set", f"tool_simulator.endpoint.extra_headers={headers('sim', {})}",
             "--set", f'judge.endpoints=[{{ base_url = "{stubs["judge"]}", '
                      f"extra_headers = {headers('judge', {})} }}]",
             "--set", f'sandbox.simulated_store="{root / name}-simulated"',
             "--set", "retry.backoff_s=0.01", *extra, home=root)
    assert r.returncode == 0, r.stderr[-3000:]
    return root / name


def _episodes(run_dir: Path) -> dict[str, tuple]:
    out = {}
    for rec in iter_records(run_dir):
        calls = [(c.name, c.arguments, c.source, c.content, c.error_category)
                 for c in rec.tool_calls]
        msgs = [(m.role, m.content) for m in rec.messages]
        out[f"{rec.subset}/{rec.task_id}#{rec.unit.trial}"] = (rec.termination, msgs, calls,
                                                               rec.final_answer)
    return out


def _judgements(run_dir: Path) -> dict[tuple, tuple]:
    rows = [json.loads(x) for x in (run_dir / "judgements.jsonl").read_text().splitlines()]
    return {(j["trajectory_hash"], j["kind"]): (j.get("score"), j.get("error"), j.get("scores"),
                                                 j.get("raw"))
            for j in rows}


def _scores(run_dir: Path) -> list[tuple]:
    from evaluator.cli.judge import _run_config
    from evaluator.scoring import score_run

    settings = _run_config(run_dir).judge
    return sorted((s.unit.key, s.score, s.success, sorted(s.dims.items()))
                  for s in score_run(run_dir, settings))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    from perf.stub_server import start_stub

    root = tmp_path_factory.mktemp("faults")
    with start_stub("--mode", "text") as agent, start_stub("--mode", "text") as user, \
            start_stub("--mode", "text") as sim, start_stub("--mode", "schema") as judge:
        stubs = {"agent": agent.url, "user": user.url, "sim": sim.url, "judge": judge.url}
        healthy = _run(root, "healthy", stubs, {})
        assert {role: _garbled(url) for role, url in stubs.items()} == dict.fromkeys(stubs, 0)
        # the user simulator, tool simulator and judge: every distinct request is answered
        # with two garbled bodies first (the client retries them); the agent: one garbled
        # body, and no client retries, so the scheduler retries the whole episode
        garble = {role: {"X-Stub-Garble-First": "2"} for role in ("user", "sim", "judge")}
        garble["agent"] = {"X-Stub-Garble-First": "1"}
        faulty = _run(root, "faulty", stubs, garble,
                      "--set", "agent.endpoint.max_retries=0",
                      "--set", "retry.max_attempts=40")
        counts = {role: _garbled(url) for role, url in stubs.items()}
    return {"healthy": healthy, "faulty": faulty, "garbled": counts}


def test_every_role_was_answered_with_garbled_bodies(runs):
    counts = runs["garbled"]
    assert all(counts[role] > 0 for role in ("agent", "user", "sim", "judge")), counts
    faulty = list(iter_records(runs["faulty"]))
    assert any(r.infra_retries > 0 for r in faulty)  # the agent's faults retried episodes
    sources = {c.source for r in faulty for c in r.tool_calls}
    assert "simulated" in sources
    assert not any(c.error_category == "simulation_failed" for r in faulty for c in r.tool_calls)


def test_faulty_run_has_the_healthy_runs_episodes(runs):
    healthy, faulty = _episodes(runs["healthy"]), _episodes(runs["faulty"])
    assert len(healthy) == 6 and healthy == faulty
    assert {t[0] for t in faulty.values()} & {"agent_error", "user_error"} == set()


def test_faulty_run_has_the_healthy_runs_judgements_and_scores(runs):
    healthy, faulty = _judgements(runs["healthy"]), _judgements(runs["faulty"])
    assert healthy and healthy == faulty
    assert all(v[1] is None for v in faulty.values())  # no judge errors recorded
    assert _scores(runs["healthy"]) == _scores(runs["faulty"])
