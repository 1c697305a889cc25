"""Depth-first vs breadth-first admission on one replica smaller than the working set.

    python -m perf.saturation [--quick] [--kv-tokens 24000] [--repeat 1]

One `perf.stub_server` runs the simulated engine (`perf.stub_engine`) with a KV capacity well
below the sweep's working set (all episodes' contexts), so admitting too much makes the engine
preempt and evict cached prefixes. Every episode of the sweep is started at once (the
scheduler's episode concurrency is not the limit); `backends.router.Router`'s per-replica
admission decides what reaches the engine. Its cap starts at the KV bound kappa * C / G
(C read from the stub's vllm:cache_config_info, G = expected tokens per episode) and adapts
from /metrics (0.75x in flight on preemption, growth while nothing waits). Compared:

  depth_first     requests of started episodes first, older episodes first (the default)
  fifo            in arrival order
  breadth_first   first requests of new episodes first
  no admission    every request straight to the engine (its own FCFS queue and preemption)

Printed: sweep time, preemptions, prefix hit rate (tokens, as in perf.routing), the cap at
the end and the number of cuts on preemption. Measurements, not tests.

Real engine (`perf.real_engines`): `--engine-url URL` (a running server) or `--embedded 1
--num-blocks B [--max-num-seqs S]` (one embedded vLLM server with a KV cache of B blocks,
started here) runs the same four variants on it, the prefix cache emptied (POST
/reset_prefix_cache) before each; preemptions, hits and queries from vLLM's /metrics; C for the
KV bound from its vllm:cache_config_info. The workload then defaults to a small one (8 tasks x
4 trials x 3 turns, all 32 episodes at once, 32 generated tokens per answer at most).
"""

from __future__ import annotations

import argparse
import asyncio

import msgspec

from backends.router import RouterSettings
from backends.router_admission import AdmissionSettings, kv_capacity_tokens
from perf.real_engines import (
    add_real_engine_args,
    cache_note,
    engines,
    metrics_text,
    real_mode,
    reset_prefix_caches,
)
from perf.routing import REAL_WORKLOAD, SweepResult, Workload, median_run, sweep
from perf.stub_server import start_stub


def engine_args(a: argparse.Namespace) -> list[str]:
    return ["--kv-tokens", str(a.kv_tokens), "--max-running", str(a.max_running),
            "--prefill-us", "40", "--decode-ms", str(a.decode_ms),
            "--completion-tokens", str(a.completion_tokens)]


def table(rows: list[SweepResult]) -> str:
    head = (f"{'admission':<16}{'sweep s':>9}{'preemptions':>13}{'prefix hit':>12}"
            f"{'gen tok/s':>11}{'cap at end':>12}{'cap cuts':>10}")
    lines = [head, "-" * len(head)]
    for r in rows:
        hit = f"{r.prefix_hit:.1%}" if r.prefix_hit is not None else "-"
        cap = str(r.caps[0]) if r.caps else "-"
        lines.append(f"{r.label:<16}{r.wall_s:>9.2f}{r.preemptions:>13.0f}{hit:>12}"
                     f"{r.gen_tps:>11.0f}{cap:>12}{r.cuts:>10}")
    return "\n".join(lines)


def workload(a: argparse.Namespace) -> Workload:
    real = real_mode(a)
    base = REAL_WORKLOAD if real else Workload(tasks=16, trials=4, turns=6)
    if a.quick:
        base = msgspec.structs.replace(base, tasks=8, turns=4)
    given = {k: v for k, v in (("tasks", a.tasks), ("trials", a.trials), ("turns", a.turns))
             if v is not None}
    w = msgspec.structs.replace(base, **given)
    max_tokens = a.max_tokens or (32 if real else w.max_tokens)
    return msgspec.structs.replace(w, episodes=w.tasks * w.trials, max_tokens=max_tokens)


def variants(a: argparse.Namespace, g: int) -> dict[str, AdmissionSettings]:
    out: dict[str, AdmissionSettings] = {
        order: AdmissionSettings(order=order, kappa=a.kappa, tokens_per_episode=g)
        for order in ("depth_first", "fifo", "breadth_first")
    }
    out["no admission"] = AdmissionSettings(enabled=False)
    return out


async def amain(a: argparse.Namespace, factory=None) -> list[SweepResult]:
    w = workload(a)
    real = real_mode(a)
    completion = w.max_tokens if real else a.completion_tokens
    turn = w.tool_chars // 4 + (completion if real else 10)  # the stub's answer: ~10 tokens
    g = w.system_chars // 4 + w.task_chars // 4 + w.turns * turn + completion
    working = w.system_chars // 4 + w.tasks * w.task_chars // 4 + w.episodes * w.turns * turn
    kv = "KV tokens from /metrics" if real else f"{a.kv_tokens} KV tokens"
    print(f"workload: {w.tasks} tasks x {w.trials} trials x {w.turns} turns, all "
          f"{w.episodes} episodes started at once; 1 replica{' (real engine)' if real else ''}, "
          f"{kv} (working set ~{working} tokens, chars/4), G = {g} tokens per episode, kappa "
          f"{a.kappa}; median of {a.repeat}", flush=True)
    rows = []
    if real:
        async with engines(a, factory) as urls:
            page = await metrics_text(urls[0])
            print(f"engine: {urls[0]}, KV cache {kv_capacity_tokens(page)} tokens "
                  f"(vllm:cache_config_info)", flush=True)
            resets: list[bool] = []
            for label, adm in variants(a, g).items():
                runs = []
                for _ in range(a.repeat):
                    resets += await reset_prefix_caches(urls[:1])
                    s = RouterSettings(admission=adm, poll_interval_s=0.2)
                    runs.append(await sweep(label, urls[:1], w, s, model=None))
                rows.append(median_run(runs))
            note = cache_note(resets)
            if note:
                print(note)
    else:
        for label, adm in variants(a, g).items():
            runs = []
            for _ in range(a.repeat):
                stub = start_stub(*engine_args(a))
                try:
                    s = RouterSettings(admission=adm, poll_interval_s=0.2)
                    r = await sweep(label, [stub.url], w, s)
                finally:
                    stub.stop()
                runs.append(r)
            rows.append(median_run(runs))
    print(table(rows))
    by = {r.label: r for r in rows}
    d, b, n = by["depth_first"], by["breadth_first"], by["no admission"]
    print(f"depth-first vs breadth-first: sweep time {b.wall_s / d.wall_s:.2f}x shorter, "
          f"preemptions {d.preemptions:.0f} vs {b.preemptions:.0f}")
    print(f"depth-first vs no admission: sweep time {n.wall_s / d.wall_s:.2f}x shorter, "
          f"preemptions {d.preemptions:.0f} vs {n.preemptions:.0f}")
    return rows


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m perf.saturation",
                                description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--tasks", type=int, default=None, help="16 (real engine: 8)")
    p.add_argument("--trials", type=int, default=None, help="4")
    p.add_argument("--turns", type=int, default=None, help="6 (real engine: 3)")
    p.add_argument("--max-tokens", type=int, default=None, help="real engine: 32")
    p.add_argument("--kv-tokens", type=int, default=24000, help="stub")
    p.add_argument("--kappa", type=float, default=2.0)
    p.add_argument("--completion-tokens", type=int, default=256, help="stub")
    p.add_argument("--decode-ms", type=float, default=0.25, help="stub, per generated token")
    p.add_argument("--max-running", type=int, default=32, help="stub")
    p.add_argument("--repeat", type=int, default=1)
    add_real_engine_args(p, replicas=1)
    return p


def main(argv: list[str] | None = None) -> int:
    p = build_parser()
    a = p.parse_args(argv)
    asyncio.run(amain(a))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
