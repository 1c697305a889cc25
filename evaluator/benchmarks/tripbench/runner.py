"""Where TRIP-Bench's tool calls run, off the event loop (`TripOptions.tool_runner`).

- "processes": `workers` worker processes (`tool_worker.py`), each reached through a socket
  pair that the event loop reads itself (an asyncio protocol: no helper threads, no executor
  queues). A call is one length-prefixed msgpack frame each way, so the loop pays tens of
  microseconds per call while the tool runs on another core. A call goes to the worker with
  the fewest calls in flight. A worker that dies fails its calls in flight as infrastructure
  errors (`ToolWorkerLost`: the episode runs again, nothing is recorded against the agent)
  and a new one is started at the next call.
- "threads": `workers` threads of the run's process, each with its own read-only connection
  (the search columns shared through the world's memo). SQLite and numpy release the GIL but
  argument checks and rendering hold it, so on a busy process this is the slower choice.

"inline" (no runner) calls the tool on the event loop.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import msgspec

from backends.errors import InfrastructureError

from .tool_worker import HEADER, frame
from .tools import ToolResult, execute
from .world.db import World

DEFAULT_WORKERS = 4
_ROOT = str(Path(__file__).resolve().parents[3])     # the directory holding `evaluator`


class ToolWorkerLost(InfrastructureError):
    """A tool worker process ended with calls in flight."""


class _Link(asyncio.Protocol):
    """The loop's end of one worker's socket: writes requests, resolves answers."""

    decode = msgspec.msgpack.Decoder().decode

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.transport: asyncio.Transport | None = None
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.buf = bytearray()
        self.lost = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        buf = self.buf
        buf += data
        pos, end_of_data = 0, len(buf)
        while end_of_data - pos >= HEADER:
            end = pos + HEADER + int.from_bytes(buf[pos:pos + HEADER], "little")
            if end > end_of_data:
                break
            answer = self.decode(buf[pos + HEADER:end])
            pos = end
            future = self.pending.pop(answer[0], None)
            if future is not None and not future.done():
                future.set_result(answer)
        if pos:
            del buf[:pos]

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        code = self.proc.poll()
        why = f"exit code {code}" if code is not None else "its socket closed"
        for future in self.pending.values():
            if not future.done():
                future.set_exception(ToolWorkerLost(
                    f"TRIP-Bench tool worker pid {self.proc.pid} ended ({why}) with a call in "
                    "flight"))
        self.pending.clear()


class _Processes:
    """The "processes" runner: worker processes over socket pairs, driven by the loop."""

    encode = msgspec.msgpack.Encoder().encode

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.links: list[_Link] = []
        self._starting: asyncio.Future[None] | None = None
        self._next_id = 0

    async def _spawn(self) -> _Link:
        parent, child = socket.socketpair()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_ROOT, env.get("PYTHONPATH")) if p)
        try:
            proc = subprocess.Popen(  # noqa: ASYNC220 - a fork+exec, once per worker
                [sys.executable, "-m", "evaluator.benchmarks.tripbench.tool_worker",
                 str(child.fileno())], pass_fds=(child.fileno(),), env=env,
                stdin=subprocess.DEVNULL)
        finally:
            child.close()
        loop = asyncio.get_running_loop()
        _, link = await loop.create_unix_connection(lambda: _Link(proc), sock=parent)
        return link

    async def _start(self) -> None:
        if self._starting is None:
            self._starting = asyncio.ensure_future(self._start_all())
        starting = self._starting
        try:
            await asyncio.shield(starting)
        except Exception:
            if self._starting is starting:   # a failed start (e.g. out of file descriptors)
                self._starting = None        # is tried again at the next call
            raise

    async def _start_all(self) -> None:
        while len(self.links) < self.workers:   # the ones started stay if a later one fails
            self.links.append(await self._spawn())

    async def _pick(self) -> _Link:
        if len(self.links) < self.workers:
            await self._start()
        best = min(self.links, key=lambda link: len(link.pending))
        if best.lost:                       # died: start another in its place
            index = self.links.index(best)
            if best.proc.poll() is None:
                best.proc.kill()
            best.proc.wait()
            best = self.links[index] = await self._spawn()
        return best

    async def call(self, world: World, name: str, arguments: str, output: str
                   ) -> tuple[ToolResult, float]:
        link = await self._pick()
        self._next_id += 1
        call_id = self._next_id
        future = asyncio.get_running_loop().create_future()
        link.pending[call_id] = future
        assert link.transport is not None
        link.transport.write(frame(self.encode(
            (call_id, str(world.path), name, arguments, output))))
        try:
            _, content, category, seconds = await future
        finally:
            link.pending.pop(call_id, None)
        if content is None:
            raise RuntimeError(f"TRIP-Bench tool {name} failed in its worker: {category}")
        return ToolResult(content, category), seconds

    def close(self) -> None:
        """Stop the workers (they hold nothing but read-only connections)."""
        for link in self.links:
            if link.proc.poll() is None:
                link.proc.terminate()
        for link in self.links:
            try:
                link.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                link.proc.kill()
                link.proc.wait()
            if link.transport is not None:
                try:
                    link.transport.close()
                except RuntimeError:        # the loop is already closed
                    pass
        self.links = []
        self._starting = None


class _Threads:
    """The "threads" runner: a thread pool, a connection per thread, the memo shared."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool: ThreadPoolExecutor | None = None
        self._local = threading.local()
        self._opened: list[World] = []
        self._lock = threading.Lock()

    def _world(self, world: World) -> World:
        worlds = getattr(self._local, "worlds", None)
        if worlds is None:
            worlds = self._local.worlds = {}
        if world.path not in worlds:
            worlds[world.path] = world.clone()      # its own connection, the shared memo
            with self._lock:
                self._opened.append(worlds[world.path])
        return worlds[world.path]

    def _run(self, world: World, name: str, arguments: str, output: str
             ) -> tuple[ToolResult, float]:
        t0 = time.perf_counter()
        result = execute(self._world(world), name, arguments, output)
        return result, time.perf_counter() - t0

    async def call(self, world: World, name: str, arguments: str, output: str
                   ) -> tuple[ToolResult, float]:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="tripbench-tool")
        return await asyncio.get_running_loop().run_in_executor(
            self._pool, self._run, world, name, arguments, output)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        with self._lock:
            for world in self._opened:
                world.close()
            self._opened.clear()


class ToolRunner:
    """Tool calls off the event loop, on `workers` processes or threads (`kind`)."""

    KINDS = ("processes", "threads")

    def __init__(self, workers: int = DEFAULT_WORKERS, kind: str = "processes") -> None:
        if kind not in self.KINDS:
            raise ValueError(f"tool runner kind must be one of {', '.join(self.KINDS)}")
        self.workers = max(1, workers)
        self.kind = kind
        self.impl: _Processes | _Threads = (_Processes(self.workers) if kind == "processes"
                                            else _Threads(self.workers))
        self.call = self.impl.call          # (world, name, arguments, output) -> (result, s)

    def close(self) -> None:
        self.impl.close()
