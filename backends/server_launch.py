"""Pure pieces of launching a vLLM OpenAI server: device choice, command line, environment.

Nothing here starts a process or imports torch/vllm at import time, so all of it is cheap to
unit-test. `backends.server.VLLMServer` puts these together.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import socket
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

DeviceChoice = Literal["auto", "cpu", "gpu"]
Device = Literal["cpu", "gpu"]

VLLM_MODULE = "vllm.entrypoints.openai.api_server"
DEVICE_CHOICES: tuple[str, ...] = ("auto", "cpu", "gpu")


def default_launcher() -> list[str]:
    """argv prefix that starts the OpenAI server (the `vllm` CLI of vllm-cpu is broken)."""
    return [sys.executable, "-m", VLLM_MODULE]


def cuda_available() -> bool:
    """True if a CUDA GPU is usable. Cheap checks first; torch is imported only if a driver
    is present, and never at module import time."""
    if os.environ.get("CUDA_VISIBLE_DEVICES", None) in ("", "-1"):
        return False
    if not (Path("/dev/nvidiactl").exists() or shutil.which("nvidia-smi")):
        return False
    try:
        import torch
    except ImportError:
        return False
    try:
        return bool(torch.cuda.is_available())
    except (RuntimeError, OSError, AssertionError):  # a broken driver counts as "no GPU"
        return False


def resolve_device(device: str, *, gpu_probe=cuda_available) -> Device:
    """"auto" -> "gpu" when CUDA is usable, else "cpu". Explicit choices are validated."""
    if device not in DEVICE_CHOICES:
        raise ValueError(f"device must be one of {', '.join(DEVICE_CHOICES)}, got {device!r}")
    if device == "auto":
        return "gpu" if gpu_probe() else "cpu"
    return device  # type: ignore[return-value]


BF16_CPU_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})
"""CPU flags of native bfloat16 arithmetic (x86: AVX512-BF16, AMX)."""


def cpu_flags(path: str = "/proc/cpuinfo") -> frozenset[str] | None:
    """The CPU's feature flags (x86 `flags`, ARM `Features`), or None when unknown."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key.strip() in ("flags", "Features"):
                    return frozenset(value.split())
    except OSError:
        return None
    return None


def cpu_dtype(flags: frozenset[str] | None) -> str:
    """The `--dtype` of a CPU engine: "float32" on an x86 CPU without native bfloat16 (AVX2
    only: torch multiplies bfloat16 matrices there with a scalar fallback, and one step of the
    bundled model took minutes), else "auto" (the model's own, bfloat16 for SmolLM2)."""
    if flags is None or "avx2" not in flags:  # not x86, or not known: leave it to vLLM
        return "auto"
    return "auto" if flags & BF16_CPU_FLAGS else "float32"


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free right now on `host` (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def build_command(
    model: str | Path,
    *,
    port: int,
    host: str = "127.0.0.1",
    served_model_name: str | None = None,
    device: Device = "cpu",
    tensor_parallel_size: int = 1,
    max_model_len: int | None = 8192,
    tool_call_parser: str | None = "hermes",
    chat_template: str | Path | None = None,
    dtype: str = "auto",
    gpu_memory_utilization: float | None = None,
    access_log: bool = False,
    eager: bool = False,
    extra_args: Sequence[str] = (),
    launcher: Sequence[str] | None = None,
) -> list[str]:
    """The argv of one vLLM OpenAI server. Prefix caching and cached-token usage details are
    always on (agentsweep measures prefix reuse); tool calling is on unless the parser is None.
    `eager`: run the model eagerly (`--enforce-eager`: no compilation at start, slower steps).
    `extra_args` come last so they can override anything before them."""
    if port <= 0 or port > 65535:
        raise ValueError(f"port must be in 1..65535, got {port}")
    if tensor_parallel_size < 1:
        raise ValueError(f"tensor_parallel_size must be >= 1, got {tensor_parallel_size}")
    if device == "cpu" and tensor_parallel_size != 1:
        raise ValueError("tensor_parallel_size > 1 needs device='gpu'")
    cmd = list(launcher) if launcher is not None else default_launcher()
    cmd += ["--model", str(model), "--host", host, "--port", str(port)]
    if served_model_name:
        cmd += ["--served-model-name", served_model_name]
    cmd += ["--enable-prefix-caching", "--enable-prompt-tokens-details"]
    if tool_call_parser:
        cmd += ["--enable-auto-tool-choice", "--tool-call-parser", tool_call_parser]
    if chat_template is not None:
        cmd += ["--chat-template", str(chat_template)]
    if max_model_len:
        cmd += ["--max-model-len", str(max_model_len)]
    if dtype == "auto" and device == "cpu" and not _names(extra_args, "--dtype"):
        dtype = cpu_dtype(cpu_flags())
    if dtype != "auto":
        cmd += ["--dtype", dtype]
    if tensor_parallel_size > 1:
        cmd += ["--tensor-parallel-size", str(tensor_parallel_size)]
    if device == "gpu" and gpu_memory_utilization is not None:
        cmd += ["--gpu-memory-utilization", f"{gpu_memory_utilization:g}"]
    if not access_log:  # one log line per request is a hot-path cost at thousands of req/s
        cmd += ["--disable-uvicorn-access-log"]
    if eager and not _names(extra_args, "--enforce-eager"):
        cmd += ["--enforce-eager"]
    if device == "cpu" and not _names(extra_args, "--override-generation-config",
                                      "--generation-config"):
        # a server-wide output cap (vLLM: `max_new_tokens` in the generation config): a
        # request without max_tokens (VitaBench's reference sends none) would otherwise
        # decode until the context is full, which takes longer than a request may on a CPU
        cmd += ["--override-generation-config",
                json.dumps({"max_new_tokens": CPU_MAX_NEW_TOKENS})]
    if device == "cpu" and max_model_len and not _names(
            extra_args, "--enable-chunked-prefill", "--no-enable-chunked-prefill",
            "--max-num-batched-tokens"):
        # vllm-cpu 0.32 kills its engine on a seeded request whose prefill is chunked ("CPU
        # Generator does not use offset"); whole prefills keep per-unit seeds safe to send
        cmd += ["--no-enable-chunked-prefill", "--max-num-batched-tokens", str(max_model_len)]
    cmd += list(extra_args)
    return cmd


CPU_MAX_NEW_TOKENS = 1024
"""Output tokens per request at most on a CPU engine started here (docs/serve.md)."""

CPU_REQUEST_TIMEOUT_S = 1800.0
"""The per-request timeout of roles on a CPU engine started here (a request of
CPU_MAX_NEW_TOKENS among two dozen in flight on one core takes up to ~10 minutes)."""


def _names(args: Sequence[str], *flags: str) -> bool:
    """Whether `args` give any of `flags` (as `--flag value` or `--flag=value`)."""
    return any(a.split("=", 1)[0] in flags for a in args)


def output_cap(cmd: Sequence[str]) -> int | None:
    """The server-wide output cap a server command sets (`max_new_tokens` of the last
    `--override-generation-config`), or None."""
    cap = None
    for i, a in enumerate(cmd):
        flag, _, inline = a.partition("=")
        if flag != "--override-generation-config":
            continue
        text = inline if inline else (cmd[i + 1] if i + 1 < len(cmd) else "")
        try:
            value = json.loads(text).get("max_new_tokens")
        except (ValueError, AttributeError):
            continue
        cap = value if isinstance(value, int) else None
    return cap


def chunked_prefill_off(cmd: Sequence[str]) -> bool:
    """Whether a server command turns chunked prefill off (the last flag that names it wins),
    which is what makes seeded requests safe on vllm-cpu 0.32."""
    off = False
    for a in cmd:
        flag = a.split("=", 1)[0]
        if flag == "--no-enable-chunked-prefill":
            off = True
        elif flag == "--enable-chunked-prefill":
            off = a.split("=", 1)[1].lower() in ("false", "0") if "=" in a else False
    return off


def allowed_cpus() -> list[int]:
    """The CPU ids this process may run on (its affinity; all of os.cpu_count() elsewhere)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return list(range(os.cpu_count() or 1))


SMALL_CPU_CORES = 2
"""A CPU engine with at most this many cores runs eagerly on all of them unless told otherwise
(`small_cpu_choices`)."""


def small_cpu(device: str, cores: int) -> bool:
    """A CPU engine on at most SMALL_CPU_CORES cores."""
    return device == "cpu" and 0 < cores <= SMALL_CPU_CORES


def small_cpu_choices(device: str, cores: int, eager: bool | None,
                      cpu_threads: int | None) -> tuple[bool, int | None]:
    """(eager, cpu_threads) of an engine agentsweep starts; None = not chosen by the user.
    On a CPU with at most SMALL_CPU_CORES cores the unchosen ones are eager and all `cores`:
    vLLM's own binding keeps one core for its scheduler (the model got one core of two), and
    compiling took 2.7 of a first start's 3.8 minutes there, for steps no faster than eager ones
    on both cores (docs/serve.md, "Starting on a small machine"). Anywhere else vLLM's own
    choices stay (compiled, its binding: cpu_threads None). A user's 0 threads = vLLM's
    binding."""
    small = small_cpu(device, cores)
    if eager is None:
        eager = small
    if cpu_threads is None:
        cpu_threads = cores if small else None
    return eager, cpu_threads or None


def cpu_bind_list(threads: int, allowed: Sequence[int] | None = None) -> str:
    """VLLM_CPU_OMP_THREADS_BIND value for `threads` cores: the first allowed CPU ids,
    e.g. "0-3" or "0,2,4"."""
    cpus = sorted(allowed if allowed is not None else allowed_cpus())
    if threads < 1:
        raise ValueError(f"cpu_threads must be >= 1, got {threads}")
    if threads > len(cpus):
        raise ValueError(f"cpu_threads={threads} but only {len(cpus)} CPUs are available")
    chosen = cpus[:threads]
    if threads > 1 and chosen == list(range(chosen[0], chosen[0] + threads)):
        return f"{chosen[0]}-{chosen[-1]}"
    return ",".join(str(c) for c in chosen)


def build_env(
    device: Device,
    *,
    base_env: Mapping[str, str] | None = None,
    gpus: str | None = None,
    cpu_kv_cache_gb: float = 4,
    cpu_threads: int | None = None,
    allowed_cpus: Sequence[int] | None = None,
    preload_iomp: bool = True,
    cache_dir: Path | None = None,
) -> dict[str, str]:
    """Environment of the server process: `base_env` (default os.environ) plus device knobs.
    CPU: VLLM_CPU_KVCACHE_SPACE (whole GiB, vLLM parses an int), thread binding.
    GPU: CUDA_VISIBLE_DEVICES from `gpus` when given. `preload_iomp` preloads the Intel
    OpenMP runtime shipped with the torch CPU wheel, as vLLM-CPU recommends. `cache_dir`: where
    the compile caches live (`compile_cache_env`), unless the environment names them."""
    env = dict(os.environ if base_env is None else base_env)
    env.setdefault("PYTHONUNBUFFERED", "1")
    env.setdefault("HF_HUB_OFFLINE", "1")  # never download at run time
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    if cache_dir is not None:
        for key, value in compile_cache_env(cache_dir).items():
            env.setdefault(key, value)
    if device == "gpu":
        if gpus is not None:
            env["CUDA_VISIBLE_DEVICES"] = gpus
        return env
    if cpu_kv_cache_gb <= 0:
        raise ValueError(f"cpu_kv_cache_gb must be > 0, got {cpu_kv_cache_gb}")
    env["VLLM_CPU_KVCACHE_SPACE"] = str(max(1, math.ceil(cpu_kv_cache_gb)))
    # vLLM ends its engine when one model step takes longer than this (300 s by default): a
    # whole 4,000-token prefill of three requests on one shared core took longer, and the
    # engine died under a test run on a busy machine. Slow is not dead on a CPU.
    env.setdefault("VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS", str(int(CPU_REQUEST_TIMEOUT_S)))
    # vllm-cpu 0.32 saves an AOT-compiled model it cannot load again ("'function' object has
    # no attribute 'finalize_loading'"), so every start compiled anew; without AOT it keeps
    # the inductor-compiled graphs in its compile cache and loads them at the next start
    env.setdefault("VLLM_USE_AOT_COMPILE", "0")
    if cpu_threads is not None:
        env["VLLM_CPU_OMP_THREADS_BIND"] = cpu_bind_list(cpu_threads, allowed_cpus)
        env["OMP_NUM_THREADS"] = str(cpu_threads)
    iomp = Path(sys.prefix) / "lib" / "libiomp5.so"
    preload = env.get("LD_PRELOAD", "")
    # vLLM-CPU recommends Intel OpenMP; the torch CPU wheel ships it in the environment.
    if preload_iomp and iomp.is_file() and "libiomp" not in preload and "libgomp" not in preload:
        env["LD_PRELOAD"] = f"{iomp}:{preload}" if preload else str(iomp)
    return env


def compile_cache_env(cache_dir: Path) -> dict[str, str]:
    """The compile caches of a server, kept together under `cache_dir` (the agentsweep cache
    directory) so that a later start loads what an earlier one compiled: vLLM's own cache of
    compiled graphs (VLLM_CACHE_ROOT) and the torch inductor and Triton caches its artifacts
    come from (TORCHINDUCTOR_CACHE_DIR defaults to /tmp, which does not always survive the
    vLLM cache that refers to it)."""
    root = Path(cache_dir)
    return {"VLLM_CACHE_ROOT": str(root / "vllm"),
            "TORCHINDUCTOR_CACHE_DIR": str(root / "torchinductor"),
            "TRITON_CACHE_DIR": str(root / "triton")}


def repair_compile_cache(env: Mapping[str, str]) -> list[Path]:
    """Remove the empty shared objects from the inductor cache a server will use: a start
    killed while compiling leaves its half-built `.so` (0 bytes) in the cache, and the next
    start fails on it ("ImportError: ...so: file too short") instead of compiling it again.
    Returns the files removed."""
    root = env.get("TORCHINDUCTOR_CACHE_DIR")
    removed: list[Path] = []
    if not root or not Path(root).is_dir():
        return removed
    for dirpath, _, files in os.walk(root):
        for name in files:
            if not name.endswith(".so"):
                continue
            path = Path(dirpath) / name
            try:
                if path.stat().st_size == 0:
                    path.unlink()
                    removed.append(path)
            except OSError:
                continue
    return removed


def device_summary(device: Device, env: Mapping[str, str]) -> str:
    """One line saying where the server runs, for logs and `agentsweep serve`."""
    if device == "gpu":
        return f"gpu (CUDA_VISIBLE_DEVICES={env.get('CUDA_VISIBLE_DEVICES', 'all')})"
    return (
        f"cpu (kv cache {env.get('VLLM_CPU_KVCACHE_SPACE')} GiB, "
        f"threads {env.get('VLLM_CPU_OMP_THREADS_BIND', 'auto')})"
    )
