"""The CPU engine's KV-cache block size, side by side: the same requests at each size.

    python -m perf.engine_blocks [--sizes 128,32] [--rounds 2]

For each size in turn (vLLM's `--block-size`; its CPU attention takes multiples of 32, its
CPU default is 128), the bundled model is started as `agentsweep serve` starts it (eager on
both cores of a small machine, `backends.server_launch.small_cpu_choices`) with that size,
and sent: one fresh ~5,000-token prompt (prefill, 1 token out), then `--rounds` times one
request of 100 tokens and 8 at once of 50 tokens each after that cached prompt (decode of long
sequences), all seeded. Printed per size: the seconds of each kind (the median over rounds),
whether the outputs equal the first size's, and each kind's ratio first size / this size.
Needs the converted default model (`bash scripts/setup.sh`); ~4 minutes a size on 2 cores.
docs/serve.md ("CPU knobs") has the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import statistics
import sys
import time
from typing import Any

KINDS = ("prefill", "1 x 100", "8 x 50")
PREFIX = "You are a travel agent. " + " ".join(
    f"Tool {i}: search_flights(origin, destination, date) returns flights." for i in range(260))


def body(model: str, i: int, tokens: int, seed: int) -> dict[str, Any]:
    """A seeded request after the shared prefix, exactly `tokens` tokens out."""
    return {"model": model, "messages": [
        {"role": "system", "content": PREFIX},
        {"role": "user", "content": f"Plan trip number {i} from Paris to Rome."}],
        "max_tokens": tokens, "min_tokens": tokens, "temperature": 0.7, "seed": seed}


def sizes_arg(text: str) -> list[int]:
    sizes = [int(x) for x in text.split(",") if x.strip()]
    if not sizes or any(s < 32 or s % 32 for s in sizes):
        raise argparse.ArgumentTypeError(f"sizes must be multiples of 32, got {text!r}")
    return sizes


def table(rows: dict[int, dict[str, float]], same: dict[int, bool]) -> list[str]:
    """The printed lines: seconds per kind and size, then each size's ratios to the first."""
    first = next(iter(rows))
    out = [f"{'block':>6}" + "".join(f"{k:>10}" for k in KINDS) + f"{'outputs':>10}"]
    for size, row in rows.items():
        out.append(f"{size:>6}" + "".join(f"{row[k]:>9.1f}s" for k in KINDS)
                   + f"{'same' if same[size] else 'DIFFER':>10}")
    for size, row in list(rows.items())[1:]:
        out.append(f"{first} / {size}: " + ", ".join(
            f"{k} {rows[first][k] / row[k]:.2f}x" for k in KINDS))
    return out


async def measure(url: str, model: str, rounds: int) -> tuple[dict[str, float], str]:
    import aiohttp

    async def one(session: aiohttp.ClientSession, payload: dict[str, Any]) -> str:
        async with session.post(f"{url}/chat/completions", json=payload) as r:
            r.raise_for_status()
            return (await r.json())["choices"][0]["message"]["content"]

    times: dict[str, list[float]] = {k: [] for k in KINDS}
    outputs: list[str] = []
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=3600)) as s:
        t = time.monotonic()
        await one(s, body(model, 0, 1, 1))
        times["prefill"].append(time.monotonic() - t)
        for r in range(rounds):
            t = time.monotonic()
            outputs.append(await one(s, body(model, 100 + r, 100, 7)))
            times["1 x 100"].append(time.monotonic() - t)
            t = time.monotonic()
            outputs += await asyncio.gather(*[one(s, body(model, 10 * r + k, 50, k))
                                              for k in range(8)])
            times["8 x 50"].append(time.monotonic() - t)
    digest = hashlib.sha256(json.dumps(outputs).encode()).hexdigest()
    return {k: statistics.median(v) for k, v in times.items()}, digest


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m perf.engine_blocks", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", type=sizes_arg, default=[128, 32],
                   help="block sizes, the first the baseline (128,32)")
    p.add_argument("--rounds", type=int, default=2, help="decode rounds a size (2)")
    args = p.parse_args(argv)
    from backends.model import default_model_dir, is_converted
    from backends.server import VLLMServer
    from backends.server_launch import allowed_cpus, resolve_device, small_cpu_choices

    if not is_converted(default_model_dir()):  # a half-written conversion is not a model
        print("perf.engine_blocks: no converted default model; run `bash scripts/setup.sh` "
              "first", file=sys.stderr)
        return 2
    device = resolve_device("cpu")
    eager, threads = small_cpu_choices(device, len(allowed_cpus()), None, None)
    rows: dict[int, dict[str, float]] = {}
    digests: dict[int, str] = {}
    for size in args.sizes:  # one engine at a time: each has the machine to itself
        with VLLMServer(device=device, eager=eager, cpu_threads=threads,
                        extra_args=["--block-size", str(size)]) as server:
            rows[size], digests[size] = asyncio.run(
                measure(server.base_url, server.model, args.rounds))
        print(f"block {size}: done", file=sys.stderr)
    first = args.sizes[0]
    print("\n".join(table(rows, {s: d == digests[first] for s, d in digests.items()})))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
