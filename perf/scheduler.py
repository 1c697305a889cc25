"""Scheduler benchmark: episodes/s, CPU per model call, memory per idle episode, prefix reuse.

    python -m perf.scheduler [--sizes 100,1000,5000] [--episodes-per-slot 3] [--http]
                             [--engine URL] [--engine-episodes 8]
    python -m perf.scheduler --cli [--cli-tasks 500] [--cli-trials 3] [--cli-concurrency 300]
                             [--repeat 3] [--baseline DIR] [--data-dir DIR]

Stub part: the real scheduler, role clients, admission, travel protocol (single_turn: three
agent calls and two tool calls per episode), sandbox and fsynced result writer, with a
zero-latency model. By default the model is in-process (a prebuilt completion decoded per call,
so only agentsweep's own work is measured); `--http` uses `perf.stub_server` over HTTP instead
(adds aiohttp client cost). Printed side by side per concurrency: episodes/s, model calls/s,
process CPU per call (us), CPU utilisation, and the RSS per idle in-flight episode (all
episodes blocked inside a model call).

Whole-run part (`--cli`, perf/scheduler_cli.py): the `agentsweep run` process itself on real
TravelBench data against the HTTP stub: CPU per model call and start-up CPU, measured per
process; `--baseline DIR` puts another checkout's figures beside them.

Engine part (`--engine URL`, a running vLLM server): multi-turn sample episodes, two trials
per task, every agent and user call recorded; prefix-cache reuse is compared with the ideal
(each request reuses all tokens of the previous request of its conversation, rounded down to
the server's KV block size). Target: >= 0.9 of ideal.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import re
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import msgspec
import psutil

from backends.chat_wire import decode_response
from backends.types import ChatMessage, ChatResponse, Endpoint, SamplingParams
from evaluator import benchmarks
from evaluator.config import AdmissionConfig, RetryConfig, RunConfig
from evaluator.protocols import EpisodeContext, ProtocolSettings
from evaluator.run.admission import AdmissionController
from evaluator.run.progress import Counters
from evaluator.run.results import EPISODES_FILE, FAILURES_FILE, ResultWriter
from evaluator.run.roles import RoleEndpoint
from evaluator.run.scheduler import Scheduler, make_units

_ENC = msgspec.json.Encoder()


def _completion(message: dict[str, Any], finish: str) -> bytes:
    return _ENC.encode({
        "id": "c", "object": "chat.completion", "created": 0, "model": "fake",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 400, "completion_tokens": 20, "total_tokens": 420,
                  "prompt_tokens_details": {"cached_tokens": 384}},
    })


class InProcessModel:
    """A zero-latency model: tool calls while the conversation has < `tool_turns` assistant
    messages, then a text answer. `gate`: when set, every call waits for it (idle episodes)."""

    def __init__(self, tool: str, arguments: str, tool_turns: int = 2) -> None:
        self.tool_turns = tool_turns
        self.gate: asyncio.Event | None = None
        self.bodies = [
            _completion({"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{i}", "type": "function",
                 "function": {"name": tool, "arguments": arguments}}]}, "tool_calls")
            for i in range(tool_turns)
        ]
        self.text = _completion({"role": "assistant", "content": "Here is your plan."}, "stop")
        self.base_url = "inproc"

    async def chat(self, messages: list[ChatMessage], **_: Any) -> ChatResponse:
        if self.gate is not None:
            await self.gate.wait()
        else:
            await asyncio.sleep(0)
        done = 0
        for m in messages:
            if m.role == "assistant":
                done += 1
        return decode_response(self.bodies[done] if done < self.tool_turns else self.text)

    async def close(self) -> None:
        return None


async def _sandbox(taskset: Any, tmp: Path, client: Any) -> Any:
    """The benchmark's environment as a run opens it (no simulator), its shared sandbox."""
    from evaluator.benchmarks.base import EnvironmentRequest

    env_factory = benchmarks.get(taskset.benchmark).environment
    assert env_factory is not None
    env = await env_factory.open(EnvironmentRequest(RunConfig(), tmp, taskset), None, "none")
    return env.episode(taskset.tasks[0])


async def _hit_call(sandbox: Any, taskset: Any, task_time: str) -> tuple[str, str, str]:
    """A (tool, arguments) the sandbox answers from its store, else one it rejects."""
    store = getattr(sandbox, "store", None)
    if store is not None:
        from cache_store import keys

        for tool in taskset.tool_schemas:
            name = tool["function"]["name"]
            if store.n_entries(name):
                key, _ = store.entry(name, 0)
                args = keys.params_from_key(key)
                out = await sandbox.call(name, args, task_time=task_time)
                if out.source == "hit":
                    return name, args, "hit"
    name = taskset.tool_schemas[0]["function"]["name"] if taskset.tool_schemas else "lookup"
    out = await sandbox.call(name, "{}", task_time=task_time)
    return name, "{}", out.source


async def stub_round(concurrency: int, per_slot: int, http: bool, tmp: Path) -> dict[str, Any]:
    from bench_data.registry import load_tasks

    taskset = load_tasks("sample", subsets=["single_turn"])
    tasks = taskset.tasks
    sandbox = await _sandbox(taskset, tmp, None)
    task_time = getattr(tasks[0].payload, "time", "")
    tool, args, source = await _hit_call(sandbox, taskset, task_time)
    stub = None
    if http:
        from backends.client import ChatClient
        from perf.stub_server import start_stub

        stub = start_stub("--mode", "tool", "--tool-turns", "2", "--tool-name", tool,
                          processes=2)
        client: Any = ChatClient(Endpoint(base_url=stub.url, model="stub-model"),
                                 max_connections=concurrency)
    else:
        client = InProcessModel(tool, args)
    counters = Counters()
    adm = AdmissionController("bench", AdmissionConfig(
        initial_cap=concurrency, min_cap=1, max_cap=max(concurrency, 4096), adaptive=False))
    agent = RoleEndpoint("agent", client, "stub-model", SamplingParams(max_tokens=16), adm,
                         counters)
    protocol = benchmarks.get(taskset.benchmark).protocol("single_turn")
    settings = ProtocolSettings(max_steps=6, layout="prefix")

    async def episode(unit, task, ticket):
        ctx = EpisodeContext(unit=unit, task=task, agent=agent.for_episode(ticket, unit.seed),
                             sandbox=sandbox, settings=settings, session_id=ticket.session_id)
        return await protocol(ctx)

    n_units = concurrency * per_slot
    trials = -(-n_units // len(tasks))
    units = make_units("bench", tasks, trials, 0)[:n_units]
    run_dir = tmp / f"c{concurrency}"
    out: dict[str, Any] = {"concurrency": concurrency, "episodes": n_units, "tool": source}
    try:
        writer = ResultWriter(run_dir / EPISODES_FILE).start()
        failures = ResultWriter(run_dir / FAILURES_FILE).start()
        sched = Scheduler(units, episode, writer=writer, failures=failures, counters=counters,
                          concurrency=concurrency, retry=RetryConfig(max_attempts=1))
        gc.collect()
        cpu0, t0 = time.process_time(), time.perf_counter()
        outcome = await sched.run()
        await writer.close()
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        await failures.close()
        out.update(finished=outcome.finished, failed=outcome.failed, wall_s=wall,
                   eps_per_s=outcome.finished / wall, calls=counters.calls,
                   calls_per_s=counters.calls / wall,
                   cpu_us_per_call=1e6 * cpu / max(1, counters.calls), cpu_util=cpu / wall,
                   peak_in_flight=adm.stats.peak_in_flight)
        if not http:
            out["idle_kb"], out["idle_rss_kb"] = await _idle_memory(concurrency, units, episode, client, tmp)
    finally:
        await client.close()
        sandbox.close()
        if stub is not None:
            stub.stop()
    return out


async def _idle_memory(n: int, units: list[Any], episode: Any, model: InProcessModel,
                       tmp: Path) -> tuple[float, float]:
    """Memory per episode while `n` episodes all wait inside their first model call.

    Two figures: Python heap bytes traced by tracemalloc (exact, not fooled by allocator
    arenas freed by the previous round and reused) and the process RSS growth."""
    model.gate = asyncio.Event()
    counters_probe = Counters()
    writer = ResultWriter(tmp / "idle" / EPISODES_FILE, fsync=False).start()
    failures = ResultWriter(tmp / "idle" / FAILURES_FILE, fsync=False).start()
    sched = Scheduler(units[:n], episode, writer=writer, failures=failures,
                      counters=counters_probe, concurrency=n)
    gc.collect()
    proc = psutil.Process()
    tracemalloc.start()
    traced0, rss0 = tracemalloc.get_traced_memory()[0], proc.memory_info().rss
    task = asyncio.create_task(sched.run())
    while counters_probe.episodes_in_flight < n:
        await asyncio.sleep(0.01)
    for _ in range(5):
        await asyncio.sleep(0)
    gc.collect()
    traced1, rss1 = tracemalloc.get_traced_memory()[0], proc.memory_info().rss
    tracemalloc.stop()
    model.gate.set()
    await task
    model.gate = None
    await writer.close()
    await failures.close()
    return (traced1 - traced0) / n / 1024, max(0, rss1 - rss0) / n / 1024


# ------------------------------------------------------------------------------- engine


class RecordingClient:
    """Wraps a ChatClient; keeps (conversation id, prompt, completion, cached) per call."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.calls: list[tuple[int, int, int, int]] = []

    async def chat(self, messages: list[ChatMessage], **kw: Any) -> ChatResponse:
        r = await self.client.chat(messages, **kw)
        u = r.usage
        self.calls.append((id(messages), u.prompt_tokens, u.completion_tokens, u.cached_tokens))
        return r

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)


async def engine_round(url: str, n_episodes: int, tmp: Path) -> dict[str, Any]:
    from backends.client import ChatClient
    from bench_data.registry import load_tasks

    taskset = load_tasks("sample", subsets=["multi_turn"])
    raw = ChatClient(Endpoint(base_url=url))
    model = await raw.resolve_model()
    metrics = await raw.get_text("/metrics")
    m = re.search(r'cache_config_info\{[^}]*block_size="(\d+)"', metrics)
    block = int(m.group(1)) if m else 16
    client = RecordingClient(raw)
    counters = Counters()
    adm = AdmissionController(url, AdmissionConfig(initial_cap=16, max_cap=64))
    agent = RoleEndpoint("agent", client, model, SamplingParams(temperature=0.0, max_tokens=64),
                         adm, counters)
    user = RoleEndpoint("user", client, model, SamplingParams(temperature=0.0, max_tokens=48),
                        adm, counters)
    sandbox = await _sandbox(taskset, tmp, None)
    protocol = benchmarks.get(taskset.benchmark).protocol("multi_turn")
    settings = ProtocolSettings(max_steps=2, max_turns=3, layout="prefix")

    async def episode(unit, task, ticket):
        ctx = EpisodeContext(unit=unit, task=task, agent=agent.for_episode(ticket),
                             sandbox=sandbox, user=user.for_episode(ticket), settings=settings,
                             session_id=ticket.session_id)
        return await protocol(ctx)

    units = make_units("engine", taskset.tasks, 2, 0)[:n_episodes]
    writer = ResultWriter(tmp / "engine" / EPISODES_FILE).start()
    failures = ResultWriter(tmp / "engine" / FAILURES_FILE).start()
    sched = Scheduler(units, episode, writer=writer, failures=failures, counters=counters,
                      concurrency=8, retry=RetryConfig(max_attempts=1))
    t0 = time.perf_counter()
    outcome = await sched.run()
    wall = time.perf_counter() - t0
    await writer.close()
    await failures.close()
    await raw.close()
    sandbox.close()
    return {"block": block, "episodes": outcome.finished, "failed": outcome.failed,
            "wall_s": wall, **prefix_reuse(client.calls, block)}


def prefix_reuse(calls: list[tuple[int, int, int, int]], block: int) -> dict[str, Any]:
    """Cached prompt tokens of continuing requests against the ideal reuse."""
    last: dict[int, int] = {}
    cached = ideal = first_cached = first_prompt = n_cont = 0
    for conv, prompt, completion, hit in calls:
        prev = last.get(conv)
        if prev is None:
            first_cached += hit
            first_prompt += prompt
        else:
            n_cont += 1
            ideal += min(prompt, prev) // block * block
            cached += min(hit, prompt)
        last[conv] = prompt + completion
    return {"continuing_calls": n_cont, "cached": cached, "ideal": ideal,
            "ratio": cached / ideal if ideal else float("nan"),
            "first_call_cached_share": first_cached / first_prompt if first_prompt else 0.0}


# ------------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m perf.scheduler", description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="100,1000,5000", help="concurrent episodes per round")
    p.add_argument("--episodes-per-slot", type=int, default=3,
                   help="episodes per round = concurrency x this")
    p.add_argument("--http", action="store_true", help="model over HTTP (perf.stub_server)")
    p.add_argument("--engine", default="", help="URL of a running vLLM server for the "
                   "prefix-cache part (e.g. http://127.0.0.1:8765/v1)")
    p.add_argument("--engine-episodes", type=int, default=8)
    p.add_argument("--cli", action="store_true",
                   help="instead: the whole `agentsweep run` process on real TravelBench data "
                   "against the HTTP stub (CPU per model call, start-up)")
    p.add_argument("--cli-tasks", type=int, default=500)
    p.add_argument("--cli-trials", type=int, default=3)
    p.add_argument("--cli-concurrency", type=int, default=300)
    p.add_argument("--repeat", type=int, default=3, help="--cli: runs of each checkout")
    p.add_argument("--baseline", type=Path, default=None,
                   help="--cli: another checkout to measure beside this one")
    p.add_argument("--data-dir", default=None, help="--cli: benchmark data directory")
    a = p.parse_args(argv)
    if a.cli:
        from perf.scheduler_cli import cli_round, print_cli

        print_cli(cli_round(a.cli_tasks, a.cli_trials, a.cli_concurrency, a.repeat,
                            a.baseline, a.data_dir))
        return 0
    import uvloop

    sizes = [int(s) for s in a.sizes.split(",") if s]
    with tempfile.TemporaryDirectory(prefix="perf-sched-") as tmpdir:
        tmp = Path(tmpdir)
        mode = "HTTP stub (perf.stub_server, 2 processes)" if a.http else "in-process stub"
        print(f"scheduler benchmark, zero-latency model: {mode}; protocol single_turn "
              "(3 agent calls + 2 tool calls per episode); results fsynced")
        print(f"{'concurrent':>10} {'episodes':>8} {'ep/s':>8} {'calls/s':>8} "
              f"{'cpu us/call':>11} {'cpu util':>8} {'idle KB/ep':>10} {'RSS KB/ep':>9} {'tool':>6}")
        for n in sizes:
            r = uvloop.run(stub_round(n, a.episodes_per_slot, a.http, tmp))
            idle = f"{r['idle_kb']:.1f}" if "idle_kb" in r else "-"
            rss = f"{r['idle_rss_kb']:.1f}" if "idle_rss_kb" in r else "-"
            print(f"{n:>10} {r['finished']:>8} {r['eps_per_s']:>8.0f} {r['calls_per_s']:>8.0f} "
                  f"{r['cpu_us_per_call']:>11.0f} {r['cpu_util']:>8.2f} {idle:>10} {rss:>9} "
                  f"{r['tool']:>6}")
            sys.stdout.flush()
        big = max(sizes)
        print(f"targets at {big} concurrent: >= 2000 calls/s on one core, < 50 KB per idle "
              "episode (idle KB/ep: Python heap traced by tracemalloc; RSS KB/ep: process RSS "
              "growth, which under-counts when freed arenas are reused)")
        if a.engine:
            r = uvloop.run(engine_round(a.engine, a.engine_episodes, tmp))
            print(f"engine {a.engine}: {r['episodes']} multi-turn episodes ({r['failed']} "
                  f"failed) in {r['wall_s']:.0f}s, KV block {r['block']}")
            print(f"  continuing requests: {r['continuing_calls']}, cached prompt tokens "
                  f"{r['cached']} vs ideal {r['ideal']}: {r['ratio']:.2f} of ideal "
                  "(target >= 0.9)")
            print(f"  first requests (trial 2 reuses trial 1's prefix): cached share "
                  f"{r['first_call_cached_share']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
