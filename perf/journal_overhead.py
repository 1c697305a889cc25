"""What the response journal (evaluator/run/journal.py) costs: CPU per model call, and a whole
run on the stub servers with and without it.

    python -m perf.journal_overhead [--quick] [--trials N] [--concurrency N] [--rounds N]

Part 1, per call: for conversations of growing length (the sample's TravelBench tool list,
realistic message sizes), the microseconds the journal adds to one call — hashing the request
and encoding the response line — next to what the client already spends encoding the same
request body, and their ratio.

Part 2, a run: `run_sweep` on the sample's multi-turn tasks against three stub servers
(agent calling tools, user simulator, tool simulator; zero latency, so agentsweep's own cost
is all there is), alternating `journal = false` / `true` `--rounds` times each. Printed side by
side: wall seconds, episodes/s, model responses (counted by the stubs), this process's CPU per
response, journal bytes per response line (the largest size the file got while polled / the
responses); it ends with the journal's CPU per response and `episodes/s ratio (journal / no
journal): X.XXx`. On a shared machine wall-clock figures are noisy; the CPU per response (this
process's CPU time, the writer thread included) is the steadier figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from perf.stub_process import stub_counters

REPO = Path(__file__).resolve().parents[1]
AGENT = {
    "X-Stub-Mode": "tool", "X-Stub-Tool-Turns": "2",
    "X-Stub-Tool-Choices": json.dumps([["web_search", {"query": "perf unseen query"}],
                                       ["weather_current_conditions", {"location": "Suzhou"}]]),
    "X-Stub-Replies": "Here is your plan.||I found two options.||Which day suits you?",
}
USER = {"X-Stub-Replies": "Tell me more.||Cheaper, please.||What about the weekend?"}


def _messages(n: int) -> list[Any]:
    from backends.types import ChatMessage, FunctionCall, ToolCall

    out = [ChatMessage(role="system", content="You are a travel assistant. " * 80),
           ChatMessage(role="user", content="Plan two days in Suzhou for a family of four. " * 4)]
    while len(out) < n:
        k = len(out)
        if k % 3 == 2:
            out.append(ChatMessage(role="assistant", content=None, tool_calls=[ToolCall(
                id=f"call_{k}", function=FunctionCall(name="web_search",
                                                      arguments='{"query": "suzhou gardens"}'))]))
        elif k % 3 == 0:
            out.append(ChatMessage(role="tool", tool_call_id=f"call_{k - 1}",
                                   content=json.dumps({"results": ["garden " * 40] * 3})))
        else:
            out.append(ChatMessage(role="assistant", content="Here is a plan. " * 30))
    return out


def _best_us(fn: Any, reps: int, tries: int = 5) -> float:
    """Microseconds per call of `fn`, the best of `tries` loops (a shared machine is noisy)."""
    best = float("inf")
    for _ in range(tries):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        best = min(best, (time.perf_counter() - t0) / reps)
    return best * 1e6


class _Sink:
    """Stands in for the run's journal and its writer: counts the lines it is given."""

    def __init__(self) -> None:
        self.writer = self
        self.bytes = 0
        self.lines = 0
        self.replayed = 0
        self.mismatches = 0

    def put_line(self, line: bytes) -> None:
        self.bytes += len(line)
        self.lines += 1


def per_call(quick: bool) -> None:
    from backends.chat_wire import build_request, encode_request
    from backends.types import ChatResponse, Choice, SamplingParams, Usage
    from bench_data.tools import load_tool_schemas
    from evaluator.run.journal import UnitJournal, request_hash

    tools = load_tool_schemas(REPO / "bench_data/samples/travel_sample/tool_schemas.json")
    sampling = SamplingParams(temperature=0.7, max_tokens=512, seed=12345)
    resp = ChatResponse(id="chatcmpl-1", model="m", choices=[Choice(
        index=0, message=_messages(5)[-1], finish_reason="stop")],
        usage=Usage(prompt_tokens=3000, completion_tokens=120, total_tokens=3120))
    sink = _Sink()
    unit = UnitJournal("travelbench/multi_turn/t1#0", sink)  # type: ignore[arg-type]
    reps = 200 if quick else 2000
    print(f"per call (best of 5 x {reps} calls): tools {len(tools)} "
          f"({len(json.dumps(tools)) // 1000} kB)")
    print(f"{'messages':>8} {'body kB':>8} {'client encode us':>17} {'journal us':>11} "
          f"{'ratio':>6} {'line B':>7}")
    for n in (4, 16, 40):
        msgs = _messages(n)
        body = encode_request(build_request("m", msgs, tools=tools, tool_choice=None,
                                            response_format=None, sampling=sampling,
                                            priority=None, user="sid"))

        def client(msgs: list[Any] = msgs) -> None:
            encode_request(build_request("m", msgs, tools=tools, tool_choice=None,
                                         response_format=None, sampling=sampling,
                                         priority=None, user="sid"))

        def journal(msgs: list[Any] = msgs) -> None:
            unit.record("agent", request_hash("agent", "m", msgs, tools=tools,
                                              sampling=sampling), resp)

        client_us = _best_us(client, reps)
        before = sink.bytes, sink.lines
        journal_us = _best_us(journal, reps)
        line = (sink.bytes - before[0]) / (sink.lines - before[1])
        print(f"{n:>8} {len(body) / 1000:>8.1f} {client_us:>17.1f} {journal_us:>11.1f} "
              f"{journal_us / client_us:>6.2f} {line:>7.0f}")


def _requests(stubs: dict[str, str]) -> dict[str, int]:
    """Chat-completion requests each stub has received so far."""
    return {role: stub_counters(url)["requests"] for role, url in stubs.items()}


async def _one_run(out: Path, name: str, stubs: dict[str, str], journal: bool, trials: int,
                   concurrency: int, fsync: bool = True) -> dict[str, Any]:
    from evaluator.run.journal import JOURNAL_FILE
    from evaluator.run.results import iter_records
    from evaluator.run.sweep import RunRequest, run_sweep

    overrides = [
        ("out", str(out), "--out"), ("name", name, "--name"), ("trials", trials, "--trials"),
        ("data.subsets", ["multi_turn"], "--subset"), ("progress", "off", "--progress"),
        ("concurrency", concurrency, "--concurrency"), ("journal", journal, "--set"),
        ("fsync", fsync, "--set"),
        ("agent.endpoint.base_url", stubs["agent"], "--set"),
        ("agent.endpoint.extra_headers", AGENT, "--set"),
        ("agent.sampling.temperature", 0.7, "--set"),
        ("user.endpoint.base_url", stubs["user"], "--set"),
        ("user.endpoint.extra_headers", USER, "--set"),
        ("tool_simulator.endpoint.base_url", stubs["sim"], "--set"),
        ("sandbox.simulated_store", str(out / f"{name}-simulated"), "--set"),
        ("engine.url", stubs["agent"], "--engine-url"),
    ]
    size = 0
    sent = await asyncio.to_thread(_requests, stubs)
    cpu0 = time.process_time()  # this process (its threads included), not the stubs
    t0 = time.perf_counter()
    task = asyncio.create_task(run_sweep(RunRequest(overrides=overrides, sample_interval_s=0)))
    while not task.done():  # the journal as it grows (the run removes it at the end)
        path = out / name / JOURNAL_FILE
        if journal and path.exists():
            size = max(size, path.stat().st_size)
        await asyncio.sleep(0.05)
    result = task.result()
    wall = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    after = await asyncio.to_thread(_requests, stubs)
    responses = sum(after.values()) - sum(sent.values())  # each one is one journal line
    if result.exit_code != 0:
        raise SystemExit(f"run {name} failed: {result.summary}")
    episodes = len(list(iter_records(out / name)))
    return {"wall": wall, "episodes": episodes, "eps": episodes / wall,
            "responses": responses, "cpu_us": cpu / max(1, responses) * 1e6,
            "line_bytes": size / max(1, responses)}


def whole_run(trials: int, concurrency: int, rounds: int) -> None:
    from perf.stub_server import start_stub

    results: dict[bool, list[dict[str, Any]]] = {False: [], True: []}
    with tempfile.TemporaryDirectory() as tmp, start_stub("--mode", "text") as agent, \
            start_stub("--mode", "text") as user, start_stub("--mode", "text") as sim:
        stubs = {"agent": agent.url, "user": user.url, "sim": sim.url}
        out = Path(tmp)

        async def main() -> None:
            await _one_run(out, "warmup", stubs, True, 1, concurrency)
            for i in range(rounds):
                for journal in (False, True):
                    results[journal].append(await _one_run(
                        out, f"r{i}-{int(journal)}", stubs, journal, trials, concurrency))

        try:
            import uvloop

            uvloop.run(main())
        except ImportError:  # pragma: no cover - uvloop is a dependency
            asyncio.run(main())
    print(f"\nwhole run: sample multi_turn x {trials} trials, concurrency {concurrency}, "
          f"{rounds} rounds each (median)")
    print(f"{'journal':>8} {'wall s':>7} {'episodes':>9} {'ep/s':>7} {'responses':>10} "
          f"{'CPU us/response':>16} {'journal B/line':>15}")
    eps: dict[bool, float] = {}
    cpu: dict[bool, float] = {}
    for journal in (False, True):
        rs = results[journal]
        eps[journal] = statistics.median(r["eps"] for r in rs)
        cpu[journal] = statistics.median(r["cpu_us"] for r in rs)
        line = statistics.median(r["line_bytes"] for r in rs) if journal else 0.0
        print(f"{'on' if journal else 'off':>8} "
              f"{statistics.median(r['wall'] for r in rs):>7.2f} {rs[0]['episodes']:>9} "
              f"{eps[journal]:>7.1f} {rs[0]['responses']:>10} {cpu[journal]:>16.0f} "
              f"{line:>15.0f}")
    print(f"journal CPU per model response: {cpu[True] - cpu[False]:+.0f} us "
          f"({cpu[True] / cpu[False]:.2f}x the run's CPU per response without it)")
    print(f"episodes/s ratio (journal / no journal): {eps[True] / eps[False]:.2f}x")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m perf.journal_overhead",
                                description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer calls, trials and rounds")
    p.add_argument("--trials", type=int, default=0, help="trials per task (default 40, quick 8)")
    p.add_argument("--concurrency", type=int, default=64)
    p.add_argument("--rounds", type=int, default=0, help="runs of each kind (default 5, quick 2)")
    a = p.parse_args(argv)
    per_call(a.quick)
    whole_run(a.trials or (8 if a.quick else 40), a.concurrency,
              a.rounds or (2 if a.quick else 5))
    return 0


if __name__ == "__main__":
    sys.exit(main())
