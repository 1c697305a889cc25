"""Benchmark: TRIP-Bench episodes through the real driver with the world's tools answering, vs
the same run with tool calls answered instantly (prints figures, asserts nothing).

    python -m perf.tripbench_world_driver --data DIR [--episodes 2000] [--concurrency 2000]
        [--turns 3] [--tools-per-turn 4] [--workers 4] [--latency-ms 0,1000] [--repeat 1]

DIR holds a generated task set and its world (`agentsweep data tripbench generate --size
paper`). The real scheduler, admission, role clients, TRIP-Bench protocol (simulator notes,
dialogue graph) and fsynced result writer run `--episodes` episodes, `--concurrency` at a time,
against an in-process model (the stub) answering after `--latency-ms` (each value in turn; 0:
at once, where only CPU counts; a served model takes hundreds of ms to seconds a call),
after `--warmup` untimed episodes (worker processes started, city columns loaded where the
calls run): each user turn the agent makes
`--tools-per-turn` tool calls drawn from `perf.tripbench_world.call_shapes` (a third of them
searches, half of those in the largest cities) and answers; the simulator answers JSON. Each
mode runs the same units:

- `processes`: the environment's sandbox, calls on the runner's worker processes (other
  cores; the default);
- `threads`: the same on worker threads;
- `inline`: the same calls made on the event loop (the previous behaviour);
- `instant`: every call answered at once with a fixed text (the floor).

Printed side by side: episodes/s, tool calls/s, wall seconds, the driver process's CPU
utilisation, and the ratio to `instant` (target: the default within 10 % of it at 2,000
concurrent episodes).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from backends.chat_wire import decode_response
from backends.types import ChatMessage, ChatResponse, SamplingParams
from bench_data.registry import load_tasks
from cache_store.types import ToolOutcome
from evaluator.benchmarks.tripbench.environment import ENVIRONMENT, TripSandbox
from evaluator.benchmarks.tripbench.protocol import run_trip
from evaluator.benchmarks.tripbench.runner import ToolRunner
from evaluator.benchmarks.tripbench.world import open_world
from evaluator.config import AdmissionConfig, RetryConfig
from evaluator.protocols import EpisodeContext, ProtocolSettings
from evaluator.run.admission import AdmissionController
from evaluator.run.progress import Counters
from evaluator.run.results import EPISODES_FILE, FAILURES_FILE, ResultWriter
from evaluator.run.roles import RoleEndpoint
from evaluator.run.scheduler import Scheduler, make_units
from perf.tripbench_world import call_shapes


def _completion(message: dict[str, Any], finish: str) -> bytes:
    return json.dumps({
        "id": "c", "object": "chat.completion", "created": 0, "model": "stub",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 400, "completion_tokens": 20, "total_tokens": 420},
    }).encode()


class Agent:
    """Tool calls while the current user turn has fewer than `per_turn`, then an answer."""

    def __init__(self, calls: list[tuple[str, str]], per_turn: int, latency_s: float) -> None:
        self.per_turn = per_turn
        self.latency_s = latency_s
        self.bodies = [_completion({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{i}", "type": "function",
             "function": {"name": name, "arguments": args}}]}, "tool_calls")
            for i, (name, args) in enumerate(calls)]
        self.answer = _completion({"role": "assistant",
                                   "content": "Here is a first idea; shall I go on?"}, "stop")
        self.n = 0

    async def chat(self, messages: list[ChatMessage], **_: Any) -> ChatResponse:
        await asyncio.sleep(self.latency_s)
        done = 0
        for m in reversed(messages):
            if m.role == "user":
                break
            done += m.role == "tool"
        if done >= self.per_turn:
            return decode_response(self.answer)
        self.n += 1
        return decode_response(self.bodies[self.n % len(self.bodies)])

    async def close(self) -> None:
        return None


class User:
    def __init__(self, latency_s: float) -> None:
        self.latency_s = latency_s
        self.body = _completion({"role": "assistant", "content": json.dumps(
            {"instruction_ids": [], "user_query": "Sounds good, go on."})}, "stop")

    async def chat(self, messages: list[ChatMessage], **_: Any) -> ChatResponse:
        await asyncio.sleep(self.latency_s)
        return decode_response(self.body)

    async def close(self) -> None:
        return None


class Instant:
    """A sandbox answering every call at once (the same tools and world for the simulator)."""

    def __init__(self, inner: TripSandbox) -> None:
        self.world, self.tools = inner.world, inner.tools

    async def call(self, name: str, arguments: str, *, task_time: str = "") -> ToolOutcome:
        return ToolOutcome(content="Showing 1-1 of 1 results.", source="live")


async def run_mode(mode: str, latency_s: float, units: list[Any], tasks: list[Any],
                   calls: list[tuple[str, str]], a: argparse.Namespace, tmp: Path
                   ) -> dict[str, Any]:
    world = open_world(ENVIRONMENT.world_path(tasks[0]))
    runner = ToolRunner(a.workers, mode) if mode in ToolRunner.KINDS else None
    base = TripSandbox(world, "text", runner)
    sandbox: Any = Instant(base) if mode == "instant" else base
    counters = Counters()
    adm = AdmissionController("bench", AdmissionConfig(
        initial_cap=a.concurrency, min_cap=1, max_cap=max(a.concurrency, 4096), adaptive=False))
    agent = RoleEndpoint("agent", Agent(calls, a.tools_per_turn, latency_s), "stub",
                         SamplingParams(max_tokens=16), adm, counters)
    user = RoleEndpoint("user", User(latency_s), "stub", SamplingParams(max_tokens=16), adm,
                        counters)
    settings = ProtocolSettings(max_turns=a.turns, max_steps=a.tools_per_turn + 2)
    tool_calls = 0

    async def episode(unit: Any, task: Any, ticket: Any) -> Any:
        nonlocal tool_calls
        ctx = EpisodeContext(unit=unit, task=task, agent=agent.for_episode(ticket, unit.seed),
                             sandbox=sandbox, user=user.for_episode(ticket, unit.seed),
                             settings=settings, session_id=ticket.session_id)
        record = await run_trip(ctx)
        tool_calls += record.n_tool_calls
        return record

    async def batch(name: str, batch_units: list[Any]) -> Any:
        writer = ResultWriter(tmp / mode / name / EPISODES_FILE).start()
        failures = ResultWriter(tmp / mode / name / FAILURES_FILE).start()
        sched = Scheduler(batch_units, episode, writer=writer, failures=failures,
                          counters=counters, concurrency=a.concurrency,
                          retry=RetryConfig(max_attempts=1))
        outcome = await sched.run()
        await writer.close()
        await failures.close()
        return outcome

    if a.warmup:     # untimed: workers started, every city's columns loaded where they live
        await batch("warmup", units[:a.warmup])
    tool_calls = 0
    gc.collect()
    cpu0, t0 = time.process_time(), time.perf_counter()
    outcome = await batch("timed", units)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    if runner is not None:
        runner.close()
    world.close()
    return {"mode": mode, "finished": outcome.finished, "failed": outcome.failed, "wall": wall,
            "eps": outcome.finished / wall, "tools": tool_calls / wall, "cpu": cpu / wall,
            "calls": counters.calls}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m perf.tripbench_world_driver",
                                description=__doc__.split("\n")[0])
    p.add_argument("--data", type=Path, required=True,
                   help="a directory with tasks.jsonl and its world")
    p.add_argument("--episodes", type=int, default=2000)
    p.add_argument("--concurrency", type=int, default=2000)
    p.add_argument("--turns", type=int, default=3, help="user turns per episode")
    p.add_argument("--tools-per-turn", type=int, default=4)
    p.add_argument("--workers", type=int, default=4, help="tool workers (processes or threads)")
    p.add_argument("--latency-ms", default="0",
                   help="the stub model's answer time per call, ms; a comma list runs each")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--warmup", type=int, default=400,
                   help="untimed episodes first (worker start, column loads)")
    p.add_argument("--modes", default="instant,processes,threads,inline")
    a = p.parse_args(argv)
    import uvloop

    taskset = load_tasks(str(a.data), benchmark="tripbench")
    tasks = taskset.tasks
    units = make_units("bench", tasks, -(-a.episodes // len(tasks)), 0)[:a.episodes]
    with open_world(ENVIRONMENT.world_path(tasks[0])) as world:
        rng = random.Random(0)
        shapes = call_shapes(world)
        searches = [s for s in shapes if s[0].startswith("search_")]
        others = [s for s in shapes if not s[0].startswith("search_")]
        calls = []
        for i in range(600):    # a third searches, the rest details, coordinates, estimates
            tool, _, make = rng.choice(searches if i % 3 == 0 else others)
            calls.append((tool, json.dumps(make(rng))))
    print(f"TRIP-Bench driver, in-process stub model; {len(units)} episodes, "
          f"{a.concurrency} concurrent, {a.turns} user turns x {a.tools_per_turn} tool calls; "
          f"{len(tasks)} tasks of {a.data}; cpus={os.cpu_count()} load average "
          f"{os.getloadavg()[0]:.1f}")
    print(f"{'latency':>7} {'mode':>9} {'episodes':>8} {'failed':>6} {'wall s':>7} "
          f"{'ep/s':>7} {'tools/s':>8} {'cpu util':>8} {'vs instant':>10}")
    with tempfile.TemporaryDirectory(prefix="perf-trip-driver-") as tmpdir:
        for r in range(a.repeat):
            for latency_ms in (float(x) for x in a.latency_ms.split(",")):
                base = None
                for mode in a.modes.split(","):
                    res = uvloop.run(run_mode(mode, latency_ms / 1000, units, tasks, calls, a,
                                              Path(tmpdir) / f"{r}-{latency_ms:g}"))
                    if mode == "instant":
                        base = res["eps"]
                    ratio = f"{res['eps'] / base:10.2f}" if base else f"{'-':>10}"
                    print(f"{latency_ms:5g}ms {mode:>9} {res['finished']:>8} {res['failed']:>6} "
                          f"{res['wall']:7.1f} {res['eps']:7.1f} {res['tools']:8.0f} "
                          f"{res['cpu']:8.2f} {ratio}")
                    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
