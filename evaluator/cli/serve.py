"""`agentsweep serve`: run the embedded vLLM engine until stopped (`agentsweep chat` is in
cli_chat.py).

serve exit codes: 0 stopped by SIGTERM/SIGHUP, 130 stopped by Ctrl-C (SIGINT), 1 the engine
failed to start or died while serving (the log tail is printed), 2 bad arguments.
See docs/serve.md.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from backends.server import VLLMServer

READY_PREFIX = "agentsweep serve: ready at "
_POLL_S = 0.5
_WILDCARD_HOSTS = ("0.0.0.0", "::", "")

ServerFactory = Callable[[argparse.Namespace], "VLLMServer"]


# -- parsers ------------------------------------------------------------------------------------
def register(subparsers: argparse._SubParsersAction) -> None:
    _register_serve(subparsers)


def _add_engine_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--device", choices=("auto", "cpu", "gpu"), default="auto",
                   help="where vLLM runs: auto = a CUDA GPU when usable, else CPU (auto)")
    p.add_argument("--startup-timeout", type=float, default=900.0, metavar="S",
                   help="seconds the engine may take to become healthy (900)")
    p.add_argument("--log", type=Path, default=None, metavar="FILE",
                   help="server log file (default: $AGENTSWEEP_HOME/logs/vllm-*.log)")


def _register_serve(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "serve",
        help="run the embedded vLLM engine (OpenAI-compatible server) until Ctrl-C",
        description="Start a vLLM OpenAI-compatible server (by default the bundled "
        "SmolLM2-135M-Instruct with tool calling and prefix caching), print its URL and keep it "
        "running until Ctrl-C or SIGTERM; then the whole server process tree is stopped. "
        "Arguments after `--` are passed to vLLM unchanged. See docs/serve.md.",
    )
    p.add_argument("--model", metavar="DIR", default=None,
                   help="local model directory (or name vLLM can load offline); default: the "
                   "bundled SmolLM2-135M-Instruct, converted on first use")
    p.add_argument("--served-model-name", metavar="NAME", default=None,
                   help="model name clients send (default: SmolLM2-135M-Instruct for the "
                   "bundled model, else the --model value)")
    p.add_argument("--host", default="127.0.0.1",
                   help="interface to listen on (127.0.0.1; 0.0.0.0 = all interfaces)")
    p.add_argument("--port", type=int, default=8000, help="TCP port (8000; 0 = any free port)")
    _add_engine_options(p)
    p.add_argument("--gpus", metavar="IDS", default=None,
                   help="GPU ids for CUDA_VISIBLE_DEVICES, e.g. 0,1 (GPU only)")
    p.add_argument("--tensor-parallel-size", type=int, default=1, metavar="N",
                   help="GPUs one model is sharded over (GPU only; 1)")
    p.add_argument("--cpu-kv-cache-gb", type=float, default=4.0, metavar="GB",
                   help="KV-cache size on CPU, whole GiB (4)")
    p.add_argument("--cpu-threads", type=int, default=None, metavar="N",
                   help="CPU cores vLLM binds its OpenMP threads to; 0 = vLLM's choice, which "
                   "keeps one core for its scheduler (default: every core on a CPU with at most "
                   "2, else vLLM's choice)")
    p.add_argument("--eager", action=argparse.BooleanOptionalAction, default=None,
                   help="run the model eagerly (vLLM --enforce-eager): no compilation at start, "
                   "slower steps (default: eager on a CPU with at most 2 cores)")
    p.add_argument("--max-model-len", type=int, default=8192, metavar="TOKENS",
                   help="context length (8192)")
    p.add_argument("--tool-call-parser", default="hermes", metavar="NAME",
                   help="vLLM tool-call parser ('hermes'); 'none' disables tool calling")
    p.add_argument("--chat-template", type=Path, default=None, metavar="FILE",
                   help="chat template (default: the bundled tool template for the bundled "
                   "model, the model's own otherwise)")
    p.add_argument("vllm_args", nargs="*", metavar="-- VLLM_ARG",
                   help="extra vLLM server arguments, after `--` (e.g. -- --max-num-seqs 64)")
    p.set_defaults(func=serve)


# -- serve --------------------------------------------------------------------------------------
class _Shutdown(Exception):
    """Raised in the main thread by our SIGTERM/SIGHUP handler."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise_shutdown(signum: int, frame: object) -> None:
    raise _Shutdown(signum)


@contextmanager
def _shutdown_signals() -> Iterator[None]:
    """SIGTERM / SIGHUP raise _Shutdown and SIGINT raises KeyboardInterrupt (even when the
    parent left SIGINT ignored, as a shell does for background jobs) so the server is stopped
    by our own code; the previous handlers come back afterwards."""
    sigs = (signal.SIGTERM, signal.SIGHUP)
    old = {s: signal.signal(s, _raise_shutdown) for s in sigs}
    old[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


@contextmanager
def _signals_ignored() -> Iterator[None]:
    """While the server tree is being stopped, further signals must not cut that short."""
    sigs = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    old = {s: signal.signal(s, signal.SIG_IGN) for s in sigs}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


def _default_log(port: int) -> Path:
    from backends.model import cache_root

    stamp = time.strftime("%Y%m%d-%H%M%S")
    return cache_root() / "logs" / f"vllm-serve-{stamp}-{port or 'auto'}.log"


def server_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """VLLMServer keyword arguments from parsed `serve` options."""
    from backends.server_launch import allowed_cpus, resolve_device, small_cpu_choices

    parser = None if args.tool_call_parser.lower() == "none" else args.tool_call_parser
    device = resolve_device(args.device)
    eager, threads = small_cpu_choices(device, len(allowed_cpus()), args.eager, args.cpu_threads)
    return {
        "model": args.model,
        "served_model_name": args.served_model_name,
        "host": args.host,
        "port": args.port or None,
        "device": device,
        "gpus": args.gpus,
        "tensor_parallel_size": args.tensor_parallel_size,
        "cpu_kv_cache_gb": args.cpu_kv_cache_gb,
        "cpu_threads": threads,
        "max_model_len": args.max_model_len,
        "tool_call_parser": parser,
        "chat_template": args.chat_template,
        "log_path": args.log or _default_log(args.port),
        "startup_timeout_s": args.startup_timeout,
        "extra_args": list(args.vllm_args),
        "eager": eager,
    }


def _default_factory(args: argparse.Namespace) -> VLLMServer:
    from backends.server import VLLMServer

    return VLLMServer(**server_kwargs(args))


def _err(cmd: str, message: str) -> None:
    print(f"agentsweep {cmd}: {message}", file=sys.stderr, flush=True)


def _ready_lines(server: VLLMServer) -> list[str]:
    url = server.base_url
    ready = (f"{READY_PREFIX}{url} (model {server.model}, log {server.log_path}, "
             f"pid {server.pid})")
    lines = [ready]
    if server.host in _WILDCARD_HOSTS:
        lines.append(f"  listening on all interfaces: from other machines use "
                     f"http://<this host>:{server.port}/v1")
    lines.append(f'  try: agentsweep chat --url {url} "hello"')
    lines.append(f"  run a benchmark on it: agentsweep run --engine-url {url}")
    lines.append("  Ctrl-C (or SIGTERM) stops the server.")
    return lines


def _wait_while_alive(server: VLLMServer) -> int:
    """Block until the server process exits on its own; returns its exit code."""
    while True:
        code = server.returncode()
        if code is not None:
            return code
        time.sleep(_POLL_S)


def serve(args: argparse.Namespace, server_factory: ServerFactory | None = None) -> int:
    """`agentsweep serve`. `server_factory(args)` builds the (not yet started) VLLMServer;
    tests inject one with a fake launcher."""
    from backends.errors import ServerStartError
    from backends.model import ModelUnavailable
    from backends.server import read_log_tail
    from backends.server_launch import device_summary

    if not 0 <= args.port <= 65535:
        _err("serve", f"--port must be in 0..65535, got {args.port}")
        return 2
    factory = server_factory or _default_factory
    server: VLLMServer | None = None
    with _shutdown_signals():
        try:
            try:
                server = factory(args)
                where = device_summary(server.device, server.environment())  # type: ignore[arg-type]
            except (ValueError, ModelUnavailable) as exc:
                _err("serve", str(exc))
                return 2
            print(f"agentsweep serve: starting vLLM for {server.model} on {where}; "
                  f"log {server.log_path}", flush=True)
            try:
                server.start()
            except ServerStartError as exc:
                _err("serve", f"the engine did not start: {exc}")
                return 1
            print("\n".join(_ready_lines(server)), flush=True)
            code = _wait_while_alive(server)
            tail = read_log_tail(server.log_path)
            with _signals_ignored():
                server.stop()  # the leader is gone: reap what it left in its group
            _err("serve", f"the vLLM server exited with code {code} while serving "
                 f"(log: {server.log_path})\n--- last lines of the server log ---\n{tail}")
            return 1
        except KeyboardInterrupt:
            return _stop(server, "Ctrl-C", 130)
        except _Shutdown as exc:
            return _stop(server, str(exc), 0)


def _stop(server: VLLMServer | None, why: str, code: int) -> int:
    with _signals_ignored():
        if server is not None and server.pid is not None:
            print(f"agentsweep serve: {why}: stopping the server (pid {server.pid}) ...",
                  file=sys.stderr, flush=True)
            server.stop()
            print("agentsweep serve: stopped", file=sys.stderr, flush=True)
        elif server is not None:
            server.stop()
    return code
