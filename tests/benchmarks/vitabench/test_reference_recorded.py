"""Optional: recorded trajectories. `agentsweep run --judge` plays delivery and in-store tasks
under the paper profile with the imported prompts against the stub server (perf/stub_server:
the agent calls tools, one of them with non-ASCII arguments, then talks; the user talks; the
judge answers in the reference's format), the stubs record every request as it arrived on the
wire. Each recorded episode is then played by the reference from the same model answers, and
every request the reference builds (agent, user simulator, judge) must be one of the requests
agentsweep sent, as the server reads them; the reference's verdicts must be the recorded
judgement's. The run's summary must say `deviations none`. Runs only with
VITABENCH_REFERENCE_SRC (see reference_runner.py).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from evaluator.benchmarks.vitabench.prompt_import import import_reference

from .helpers import VITA_DATA, load_tasks
from .reference_runner import REF_SRC, Crashed, ReferenceRunner, canonical, needs_reference
from .scripts import CREATES, note_ids

pytestmark = needs_reference
REPO = Path(__file__).resolve().parents[3]
WINDOW = re.compile(r"^\[window \d+/\d+\]\n", re.MULTILINE)


def _table(headers: dict[str, str]) -> str:
    return "{ " + ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in headers.items()) \
        + " }"


def _recorded(url: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(f"{url}/stub/requests") as r:  # 127.0.0.1
        return [json.loads(x["body"]) for x in json.loads(r.read())]


def _key(request: dict[str, Any]) -> str:
    return json.dumps({"messages": canonical(request["messages"]),
                       "tools": request.get("tools")}, sort_keys=True, ensure_ascii=False)


def _run(root: Path, domain: str, prompts: Path) -> tuple[Path, list[Any], list[Any], str]:
    from perf.stub_server import start_stub

    search = {"delivery": "delivery_store_search_recommand",
              "instore": "instore_shop_search_recommend"}[domain]
    choices = [["get_user_all_orders", {}], [search, {"keywords": ["面条", "noodles"]}],
               ["longitude_latitude_to_distance", {"longitude1": 121.5, "latitude1": 38.9,
                                                   "longitude2": 121.58, "latitude2": 38.91}]]
    agent = {"X-Stub-Mode": "tool", "X-Stub-Tool-Turns": "3",
             "X-Stub-Tool-Choices": json.dumps(choices, ensure_ascii=False),
             "X-Stub-Replies": "I can do that for you. ###STOP###||Let me check that. ||"
                               "  Which one would you like?"}
    user = {"X-Stub-Mode": "text",
            "X-Stub-Replies": "I want lunch delivered.||Yes, please help me place the order"
                              "||The first one, thanks. "}
    good = json.dumps([{"rubric_idx": "rubric_0", "rubric": "r", "justification": "[2] ok",
                        "meetExpectation": True}])
    judge_replies = f"[]||{good}||Evaluation: ```json {good} ``` done"
    with start_stub("--mode", "text", "--record") as stub, \
            start_stub("--mode", "text", "--record") as judge:
        endpoint = (f'[{{ base_url = "{judge.url}", extra_headers = '
                    f'{_table({"X-Stub-Mode": "text", "X-Stub-Replies": judge_replies})} }}]')
        cmd = [sys.executable, "-m", "evaluator.cli", "run", "--data", "vitabench",
               "--data-dir", str(VITA_DATA.parent), "--subset", domain, "--limit", "2",
               "--judge", "--engine-url", stub.url, "--out", str(root), "--name", domain,
               "--progress", "off", "--set", f"prompts={prompts}",
               "--set", f"agent.endpoint.extra_headers={_table(agent)}",
               "--set", f"user.endpoint.extra_headers={_table(user)}",
               "--set", f"judge.endpoints={endpoint}"]
        environ = dict(os.environ, AGENTSWEEP_HOME=str(root))
        environ["PYTHONPATH"] = str(REPO) + os.pathsep + environ.get("PYTHONPATH", "")
        r = subprocess.run(cmd, cwd=REPO, env=environ, capture_output=True, text=True,
                           timeout=600, check=False)
        assert r.returncode == 0, r.stderr
        return root / domain, _recorded(stub.root), _recorded(judge.root), r.stdout + r.stderr


@pytest.fixture(scope="module")
def ref() -> ReferenceRunner:
    return ReferenceRunner()


@pytest.mark.parametrize("domain", ["delivery", "instore"])
def test_recorded_trajectories(ref: ReferenceRunner, tmp_path: Path, domain: str) -> None:
    prompts, _ = import_reference(Path(REF_SRC).parent, tmp_path / "prompts")
    run_dir, sent, judged, output = _run(tmp_path, domain, prompts)
    assert "profile paper; deviations: none" in output, output
    sent_keys = Counter(_key(r) for r in sent)
    judge_keys = Counter(_key({**r, "tools": None}) for r in judged)
    raws = {t["id"]: t for t in load_tasks(domain)}
    records = [json.loads(x) for x in (run_dir / "episodes.jsonl").read_text().splitlines()]
    judgements = {j["trajectory_hash"]: j for j in map(
        json.loads, (run_dir / "judgements.jsonl").read_text().splitlines())}
    import msgspec

    from evaluator.judges.transcript import trajectory_hash
    from evaluator.records import EpisodeRecord

    compared = Counter()
    for rec in records:
        raw = raws[rec["task_id"]]
        agent = [{"content": m.get("content"), "tool_calls": [
            {"id": c["id"], "name": c["function"]["name"],
             "arguments": c["function"].get("arguments", "{}")}
            for c in m.get("tool_calls") or []] or None}
            for m in rec["messages"] if m["role"] == "assistant"]
        user = [{"content": m.get("content")} for m in rec["user_messages"]
                if m["role"] == "assistant"]
        ids: list[str] = []
        for c in rec["tool_calls"]:
            if c["name"] in CREATES:
                note_ids(c["content"], ids)
        theirs, sim = ref.trial(raw, [domain], agent, user, ids)
        assert not isinstance(sim, Crashed), sim
        assert sim.termination_reason == rec["termination"]
        for role in ("agent", "user"):
            for req in theirs[role]:
                assert sent_keys[_key(req)] > 0, (role, req["messages"][-1])
                compared[role] += 1
        thash = trajectory_hash(msgspec.convert(rec, EpisodeRecord))
        j = judgements[thash]
        answers = WINDOW.split(j["raw"])[1:]
        answers = [a.removesuffix("\n\n") for a in answers]
        theirs_judge, info = ref.judge(raw, sim.messages, answers)
        for req in theirs_judge:
            assert judge_keys[_key({**req, "tools": None})] > 0, req["messages"][1]
            compared["judge"] += 1
        assert j["score"] == info.reward
    print(f"\n{domain}: {len(records)} recorded episodes, requests found on the wire: "
          f"{dict(compared)} (sent: {len(sent)} agent/user, {len(judged)} judge)")
    assert compared["agent"] and compared["user"] and compared["judge"]
