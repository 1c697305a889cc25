"""Journal replay after kill -9: a multi-turn TravelBench episode against deterministic stubs
(agent with tool calls, user simulator, tool simulator) is killed mid-dialogue; `--resume`
replays the journaled responses without sending them again and ends with the record of an
uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evaluator.run.journal import JOURNAL_FILE, SIMULATOR, read_journal
from evaluator.run.manifest import read_manifest
from evaluator.run.results import EPISODES_FILE, iter_records
from perf.stub_process import stub_counters

REPO = Path(__file__).resolve().parents[2]
MAX_TURNS = 5
AGENT = {  # two tool-calling replies (web_search misses go to the tool simulator), then text
    "X-Stub-Mode": "tool", "X-Stub-Tool-Turns": "2", "X-Stub-Sleep": "0.3",
    "X-Stub-Tool-Choices": json.dumps([["web_search", {"query": "journal test unseen query"}],
                                       ["web_search", {"query": "another unseen query"}]]),
    "X-Stub-Replies": "Here is your plan.||I found two options.||Which day suits you?",
}
USER = {"X-Stub-Sleep": "0.2",
        "X-Stub-Replies": "Tell me more.||Cheaper, please.||What about the weekend?"}
SIM = {"X-Stub-Replies": '{"results": ["a"]}||{"results": ["b", "c"]}'}


def _toml(headers: dict[str, str]) -> str:
    return "{ " + ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in headers.items()) + " }"


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ, AGENTSWEEP_HOME=str(home))
    env.pop("AGENTSWEEP_PLUGINS", None)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _args(root: Path, name: str, stubs: dict[str, str]) -> list[str]:
    return [sys.executable, "-m", "evaluator.cli", "run", "--out", str(root), "--name", name,
            "--subset", "multi_turn", "--limit", "1", "--trials", "1", "--progress", "off",
            "--agent-url", stubs["agent"],
            "--set", f"agent.endpoint.extra_headers={_toml(AGENT)}",
            "--set", "agent.sampling.temperature=0.5",
            "--set", f'user.endpoint.base_url="{stubs["user"]}"',
            "--set", f"user.endpoint.extra_headers={_toml(USER)}",
            "--set", f'tool_simulator.endpoint.base_url="{stubs["sim"]}"',
            "--set", f"tool_simulator.endpoint.extra_headers={_toml(SIM)}",
            "--set", f'sandbox.simulated_store="{root / name}-simulated"',
            "--set", f"protocol.max_turns={MAX_TURNS}"]


def _requests(stubs: dict[str, str]) -> dict[str, int]:
    return {role: stub_counters(url)["requests"] for role, url in stubs.items()}


def _sent(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {role: after[role] - before[role] for role in before}


def _journaled(run_dir: Path) -> list:
    """The journal's entries (of the run's one unit) as a reader sees them now."""
    units = read_journal(run_dir / JOURNAL_FILE)
    return next(iter(units.values()), [])


def _comparable(run_dir: Path) -> dict:
    """The run's one record without what differs between two runs of the same episode:
    wall-clock times, the run name in the unit id, and the replay note."""
    [rec] = list(iter_records(run_dir))
    data = json.loads(json.dumps(rec, default=lambda o: {
        f: getattr(o, f) for f in o.__struct_fields__}))
    for key in ("timings", "started_at", "finished_at", "replay", "calls"):
        data.pop(key, None)
    data["unit"].pop("run")
    for call in data["tool_calls"]:
        call.pop("latency_s", None)
    return data


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict:
    from perf.stub_server import start_stub

    root = tmp_path_factory.mktemp("journal")
    env = _env(root)
    with start_stub("--mode", "text") as agent, start_stub("--mode", "text") as user, \
            start_stub("--mode", "text") as sim:
        stubs = {"agent": agent.url, "user": user.url, "sim": sim.url}

        c0 = _requests(stubs)
        whole = subprocess.run(_args(root, "whole", stubs), cwd=REPO, env=env, timeout=300,
                               capture_output=True, text=True, check=False)
        assert whole.returncode == 0, whole.stderr[-3000:]
        c1 = _requests(stubs)

        killed = root / "killed"
        proc = subprocess.Popen(_args(root, "killed", stubs), cwd=REPO, env=env, text=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while True:  # kill -9 mid-dialogue: the simulator has answered, the episode goes on
            entries = _journaled(killed)
            if len(entries) >= 4 and any(e.r == "user" for e in entries):
                proc.send_signal(signal.SIGKILL)
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise AssertionError(f"the run ended before the kill: {proc.communicate()}")
            time.sleep(0.005)
        proc.communicate(timeout=60)
        at_kill = _journaled(killed)
        time.sleep(0.5)  # a request sent just before the kill is counted by its stub by now
        c2 = _requests(stubs)

        resume = subprocess.run(
            [sys.executable, "-m", "evaluator.cli", "run", "--resume", str(killed),
             "--progress", "off"], cwd=REPO, env=env, timeout=300, capture_output=True,
            text=True, check=False)
        assert resume.returncode == 0, resume.stderr[-3000:]
        c3 = _requests(stubs)
    return {"whole": root / "whole", "killed": killed, "at_kill": at_kill, "resume": resume,
            "whole_sent": _sent(c0, c1), "before_kill_sent": _sent(c1, c2),
            "resume_sent": _sent(c2, c3)}


def test_the_kill_came_mid_dialogue(runs):
    at_kill = runs["at_kill"]
    roles = [e.r for e in at_kill]
    assert len(at_kill) >= 4 and "user" in roles and "agent" in roles
    assert SIMULATOR in roles  # the tool simulator's answers are journaled too
    [whole] = list(iter_records(runs["whole"]))
    assert whole.termination == "max_turns" and whole.extra["rounds"] == MAX_TURNS
    # the episode was far from done: fewer agent/user responses journaled than it needs
    assert roles.count("user") < MAX_TURNS and roles.count("agent") < whole.n_agent_calls


def test_the_resumed_episode_equals_an_uninterrupted_one(runs):
    assert _comparable(runs["killed"]) == _comparable(runs["whole"])
    [rec] = list(iter_records(runs["killed"]))
    at_kill = runs["at_kill"]
    assert rec.replay is not None and rec.replay.mismatch_at is None
    assert rec.replay.journaled == len(at_kill)
    for role in ("agent", "user"):  # every journaled answer of the dialogue was replayed
        assert rec.replay.by_role.get(role, 0) == sum(1 for e in at_kill if e.r == role)
    assert rec.replay.calls >= 2
    assert rec.usage == next(iter(iter_records(runs["whole"]))).usage  # replayed usage counts


def test_replayed_calls_were_not_sent_again(runs):
    [rec] = list(iter_records(runs["killed"]))
    assert rec.replay is not None
    whole, resumed = runs["whole_sent"], runs["resume_sent"]
    by_role = rec.replay.by_role
    # the resume sent exactly the calls the journal did not answer
    assert resumed["agent"] == whole["agent"] - by_role.get("agent", 0)
    assert resumed["user"] == whole["user"] - by_role.get("user", 0)
    # tool simulator: answers persisted in the sandbox's store are not asked for at all
    assert resumed["sim"] + by_role.get(SIMULATOR, 0) <= whole["sim"]
    assert runs["before_kill_sent"]["agent"] >= by_role.get("agent", 0)


def test_the_run_says_so_and_drops_the_journal_when_done(runs):
    resume = runs["resume"]
    [rec] = list(iter_records(runs["killed"]))
    assert rec.replay is not None
    assert "model responses of 1 unfinished units to replay" in resume.stderr
    assert f"replayed from the journal: {rec.replay.calls} model calls" in resume.stdout
    manifest = read_manifest(runs["killed"])
    assert manifest.ends[-1].replayed_calls == rec.replay.calls
    assert not (runs["killed"] / JOURNAL_FILE).exists()  # every unit is recorded
    assert not (runs["whole"] / JOURNAL_FILE).exists()
    assert (runs["killed"] / EPISODES_FILE).read_bytes().count(b"\n") == 1


# -- in process: a unit that failed mid-episode, resumed with the same and changed settings --

THREE = "tests.evaluator.run_fakes:three_call_episode"


@pytest.fixture(scope="module")
def text_stub():
    from perf.stub_server import start_stub

    with start_stub("--mode", "text") as s:
        yield s


def _in_process(stub, out: Path, name: str, *extra: tuple) -> object:
    from evaluator.run.sweep import RunRequest

    headers = {"X-Stub-Replies": "one||two||three||four"}
    overrides = [("engine.url", stub.url, "--engine-url"), ("out", str(out), "--out"),
                 ("name", name, "--name"), ("data.limit", 1, "--limit"),
                 ("protocol.entry", THREE, "--set"), ("progress", "off", "--set"),
                 ("agent.endpoint.extra_headers", headers, "--set"), *extra]
    return RunRequest(overrides=overrides, sample_interval_s=0)


async def test_a_failed_unit_resumes_from_its_journal(text_stub, tmp_path, monkeypatch):
    from evaluator.run.sweep import RunRequest, run_sweep

    stubs = {"agent": text_stub.url}
    whole = await run_sweep(_in_process(text_stub, tmp_path, "whole"))
    assert whole.exit_code == 0
    monkeypatch.setenv("FAKE_CRASH_AFTER", "2")
    c0 = _requests(stubs)
    crashed = await run_sweep(_in_process(text_stub, tmp_path, "crashed"))
    assert crashed.exit_code == 3  # every unit failed after two calls
    run_dir = tmp_path / "crashed"
    units = read_journal(run_dir / JOURNAL_FILE)
    assert len(units) == 3 and {len(v) for v in units.values()} == {2}
    monkeypatch.delenv("FAKE_CRASH_AFTER")
    c1 = _requests(stubs)
    resumed = await run_sweep(RunRequest(resume=str(run_dir), overrides=[("progress", "off", "x")],
                                         sample_interval_s=0))
    assert resumed.exit_code == 0
    c2 = _requests(stubs)
    assert _sent(c0, c1)["agent"] == 6 and _sent(c1, c2)["agent"] == 3  # one live call a unit
    records = {r.unit.key: r for r in iter_records(run_dir)}
    for rec in records.values():
        assert rec.replay is not None
        assert (rec.replay.calls, rec.replay.journaled, rec.replay.mismatch_at) == (2, 2, None)
    ref = {r.unit.key: r for r in iter_records(tmp_path / "whole")}
    assert {k: (r.messages, r.usage) for k, r in records.items()} == {
        k: (r.messages, r.usage) for k, r in ref.items()}
    assert not (run_dir / JOURNAL_FILE).exists()


async def test_a_resume_whose_requests_differ_goes_live_and_says_so(text_stub, tmp_path,
                                                                    monkeypatch):
    from evaluator.run.sweep import RunRequest, run_sweep

    stubs = {"agent": text_stub.url}
    monkeypatch.setenv("FAKE_CRASH_AFTER", "2")
    assert (await run_sweep(_in_process(text_stub, tmp_path, "c"))).exit_code == 3
    monkeypatch.delenv("FAKE_CRASH_AFTER")
    c0 = _requests(stubs)
    # another max_tokens: every agent request differs from the journaled ones
    resumed = await run_sweep(RunRequest(
        resume=str(tmp_path / "c"), sample_interval_s=0,
        overrides=[("progress", "off", "x"), ("agent.sampling.max_tokens", 77, "--set")]))
    assert resumed.exit_code == 0
    assert _sent(c0, _requests(stubs))["agent"] == 9  # all three calls of each unit live
    for rec in iter_records(tmp_path / "c"):
        assert rec.replay is not None
        assert (rec.replay.calls, rec.replay.journaled, rec.replay.mismatch_at) == (0, 2, 0)


async def test_a_retried_attempt_replays_what_the_failed_one_got(text_stub, tmp_path,
                                                                monkeypatch):
    """An infrastructure error after two calls: the scheduler's retry in the same session
    replays those two from the journal and asks the model only for the third."""
    from evaluator.run.sweep import run_sweep

    stubs = {"agent": text_stub.url}
    whole = await run_sweep(_in_process(text_stub, tmp_path, "whole"))
    assert whole.exit_code == 0
    monkeypatch.setenv("FAKE_INFRA_ONCE_AFTER", "2")
    c0 = _requests(stubs)
    retried = await run_sweep(_in_process(text_stub, tmp_path, "retried",
                                          ("retry.backoff_s", 0.0, "--set")))
    assert retried.exit_code == 0
    assert _sent(c0, _requests(stubs))["agent"] == 9   # 3 units x (2 + 1 live), not 3 x (2 + 3)
    records = {r.unit.key: r for r in iter_records(tmp_path / "retried")}
    assert len(records) == 3
    for rec in records.values():
        assert rec.replay is not None
        assert (rec.replay.calls, rec.replay.journaled, rec.replay.mismatch_at) == (2, 2, None)
    ref = {r.unit.key: r for r in iter_records(tmp_path / "whole")}
    assert {k.replace("retried", "x"): (r.messages, r.usage) for k, r in records.items()} == {
        k.replace("whole", "x"): (r.messages, r.usage) for k, r in ref.items()}
