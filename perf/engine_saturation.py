"""Does agentsweep saturate one engine? Its episodes vs a plain load generator, same requests.

    python -m perf.engine_saturation --engine-url http://127.0.0.1:8000/v1   # a running server
    python -m perf.engine_saturation --embedded 1                           # start vLLM here
    python -m perf.engine_saturation                                        # a stub (quick)

1. agentsweep: multi-turn episodes (perf.routing's synthetic workload: a system prompt shared
   by all tasks, a task prompt shared by its trials, per turn the model's answer and a tool
   result unique to the trial; --concurrency episodes in flight, trials of a task adjacent)
   through `backends.client.ChatClient`, the client of a run, at temperature 0 and
   --max-tokens. Each request's messages and its usage (prompt, completion tokens) are kept.
2. the engine's prefix cache is emptied (POST /reset_prefix_cache).
3. generator: the same request bodies, in the order agentsweep sent them, from a plain aiohttp
   loop with --concurrency requests in flight and no dependencies between them (vLLM's
   benchmark_serving with --max-concurrency), each with max_tokens = min_tokens = the
   completion tokens agentsweep's request got and ignore_eos, so prompt and completion
   lengths (and the prefix-cache opportunity) are the same request by request.

Printed: requests, prompt and completion tokens, wall time, generated tokens/s, prefix hit
rate (/metrics) of both, and the ratio agentsweep / generator (target >= 0.95). With --repeat
the two alternate, the cache emptied before each, and the medians are shown.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time

import aiohttp
import msgspec

from backends.client import ChatClient
from backends.types import ChatMessage, Endpoint, SamplingParams
from perf.real_engines import add_real_engine_args, engines, real_mode, reset_prefix_caches, scrape
from perf.routing import text
from perf.stub_server import start_stub

STUB_ENGINE = ["--kv-tokens", "60000", "--max-running", "16", "--prefill-us", "40",
               "--decode-ms", "1.5", "--completion-tokens", "16"]
_ENC = msgspec.json.Encoder()


class Recorded(msgspec.Struct):
    messages: list[ChatMessage]
    prompt_tokens: int
    completion_tokens: int


class Phase(msgspec.Struct):
    label: str
    requests: int
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    wall_s: float
    prefix_hit: float | None

    @property
    def gen_tps(self) -> float:
        return self.completion_tokens / self.wall_s


class GenRequest(msgspec.Struct, omit_defaults=True):
    model: str
    messages: list[ChatMessage]
    max_tokens: int
    min_tokens: int
    ignore_eos: bool = True
    temperature: float = 0.0


class _Usage(msgspec.Struct):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    prompt_tokens_details: dict | None = None


class _Answer(msgspec.Struct):
    usage: _Usage


_ANSWER = msgspec.json.Decoder(_Answer)


async def hit_rate_during(url: str, coro) -> tuple[object, float | None]:
    [before] = await scrape([url])
    out = await coro
    [after] = await scrape([url])
    return out, after.hit_rate_since(before)


async def agentsweep_phase(url: str, model: str, a: argparse.Namespace
                           ) -> tuple[Phase, list[Recorded]]:
    sampling = SamplingParams(temperature=0.0, max_tokens=a.max_tokens)
    log: list[Recorded] = []
    gate = asyncio.Semaphore(a.concurrency)

    async def episode(client: ChatClient, task: int, trial: int) -> None:
        sid = f"task-{task}"
        msgs = [ChatMessage(role="system", content=text("system", a.system_chars)),
                ChatMessage(role="user", content=text(f"task{task}", a.task_chars))]
        for turn in range(a.turns):
            resp = await client.chat(msgs, session_id=sid, sampling=sampling)
            log.append(Recorded(list(msgs), resp.usage.prompt_tokens,
                                resp.usage.completion_tokens))
            msgs.append(ChatMessage(role="assistant", content=resp.message.content or ""))
            msgs.append(ChatMessage(role="user",
                                    content=text(f"tool{task}.{trial}.{turn}", a.tool_chars)))
            if a.think_s:
                await asyncio.sleep(a.think_s)

    async def one(client: ChatClient, task: int, trial: int) -> None:
        async with gate:
            await episode(client, task, trial)

    async def run() -> float:
        async with ChatClient(Endpoint(base_url=url, model=model)) as client:
            t0 = time.perf_counter()
            await asyncio.gather(*(one(client, t, k) for t in range(a.tasks)
                                   for k in range(a.trials)))
            return time.perf_counter() - t0

    wall, hit = await hit_rate_during(url, run())
    return Phase("agentsweep episodes", len(log), sum(r.prompt_tokens for r in log),
                 sum(r.completion_tokens for r in log), 0, wall, hit), log


async def generator_phase(url: str, model: str, log: list[Recorded], concurrency: int) -> Phase:
    bodies = [_ENC.encode(GenRequest(model, r.messages, max(1, r.completion_tokens),
                                     max(1, r.completion_tokens))) for r in log]
    gate = asyncio.Semaphore(concurrency)
    totals = [0, 0, 0]

    async def one(s: aiohttp.ClientSession, body: bytes) -> None:
        async with gate, s.post(url + "/chat/completions", data=body,
                                headers={"Content-Type": "application/json"}) as r:
            raw = await r.read()
            if r.status != 200:
                raise RuntimeError(f"generator request failed: {r.status} {raw[:200]!r}")
        u = _ANSWER.decode(raw).usage
        totals[0] += u.prompt_tokens
        totals[1] += u.completion_tokens
        totals[2] += (u.prompt_tokens_details or {}).get("cached_tokens") or 0

    async def run() -> float:
        conn = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=conn,
                                         timeout=aiohttp.ClientTimeout(total=None)) as s:
            t0 = time.perf_counter()
            await asyncio.gather(*(one(s, b) for b in bodies))
            return time.perf_counter() - t0

    wall, hit = await hit_rate_during(url, run())
    return Phase("open-loop generator", len(bodies), totals[0], totals[1], totals[2], wall, hit)


def median_phase(runs: list[Phase]) -> Phase:
    mid = sorted(runs, key=lambda r: r.wall_s)[len(runs) // 2]
    hits = [r.prefix_hit for r in runs]
    return msgspec.structs.replace(
        mid, wall_s=statistics.median(r.wall_s for r in runs),
        prefix_hit=None if None in hits else statistics.median(hits))  # type: ignore[arg-type]


def table(rows: list[Phase]) -> str:
    head = (f"{'load':<22}{'requests':>10}{'prompt tok':>12}{'gen tok':>9}{'wall s':>9}"
            f"{'gen tok/s':>11}{'prompt tok/s':>14}{'prefix hit':>12}")
    lines = [head, "-" * len(head)]
    for r in rows:
        hit = f"{r.prefix_hit:.1%}" if r.prefix_hit is not None else "-"
        lines.append(f"{r.label:<22}{r.requests:>10}{r.prompt_tokens:>12}"
                     f"{r.completion_tokens:>9}{r.wall_s:>9.2f}{r.gen_tps:>11.1f}"
                     f"{r.prompt_tokens / r.wall_s:>14.0f}{hit:>12}")
    return "\n".join(lines)


async def measure(url: str, a: argparse.Namespace) -> tuple[Phase, Phase, list[bool]]:
    async with ChatClient(Endpoint(base_url=url)) as c:
        model = await c.resolve_model()
    ours, theirs, resets = [], [], []
    for _ in range(a.repeat):
        resets += await reset_prefix_caches([url])
        phase, log = await agentsweep_phase(url, model, a)
        ours.append(phase)
        resets += await reset_prefix_caches([url])
        theirs.append(await generator_phase(url, model, log, a.concurrency))
    return median_phase(ours), median_phase(theirs), resets


async def amain(a: argparse.Namespace, factory=None) -> tuple[Phase, Phase]:
    where = "stub engine (simulated)"
    if real_mode(a):
        ctx = engines(a, factory)
    else:
        ctx = None
    print(f"workload: {a.tasks} tasks x {a.trials} trials x {a.turns} turns, {a.concurrency} "
          f"episodes / requests in flight, prompts ~{a.system_chars // 4}+{a.task_chars // 4}"
          f"+{a.tool_chars // 4} tokens/turn (chars/4), max_tokens {a.max_tokens}; "
          f"median of {a.repeat}", flush=True)
    if ctx is not None:
        async with ctx as urls:
            where = urls[0]
            ours, theirs, resets = await measure(urls[0], a)
    else:
        stub = start_stub(*STUB_ENGINE)
        try:
            ours, theirs, resets = await measure(stub.url, a)
        finally:
            stub.stop()
    print(f"engine: {where}")
    print(table([ours, theirs]))
    if not all(resets):
        print("note: POST /reset_prefix_cache failed (start vLLM with VLLM_SERVER_DEV_MODE=1): "
              "the generator ran on the cache agentsweep's episodes left")
    if ours.completion_tokens != theirs.completion_tokens:
        print(f"note: completion tokens differ ({ours.completion_tokens} vs "
              f"{theirs.completion_tokens}): the server ignored min_tokens/ignore_eos")
    print(f"agentsweep / generator generated tokens/s: {ours.gen_tps / theirs.gen_tps:.3f} "
          f"(target >= 0.95)")
    return ours, theirs


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m perf.engine_saturation",
                                description=__doc__.split("\n")[0])
    p.add_argument("--tasks", type=int, default=8)
    p.add_argument("--trials", type=int, default=4)
    p.add_argument("--turns", type=int, default=3)
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--max-tokens", type=int, default=32)
    p.add_argument("--system-chars", type=int, default=1200)
    p.add_argument("--task-chars", type=int, default=400)
    p.add_argument("--tool-chars", type=int, default=200)
    p.add_argument("--think-s", type=float, default=0.0, help="tool time between turns")
    p.add_argument("--repeat", type=int, default=1)
    add_real_engine_args(p, replicas=1)
    return p


def main(argv: list[str] | None = None) -> int:
    p = build_parser()
    a = p.parse_args(argv)
    if a.embedded > 1:
        p.error("--embedded: one engine")
    asyncio.run(amain(a))
    return 0


if __name__ == "__main__":
    sys.exit(main())
