"""The equal-work workload of perf.scheduler --cli and perf.vs_reference: its tool calls are
cache hits in agentsweep's TravelBench sandbox, the stub plays the scripted agent and user,
a harness process is measured alone, and vs_reference says what it needs without a
reference checkout."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import msgspec

from backends.client import ChatClient
from backends.types import ChatMessage, Endpoint
from cache_store.importer import import_cache
from evaluator import benchmarks
from evaluator.benchmarks.base import EnvironmentRequest
from evaluator.config import RunConfig
from perf import vs_reference
from perf.equal_work import (
    FINISH_MARKER,
    TOOL_CALLS,
    USER_TURNS,
    agent_stub_args,
    measure,
    task_lines,
    user_stub_args,
    write_cache,
)
from perf.stub_server import start_stub

SAMPLE = Path(__file__).resolve().parents[2] / "bench_data/samples/travel_sample"


async def test_the_workload_tool_calls_are_hits_in_the_travelbench_sandbox(tmp_path) -> None:
    from bench_data.registry import load_tasks

    lines = task_lines(SAMPLE, "single_turn", 3)
    assert len(lines) == 3
    assert write_cache(tmp_path / "cache", lines) == len(TOOL_CALLS) * len(
        {json.loads(x)["time"] for x in lines})
    import_cache(tmp_path / "cache", tmp_path / "tb.store")
    taskset = load_tasks("sample", subsets=["single_turn"])
    config = RunConfig()
    config = msgspec.structs.replace(config, sandbox=msgspec.structs.replace(
        config.sandbox, store=str(tmp_path / "tb.store")))
    env = await benchmarks.get("travelbench").environment.open(
        EnvironmentRequest(config, tmp_path, taskset), None, "none")
    try:
        for task in taskset.tasks[:3]:
            sandbox = env.episode(task)
            for name, args in TOOL_CALLS:
                out = await sandbox.call(name, json.dumps(args, ensure_ascii=False),
                                         task_time=task.payload.time)
                assert out.source == "hit", (name, out)
    finally:
        env.close()


async def test_the_stubs_script_the_agent_and_the_user() -> None:
    with start_stub(*agent_stub_args(0)) as agent, start_stub(*user_stub_args(0)) as user:
        async with ChatClient(Endpoint(base_url=agent.url, model="m")) as a, \
                ChatClient(Endpoint(base_url=user.url, model="m")) as u:
            msgs = [ChatMessage(role="user", content="q")]
            for name, args in TOOL_CALLS:  # the n-th tool turn calls the n-th tool
                r = await a.chat(msgs)
                (call,) = r.message.tool_calls or []
                assert call.function.name == name
                assert json.loads(call.function.arguments) == args
                msgs += [r.message, ChatMessage(role="tool", tool_call_id=call.id, content="x")]
            assert (await a.chat(msgs)).message.tool_calls is None
            conv = [ChatMessage(role="system", content="s")]
            for turn in range(1, USER_TURNS + 1):
                conv.append(ChatMessage(role="assistant", content="me"))
                text = (await u.chat(conv)).message.content or ""
                assert (FINISH_MARKER in text) == (turn == USER_TURNS)
                conv.append(ChatMessage(role="user", content="agent"))


def test_measure_accounts_the_child_alone(tmp_path) -> None:
    busy = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass"
    r = measure([sys.executable, "-c", busy], cwd=tmp_path, env={}, log=tmp_path / "log")
    assert r.rc == 0 and 0.25 <= r.cpu_s < 2.0 and r.peak_rss_mb > 1
    r = measure([sys.executable, "-c", "raise SystemExit(3)"], cwd=tmp_path, env={})
    assert r.rc == 3


def test_vs_reference_says_what_it_needs(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.delenv(vs_reference.REF_ENV, raising=False)
    assert vs_reference.main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("TravelBench: skipped: no reference checkout")
    assert "--travelbench-ref" in out
    assert vs_reference.main(["--travelbench-ref", str(tmp_path)]) == 0
    assert "is not a TravelBench checkout" in capsys.readouterr().out
