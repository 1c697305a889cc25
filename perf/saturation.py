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
"""

from __future__ import annotations

import argparse
import asyncio

import msgspec

from backends.router import RouterSettings
from backends.router_admission import AdmissionSettings
from perf.routing import SweepResult, Workload, median_run, sweep
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


async def amain(a: argparse.Namespace) -> None:
    w = Workload(tasks=a.tasks, trials=a.trials, turns=a.turns, episodes=a.tasks * a.trials)
    if a.quick:
        w = msgspec.structs.replace(w, tasks=8, turns=4, episodes=32)
    turn = w.tool_chars // 4 + 10
    g = w.system_chars // 4 + w.task_chars // 4 + w.turns * turn + a.completion_tokens
    working = w.system_chars // 4 + w.tasks * w.task_chars // 4 + w.episodes * w.turns * turn
    print(f"workload: {w.tasks} tasks x {w.trials} trials x {w.turns} turns, all "
          f"{w.episodes} episodes started at once; 1 replica, {a.kv_tokens} KV tokens "
          f"(working set ~{working} tokens), G = {g} tokens per episode, kappa "
          f"{a.kappa}; median of {a.repeat}")
    variants: dict[str, AdmissionSettings] = {
        order: AdmissionSettings(order=order, kappa=a.kappa, tokens_per_episode=g)
        for order in ("depth_first", "fifo", "breadth_first")
    }
    variants["no admission"] = AdmissionSettings(enabled=False)
    rows = []
    for label, adm in variants.items():
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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m perf.saturation",
                                description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--tasks", type=int, default=16)
    p.add_argument("--trials", type=int, default=4)
    p.add_argument("--turns", type=int, default=6)
    p.add_argument("--kv-tokens", type=int, default=24000)
    p.add_argument("--kappa", type=float, default=2.0)
    p.add_argument("--completion-tokens", type=int, default=256)
    p.add_argument("--decode-ms", type=float, default=0.25, help="per generated token")
    p.add_argument("--max-running", type=int, default=32)
    p.add_argument("--repeat", type=int, default=1)
    a = p.parse_args(argv)
    asyncio.run(amain(a))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
