"""Placement policies side by side on two stub replicas: prefix hits, tokens/s, sweep time.

    python -m perf.routing [--quick] [--tasks 24] [--trials 4] [--turns 6] [--episodes 32]

Two `perf.stub_server` processes run the simulated engine (`perf.stub_engine`: KV capacity,
batch slots, prefix cache, prefill/decode time). A sweep of multi-turn episodes (trials of a
task adjacent, as the scheduler orders them; all trials of a task share one session id, a
system prompt shared by all tasks, a task prompt shared by its trials, then per turn the answer
and a tool result unique to the trial) runs through `backends.router.Router` once per policy:
sticky_least_loaded, round_robin, hash (of the task's session id). Then again with replica 1
three times slower (--slowdown 3). Printed per run:

  prefix hit   token-level prefix-cache hit rate of the replicas: the simulated engine counts,
               per admitted request, prompt tokens queried and the leading tokens found in its
               cache (message-granular blocks, LRU under the KV capacity), exported as
               vllm:prefix_cache_{queries,hits}_total; the rate is hits/queries summed over
               both replicas between the sweep's start and end.
  affinity     share of requests (after a session's first) answered by the replica that
               answered that session's previous request (router side).
  gen tok/s    completion tokens / sweep wall time;  prompt tok/s: prompt tokens / wall time.
  sweep s      wall time of the whole sweep.
These are measurements on a loaded shared machine, not tests; repeat for noise.

Real engines (`perf.real_engines`): `--engine-urls URL1,URL2` (running servers) or
`--embedded 2` (two embedded vLLM servers started here, cores split between them) run the
equal-replicas comparison on real prefix caches (hits and queries from vLLM's /metrics),
emptied (POST /reset_prefix_cache) before every sweep; the workload defaults to a small one
(8 tasks x 4 trials x 3 turns, 16 in flight, prompts of a few hundred tokens, 24 generated
tokens per answer). The "one replica 3x slower" variant stays on the stub: CPU replicas on a
shared 2-core machine cannot be throttled to a fixed ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from backends.router import Router, RouterSettings
from backends.router_admission import AdmissionSettings
from backends.types import ChatMessage, SamplingParams
from backends.vllm_metrics import VLLMMetrics, parse_vllm_metrics
from perf.real_engines import (
    add_real_engine_args,
    cache_note,
    engines,
    real_mode,
    reset_prefix_caches,
)
from perf.stub_server import StubProcess, start_stub

WORDS = ("flight", "hotel", "price", "date", "city", "check", "booking", "room", "seat", "train",
         "budget", "guest", "night", "airport", "transfer", "museum", "dinner", "refund",
         "policy", "luggage")


def text(seed: str, chars: int) -> str:
    """Deterministic filler of about `chars` characters."""
    out, i = [], 0
    h = hashlib.blake2b(seed.encode(), digest_size=32).digest()
    while sum(len(w) + 1 for w in out) < chars:
        out.append(WORDS[h[i % 32] % len(WORDS)] + str(i))
        i += 1
    return " ".join(out)


class Workload(msgspec.Struct, frozen=True):
    tasks: int = 24
    trials: int = 4
    turns: int = 6
    episodes: int = 32  # in flight at once
    think_s: float = 0.01  # tool time between turns
    system_chars: int = 6000
    task_chars: int = 2000
    tool_chars: int = 800
    max_tokens: int = 16  # the stub answers --completion-tokens whatever this says

    @property
    def sampling(self) -> SamplingParams:
        return SamplingParams(temperature=0.0, max_tokens=self.max_tokens)


REAL_WORKLOAD = Workload(tasks=8, trials=4, turns=3, episodes=16, system_chars=1600,
                         task_chars=600, tool_chars=300, max_tokens=24)


class SweepResult(msgspec.Struct):
    label: str
    wall_s: float
    requests: int
    prompt_tokens: int
    completion_tokens: int
    prefix_hit: float | None
    affinity: float | None
    preemptions: float
    per_replica: list[int]  # requests answered by each replica
    caps: list[int] = []  # admission caps at the end
    cuts: int = 0  # admission cap cuts on preemption

    @property
    def gen_tps(self) -> float:
        return self.completion_tokens / self.wall_s

    @property
    def prompt_tps(self) -> float:
        return self.prompt_tokens / self.wall_s


async def episode(router: Router, w: Workload, task: int, trial: int, totals: list[int]) -> None:
    sid = f"task-{task}"
    msgs = [ChatMessage(role="system", content=text("system", w.system_chars)),
            ChatMessage(role="user", content=text(f"task{task}", w.task_chars))]
    for turn in range(w.turns):
        resp = await router.chat(msgs, session_id=sid, sampling=w.sampling)
        totals[0] += resp.usage.prompt_tokens
        totals[1] += resp.usage.completion_tokens
        msgs.append(ChatMessage(role="assistant", content=resp.message.content or ""))
        msgs.append(ChatMessage(role="user",
                                content=text(f"tool{task}.{trial}.{turn}", w.tool_chars)))
        if w.think_s:
            await asyncio.sleep(w.think_s)
    router.end_session(sid)


async def scrape_all(router: Router) -> list[VLLMMetrics]:
    pages = [await r.client.get_text("/metrics") for r in router.replicas]
    return [parse_vllm_metrics(p) for p in pages]


def affinity(placements: Sequence[tuple[str | None, int]]) -> float | None:
    last: dict[str | None, int] = {}
    same = total = 0
    for sid, r in placements:
        if sid in last:
            total += 1
            same += last[sid] == r
        last[sid] = r
    return same / total if total else None


async def sweep(label: str, urls: list[str], w: Workload, settings: RouterSettings,
                model: str | None = "stub-model") -> SweepResult:
    """One sweep through a Router over `urls` (model None: the servers' first model)."""
    async with Router(urls, model=model, settings=settings) as router:
        router.placements = []
        before = await scrape_all(router)
        units = [(t, k) for t in range(w.tasks) for k in range(w.trials)]
        gate = asyncio.Semaphore(w.episodes)
        totals = [0, 0]

        async def one(t: int, k: int) -> None:
            async with gate:
                await episode(router, w, t, k, totals)

        t0 = time.perf_counter()
        await asyncio.gather(*(one(t, k) for t, k in units))
        wall = time.perf_counter() - t0
        after = await scrape_all(router)
        caps = [r.admission.limit for r in router.replicas]
        cuts = sum(r.admission.stats.preemption_cuts for r in router.replicas)
    q = sum((a.prefix_cache_queries or 0) - (b.prefix_cache_queries or 0)
            for a, b in zip(after, before, strict=True))
    h = sum((a.prefix_cache_hits or 0) - (b.prefix_cache_hits or 0)
            for a, b in zip(after, before, strict=True))
    pre = sum((a.preemptions or 0) - (b.preemptions or 0) for a, b in zip(after, before,
                                                                          strict=True))
    counts = [0] * len(urls)
    for _, r in router.placements:
        counts[r] += 1
    return SweepResult(label, wall, len(router.placements), totals[0], totals[1],
                       h / q if q else None, affinity(router.placements), pre, counts, caps, cuts)


def engine_args(kv_tokens: int, slowdown: float = 1.0) -> list[str]:
    return ["--kv-tokens", str(kv_tokens), "--max-running", "8", "--prefill-us", "40",
            "--decode-ms", "1.5", "--completion-tokens", "16", "--slowdown", str(slowdown)]


def table(rows: list[SweepResult]) -> str:
    head = (f"{'run':<46}{'sweep s':>9}{'gen tok/s':>11}{'prompt tok/s':>14}{'prefix hit':>12}"
            f"{'affinity':>10}{'preempt':>9}  requests per replica")
    lines = [head, "-" * len(head)]
    for r in rows:
        hit = f"{r.prefix_hit:.1%}" if r.prefix_hit is not None else "-"
        aff = f"{r.affinity:.1%}" if r.affinity is not None else "-"
        lines.append(f"{r.label:<46}{r.wall_s:>9.2f}{r.gen_tps:>11.0f}{r.prompt_tps:>14.0f}"
                     f"{hit:>12}{aff:>10}{r.preemptions:>9.0f}  {r.per_replica}")
    return "\n".join(lines)


def median_run(runs: list[SweepResult]) -> SweepResult:
    """Each figure the median over the repeats (caps and counts from the median-time run)."""
    mid = sorted(runs, key=lambda r: r.wall_s)[len(runs) // 2]

    def med(f: Callable[[SweepResult], float | None]) -> Any:
        vals = [f(r) for r in runs]
        return None if None in vals else statistics.median(vals)

    return msgspec.structs.replace(
        mid, wall_s=med(lambda r: r.wall_s), preemptions=med(lambda r: r.preemptions),
        prefix_hit=med(lambda r: r.prefix_hit), affinity=med(lambda r: r.affinity),
        prompt_tokens=int(med(lambda r: r.prompt_tokens)),
        completion_tokens=int(med(lambda r: r.completion_tokens)))


async def scenario(name: str, slowdowns: tuple[float, float], w: Workload, kv: int,
                   repeat: int) -> dict[str, SweepResult]:
    out: dict[str, SweepResult] = {}
    settings = {p: RouterSettings(policy=p, admission=AdmissionSettings(initial_cap=64))
                for p in ("sticky_least_loaded", "round_robin", "hash")}
    for policy, s in settings.items():
        runs = []
        for _ in range(repeat):  # fresh replicas (empty caches) for every sweep
            stubs: list[StubProcess] = [start_stub(*engine_args(kv, sd)) for sd in slowdowns]
            try:
                runs.append(await sweep(f"{name}: {policy}", [x.url for x in stubs], w, s))
            finally:
                for x in stubs:
                    x.stop()
        out[policy] = median_run(runs)
    return out


def ratio_line(what: str, a: SweepResult, b: SweepResult) -> str:
    return (f"{what}: sweep time {b.wall_s / a.wall_s:.2f}x shorter, "
            f"gen tok/s {a.gen_tps / b.gen_tps:.2f}x")


POLICIES = ("sticky_least_loaded", "round_robin", "hash")


async def real_scenario(urls: list[str], w: Workload, repeat: int) -> dict[str, SweepResult]:
    """The policies on the same running engines, each sweep from an emptied prefix cache."""
    out: dict[str, SweepResult] = {}
    resets: list[bool] = []
    for policy in POLICIES:
        s = RouterSettings(policy=policy, admission=AdmissionSettings(initial_cap=64))
        runs = []
        for _ in range(repeat):
            resets += await reset_prefix_caches(urls)
            runs.append(await sweep(f"real equal replicas: {policy}", urls, w, s, model=None))
        out[policy] = median_run(runs)
    note = cache_note(resets)
    if note:
        print(note)
    return out


def workload(a: argparse.Namespace) -> Workload:
    base = REAL_WORKLOAD if real_mode(a) else Workload()
    if a.quick:
        base = msgspec.structs.replace(base, tasks=8, turns=4, episodes=16)
    given = {k: v for k, v in (("tasks", a.tasks), ("trials", a.trials), ("turns", a.turns),
                               ("episodes", a.episodes), ("max_tokens", a.max_tokens))
             if v is not None}
    return msgspec.structs.replace(base, **given)


async def amain_real(a: argparse.Namespace, factory=None) -> dict[str, SweepResult]:
    w = workload(a)
    print(f"workload: {w.tasks} tasks x {w.trials} trials x {w.turns} turns, {w.episodes} "
          f"episodes in flight, prompts ~{w.system_chars // 4}+{w.task_chars // 4}"
          f"+{w.tool_chars // 4} tokens/turn (chars/4), max_tokens {w.max_tokens}; 2 real "
          f"replicas; median of {a.repeat}", flush=True)
    async with engines(a, factory) as urls:
        if len(urls) != 2:
            raise SystemExit(f"--engine-urls: two replicas, got {len(urls)}")
        print(f"replicas: {urls}", flush=True)
        res = await real_scenario(urls, w, a.repeat)
    print(table(list(res.values())))
    s, rr, h = res["sticky_least_loaded"], res["round_robin"], res["hash"]
    print(ratio_line("real, sticky least-loaded vs round-robin", s, rr))
    print(ratio_line("real, sticky least-loaded vs hash-of-task", s, h))
    hit = {k: f"{v.prefix_hit:.1%}" if v.prefix_hit is not None else "-" for k, v in res.items()}
    print(f"hit rates: sticky {hit['sticky_least_loaded']}, round-robin {hit['round_robin']}, "
          f"hash {hit['hash']}")
    print("one replica 3x slower: stub only (python -m perf.routing without --engine-urls); "
          "CPU replicas sharing 2 cores cannot be throttled to a fixed ratio")
    return res


async def amain(a: argparse.Namespace) -> None:
    if real_mode(a):
        await amain_real(a)
        return
    w = workload(a)
    print(f"workload: {w.tasks} tasks x {w.trials} trials x {w.turns} turns, {w.episodes} "
          f"episodes in flight, 2 replicas x {a.kv_tokens} KV tokens, 8 batch slots each; "
          f"median of {a.repeat}")
    even = await scenario("equal replicas", (1.0, 1.0), w, a.kv_tokens, a.repeat)
    slow = await scenario("replica 1 is 3x slower", (1.0, 3.0), w, a.kv_tokens, a.repeat)
    print(table([*even.values(), *slow.values()]))
    s, rr, h = even["sticky_least_loaded"], even["round_robin"], even["hash"]
    print(ratio_line("equal, sticky least-loaded vs round-robin", s, rr))
    print(ratio_line("equal, sticky least-loaded vs hash-of-task", s, h))
    s, h = slow["sticky_least_loaded"], slow["hash"]
    print(ratio_line("3x slower replica, sticky least-loaded vs round-robin", s,
                     slow["round_robin"]))
    print(ratio_line("3x slower replica, sticky least-loaded vs hash-of-task", s, h))
    print(f"hit rates, 3x slower replica: sticky {s.prefix_hit:.1%}, hash {h.prefix_hit:.1%}, "
          f"round-robin {slow['round_robin'].prefix_hit:.1%}")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m perf.routing", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--tasks", type=int, default=None, help="24 (real engines: 8)")
    p.add_argument("--trials", type=int, default=None, help="4")
    p.add_argument("--turns", type=int, default=None, help="6 (real engines: 3)")
    p.add_argument("--episodes", type=int, default=None, help="in flight: 32 (real: 16)")
    p.add_argument("--max-tokens", type=int, default=None, help="real engines: 24")
    p.add_argument("--kv-tokens", type=int, default=30000, help="stub replicas")
    p.add_argument("--repeat", type=int, default=1)
    add_real_engine_args(p, replicas=2)
    return p


def main(argv: list[str] | None = None) -> int:
    p = build_parser()
    a = p.parse_args(argv)
    asyncio.run(amain(a))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
