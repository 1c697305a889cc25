"""Recorded trajectories: `agentsweep run --judge` on TravelBench's data under the `paper`
profile with the reference's prompts imported, every role on its own stub server that records
the requests it receives; then every recorded episode is replayed through the reference's own
code (the agent's answers, the simulated user's replies and the tool simulator's answer as the
stubs gave them) and the requests the reference builds must be the ones the stubs received,
byte for byte: agent, user simulator, tool simulator, rubric judge and meta-judge.

Skipped unless TRAVELBENCH_REFERENCE names a checkout (see reference_harness.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from evaluator.benchmarks.travelbench.prompt_import import import_reference
from evaluator.benchmarks.travelbench.prompting import JUDGE_DIMENSIONS

from .reference_harness import DATA, Reference, Turn, as_json, checkout

REF = checkout()
pytestmark = pytest.mark.skipif(
    REF is None or not (DATA / "single_turn.jsonl").is_file(),
    reason="set TRAVELBENCH_REFERENCE to a checkout of small-xiangcheng/TravelBench")
REPO = Path(__file__).resolve().parents[3]
FINISH = "[Finish Conversation]"
TOOL_TEXT = "模拟结果：北京南站 08:00 发车"
CALLS = [
    ["travel_search_flights", {"origin": "北京市", "destination": "上海市",
                               "date": "2025-10-28"}],
    ["travel_search_trains", {"origin": "火星市", "destination": "上海市",
                              "date": "2025-10-28", "days": 20}],
    ["map_search_places", {"query": "火锅", "region": "朝阳区"}],
    ["weather_current_conditions", {"location": "北京市", "time": "now"}],
    ["web_search", {}],
    ["map_compute_routes", {"origin": "39.9,116.4", "destination": "31.2,121.5",
                            "modes": ["driving", "flying"]}],
    ["weather_forecast_days", {"location": "上海市", "date": "2025-10-29", "days": 3}],
    ["map_search_places", {"query": "加油站", "center": "24.89,102.80", "radius": 3000}],
    ["web_search", {"query": "昆明 修车"}],
]


def _answer(dims: list[str]) -> str:
    return "<response>" + "".join(
        f"<{d}><reasoning>关于 {d}</reasoning><rating>{r}</rating></{d}>"
        for d, r in zip(dims, ["较好", "一般", "优秀", "较差"], strict=False)) + "</response>"


JUDGE_REPLY = (_answer(JUDGE_DIMENSIONS["multi_turn"]) + " <meta_evaluation><reasoning>审核"
               "</reasoning><rating>较好</rating></meta_evaluation>")


def _requests(root: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(root + "/stub/requests") as r:
        return [json.loads(x["body"]) for x in json.loads(r.read())]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from perf.stub_server import start_stub

    assert REF is not None
    tmp = tmp_path_factory.mktemp("stubrun")
    home = tmp / "home"
    import_reference(REF, home / "prompts" / "tb", name="tb")
    headers = {"X-Stub-Mode": "tool", "X-Stub-Tool-Turns": "3",
               "X-Stub-Tool-Choices": json.dumps(CALLS, ensure_ascii=False)}

    def toml(d: dict[str, str]) -> str:
        return "{ " + ", ".join(f"{json.dumps(k)} = {json.dumps(v, ensure_ascii=False)}"
                                for k, v in d.items()) + " }"

    with start_stub("--mode", "text", "--record") as agent, \
            start_stub("--mode", "text", "--record") as user, \
            start_stub("--mode", "text", "--record") as tool, \
            start_stub("--mode", "text", "--record") as judge:
        env = dict(os.environ, AGENTSWEEP_HOME=str(home))
        env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
        sets = [
            "prompts=\"tb\"",
            f"agent.endpoint={{ base_url = \"{agent.url}\", extra_headers = {toml(headers)} }}",
            (f"user.endpoint={{ base_url = \"{user.url}\", extra_headers = "
            f"{toml({'X-Stub-Replies': '好的，就这样||' + FINISH})} }}"),
            (f"tool_simulator.endpoint={{ base_url = \"{tool.url}\", extra_headers = "
            f"{toml({'X-Stub-Replies': TOOL_TEXT})} }}"),
            (f"judge.endpoints=[{{ base_url = \"{judge.url}\", extra_headers = "
            f"{toml({'X-Stub-Replies': JUDGE_REPLY})} }}]"),
        ]
        cmd = [sys.executable, "-m", "evaluator.cli", "run", "--data", str(DATA), "--limit", "3",
               "--trials", "1", "--out", str(tmp), "--name", "rec", "--judge", "--progress",
               "off", *[a for s in sets for a in ("--set", s)]]
        done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True,
                              timeout=600, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        got = {name: _requests(stub.root) for name, stub in
               (("agent", agent), ("user", user), ("tool", tool), ("judge", judge))}
    run_dir = tmp / "rec"
    episodes = [json.loads(x) for x in (run_dir / "episodes.jsonl").read_text().splitlines()]
    return {"requests": got, "episodes": episodes, "stdout": done.stdout,
            "step_limit": (home / "prompts" / "tb" / "agent_step_limit.txt").read_text()}


def _scripts(episode: dict[str, Any], step_limit: str) -> tuple[list[Turn], list[str]]:
    """The agent's answers and the simulated user's replies of a recorded episode."""
    raw = {c["call_id"]: c["arguments"] for c in episode.get("tool_calls", [])}
    agent = []
    for m in episode["messages"]:
        if m["role"] != "assistant" or m.get("content") == step_limit.rstrip("\n"):
            continue
        calls = [(c["id"], c["function"]["name"], raw[c["id"]])
                 for c in m.get("tool_calls") or []]
        agent.append(Turn(m.get("content"), calls))
    user = [m.get("content") or "" for m in episode.get("user_messages", [])
            if m["role"] == "assistant"][1:]  # the first is the query
    return agent, user


def test_recorded_runs_match_the_references_requests(recorded):
    """Every request the stubs received is one the reference builds for the same episode."""
    assert "profile paper; deviations: trials=1 (paper: 3)" in recorded["stdout"]
    ref = Reference(REF)
    lines = {}
    for fname in ("single_turn.jsonl", "multi_turn.jsonl", "unsolve.jsonl"):
        for x in (DATA / fname).read_text(encoding="utf-8").splitlines():
            d = json.loads(x)
            lines[(fname, d["trace_id"])] = d
    want: dict[str, Counter[str]] = {k: Counter() for k in ("agent", "user", "tool", "judge")}
    subset_file = {"single_turn": "single_turn.jsonl", "multi_turn": "multi_turn.jsonl",
                   "unsolvable": "unsolve.jsonl"}
    for ep in recorded["episodes"]:
        agent, user = _scripts(ep, recorded["step_limit"])
        line = lines[(subset_file[ep["subset"]], ep["task_id"])]
        trajectory = ref.run(ep["subset"], line, agent, user, lambda messages: TOOL_TEXT)
        want["agent"].update(ref.requests("agent://"))
        want["user"].update(ref.requests("user://"))
        want["tool"].update(ref.requests("tool://"))
        if ep["subset"] != "unsolvable":
            mode = ep["subset"].replace("_", "-")
            _, rubric, meta = ref.judge_prompts(trajectory, mode, [JUDGE_REPLY], [JUDGE_REPLY])
            want["judge"].update(rubric + meta)
    got = {k: Counter(as_json(b["messages"]) for b in v)
           for k, v in recorded["requests"].items()}
    # one simulated answer serves every episode that makes the same call (answer store);
    # the reference simulates each time
    assert set(got["tool"]) == set(want["tool"])
    for role in ("agent", "user", "judge"):
        assert got[role] == want[role], role
    print("stub-recorded requests equal to the reference's: " + ", ".join(
        f"{k} {sum(v.values())}" for k, v in got.items()))
    assert all(got[k] for k in got)
