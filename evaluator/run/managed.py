"""Managed replicas of the embedded engine (`[engine] replicas`, `gpus_per_replica`;
`agentsweep run --replicas N --gpus-per-replica G`).

N engines (`backends.server.VLLMServer`, or what a test's factory makes) start side by side:
on GPUs, replica i gets the disjoint set i*G .. i*G+G-1 of the visible GPUs (`gpus`, tensor
parallel over G); on CPU 1/N of the cores; each its own port on 127.0.0.1. Every role (and judge endpoint) that says
"embedded" is then routed over them by a `backends.router.Router`, with each server's restart
callback (stop, start again) for the router's health loop.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ServerFactory = Callable[..., Any]


def replica_kwargs(engine: Any, index: int, device: str, run_dir: Path) -> dict[str, Any]:
    """The VLLMServer keyword arguments of replica `index` (device already resolved)."""
    n = engine.replicas
    kw: dict[str, Any] = {
        "device": device, "max_model_len": engine.max_model_len,
        "cpu_kv_cache_gb": engine.cpu_kv_cache_gb, "extra_args": engine.extra_args,
        "log_path": run_dir / f"engine-{index}.log",
        "startup_timeout_s": engine.startup_timeout_s,
    }
    if device == "gpu":
        g = engine.gpus_per_replica or engine.tensor_parallel_size
        ids = visible_gpus() or [str(k) for k in range(n * g)]
        kw["gpus"] = ",".join(ids[index * g:(index + 1) * g])
        kw["tensor_parallel_size"] = g
    else:  # a share of this process's cores each: replica i binds to the i-th slice
        from backends.server_launch import allowed_cpus

        cpus = allowed_cpus()
        t = max(1, len(cpus) // n)
        start = (index * t) % len(cpus)
        kw["cpu_threads"] = t
        kw["cpu_ids"] = (cpus + cpus)[start:start + t]
        kw["tensor_parallel_size"] = 1
    eager = getattr(engine, "eager", False)
    if eager == "auto":  # a CPU replica on at most 2 cores runs eagerly (small_cpu_choices)
        from backends.server_launch import small_cpu

        eager = small_cpu(device, kw.get("cpu_threads", 0))
    if eager:
        kw["eager"] = True
    return kw


def visible_gpus() -> list[str]:
    """This process's CUDA_VISIBLE_DEVICES as a list ([] when unset): replica i takes the i-th
    slice of it, so `CUDA_VISIBLE_DEVICES=4,5,6,7 --replicas 2 --gpus-per-replica 2` gives
    4,5 and 6,7 (a child's CUDA_VISIBLE_DEVICES names physical GPUs)."""
    v = os.environ.get("CUDA_VISIBLE_DEVICES", "").strip()
    return [x.strip() for x in v.split(",") if x.strip()] if v and v != "-1" else []


def distinct_ports(n: int, host: str = "127.0.0.1") -> list[int]:
    """n TCP ports free right now, all different (held open together while picked)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            socks.append(s)
            s.bind((host, 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def gpu_count() -> int | None:
    try:
        import torch

        return torch.cuda.device_count() if torch.cuda.is_available() else None
    except ImportError:
        return None


async def start_replicas(engine: Any, run_dir: Path, factory: ServerFactory | None = None
                         ) -> list[Any]:
    """Start `engine.replicas` servers at once; on any failure stop those that started."""
    if factory is None:
        from backends.server import VLLMServer

        factory = VLLMServer
    from backends.server_launch import resolve_device

    device = resolve_device(engine.device)
    n = engine.replicas
    if device == "gpu":
        g = engine.gpus_per_replica or engine.tensor_parallel_size
        have = len(visible_gpus()) or gpu_count()
        if have is not None and n * g > have:
            raise ValueError(f"engine.replicas: {n} replicas x {g} GPUs need {n * g} GPUs; "
                             f"{have} visible")
    ports = distinct_ports(n)
    servers = [factory(engine.model or None, port=ports[i],
                       **replica_kwargs(engine, i, device, run_dir)) for i in range(n)]
    print(f"starting {n} replicas of the embedded engine on {device} (logs: "
          f"{run_dir / 'engine-*.log'}) ...", file=sys.stderr)
    results = await asyncio.gather(*(s.astart() for s in servers), return_exceptions=True)
    errors = [r for r in results if isinstance(r, BaseException)]
    if errors:
        await stop_replicas(servers)
        raise errors[0]
    return servers


async def stop_replicas(servers: list[Any]) -> None:
    await asyncio.gather(*(s.astop() for s in servers), return_exceptions=True)
