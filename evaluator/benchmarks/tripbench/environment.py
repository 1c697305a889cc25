"""TRIP-Bench's environment factory: every episode's sandbox answers from a generated world
database (read-only SQLite) shared by all episodes of the process.

Which world a task uses:
- `TripEnvironmentFactory(world=PATH)`: every task uses PATH;
- otherwise the task names it: `task.extra["world"]` (or a `world` attribute of its payload), a
  path relative to the directory of the task's file (`Task.source` is "FILE:LINE").
Nothing is simulated; `check` opens every world before any model engine starts and refuses a
world of another generator or version.

Tool calls run off the event loop: a `ToolRunner` answers them on worker threads (each with
its own read-only connection to the world; SQLite and numpy release the GIL) or worker
processes (`TripOptions.tool_runner`, `tool_workers`), so a slow call never stalls the other
episodes of the process. `TripOptions.tool_output` ("text", the paper's lines; or "json")
picks how answers are rendered.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading
import time
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import msgspec

from bench_data.types import Task
from cache_store.types import ToolOutcome
from evaluator.benchmarks.base import BenchmarkError, EnvironmentRequest

from .settings import TripOptions, options_of
from .tools import TOOL_NAMES, ToolResult, execute, tool_schemas
from .world.db import World, WorldError, open_world
from .world.generate import GENERATOR, VERSION

DEFAULT_THREADS = 4


def _task_file_dir(task: Task) -> Path | None:
    if not task.source:
        return None
    head, sep, tail = task.source.rpartition(":")
    return Path(head if sep and tail.isdigit() else task.source).parent


_WORKER_WORLDS: dict[str, World] = {}
"""In a runner's worker process: the worlds it has opened (a process's own connections)."""


def _in_worker(path: str, name: str, arguments: str, output: str
               ) -> tuple[str, str | None, float]:
    """One call in a worker process: (content, error category, seconds)."""
    world = _WORKER_WORLDS.get(path)
    if world is None:
        world = _WORKER_WORLDS[path] = open_world(path)
    t0 = time.perf_counter()
    result = execute(world, name, arguments, output)
    return result.content, result.category, time.perf_counter() - t0


class ToolRunner:
    """Tool calls off the event loop: on `workers` threads (`kind` "threads": each with its
    own connection, the columns shared through the world's memo; SQLite and numpy release
    the GIL) or processes ("processes": each with its own connections and columns, so the
    calls run on other cores; the loop pays only the hand-over)."""

    KINDS = ("threads", "processes")

    def __init__(self, workers: int = DEFAULT_THREADS, kind: str = "threads") -> None:
        if kind not in self.KINDS:
            raise ValueError(f"tool runner kind must be one of {', '.join(self.KINDS)}")
        self.workers = max(1, workers)
        self.kind = kind
        self._pool: Executor | None = None
        self._local = threading.local()
        self._opened: list[World] = []
        self._lock = threading.Lock()

    @property
    def threads(self) -> int:
        return self.workers if self.kind == "threads" else 0

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
        loop = asyncio.get_running_loop()
        if self._pool is None:
            if self.kind == "threads":
                self._pool = ThreadPoolExecutor(self.workers,
                                                thread_name_prefix="tripbench-tool")
            else:
                self._pool = ProcessPoolExecutor(self.workers,
                                                 mp_context=multiprocessing.get_context("spawn"))
        if self.kind == "threads":
            return await loop.run_in_executor(self._pool, self._run, world, name, arguments,
                                              output)
        content, category, seconds = await loop.run_in_executor(
            self._pool, _in_worker, str(world.path), name, arguments, output)
        return ToolResult(content, category), seconds

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        with self._lock:
            for world in self._opened:
                world.close()
            self._opened.clear()


class TripSandbox:
    """One episode's tools (`evaluator.protocols.base.ToolSandbox`) over a shared read-only
    world: `runner` answers the calls off the event loop (None: inline, for tests and
    scripts); `world` is the episode's view of the world for the simulator and the judge."""

    def __init__(self, world: World, output: str = "text",
                 runner: ToolRunner | None = None) -> None:
        self.world = world
        self.output = output
        self.runner = runner
        self._tools = tool_schemas()

    @property
    def tools(self) -> list[dict[str, Any]]:
        return self._tools

    async def call(self, name: str, arguments: str, *, task_time: str = "") -> ToolOutcome:
        """`task_time` is ignored: the world's timetables fix the dates."""
        if self.runner is not None:
            result, latency = await self.runner.call(self.world, name, arguments, self.output)
        else:
            t0 = time.perf_counter()
            result = execute(self.world, name, arguments, self.output)
            latency = time.perf_counter() - t0
        return ToolOutcome(content=result.content,
                           source="error" if result.is_error else "live",
                           error_category=result.category, latency_s=latency)


class TripEpisodes:
    """The run's environment in one process: the worlds it has opened, by resolved path, and
    the runner of their tool calls."""

    def __init__(self, factory: TripEnvironmentFactory, options: TripOptions | None = None,
                 threads: int | None = None) -> None:
        self.factory = factory
        self.options = options or TripOptions()
        self.worlds: dict[Path, World] = {}
        kind = self.options.tool_runner
        workers = threads or factory.threads or self.options.tool_workers
        self.runner = ToolRunner(workers, kind) if kind != "inline" else None

    def world(self, task: Task) -> World:
        path = self.factory.world_path(task)
        if path not in self.worlds:
            self.worlds[path] = self.factory.open_checked(path, task)
        return self.worlds[path]

    def episode(self, task: Task) -> TripSandbox:
        return TripSandbox(self.world(task), self.options.tool_output, self.runner)

    def describe(self) -> dict[str, Any]:
        return {"kind": "tripbench", "state": "read-only generated world (SQLite)",
                "simulated": False, "tools": list(TOOL_NAMES),
                "tool_output": self.options.tool_output,
                "tool_runner": self.options.tool_runner,
                "tool_workers": self.runner.workers if self.runner else 0,
                "worlds": {str(p): dict(w.meta) for p, w in sorted(self.worlds.items())}}

    def close(self) -> None:
        if self.runner is not None:
            self.runner.close()
        for world in self.worlds.values():
            world.close()
        self.worlds.clear()


class TripEnvironmentFactory:
    def __init__(self, world: str | os.PathLike[str] | None = None,
                 threads: int | None = None) -> None:
        """`threads`: the tool workers of its runs (None: `TripOptions.tool_workers`)."""
        self.world = Path(world).resolve() if world is not None else None
        self.threads = threads

    def world_path(self, task: Task) -> Path:
        if self.world is not None:
            return self.world
        name = task.extra.get("world") or getattr(task.payload, "world", None)
        if not isinstance(name, str) or not name:
            raise BenchmarkError(f"tripbench task {task.key}: no world database (give the task "
                                 "a `world` path or the environment one)")
        path = Path(name)
        if not path.is_absolute():
            base = _task_file_dir(task)
            if base is None:
                raise BenchmarkError(f"tripbench task {task.key}: relative world path {name!r} "
                                     "but the task has no source file")
            path = base / path
        return path.resolve()

    def open_checked(self, path: Path, task: Task | None = None) -> World:
        where = f"tripbench task {task.key}" if task is not None else "tripbench"
        try:
            world = open_world(path)
        except WorldError as exc:
            raise BenchmarkError(f"{where}: {exc}") from None
        if world.meta.get("generator") != GENERATOR:
            world.close()
            raise BenchmarkError(f"{where}: {path} was not written by {GENERATOR}")
        if world.meta.get("version") != VERSION:
            found = world.meta.get("version")
            world.close()
            raise BenchmarkError(f"{where}: {path} is a version {found} world, this code reads "
                                 f"version {VERSION}: generate the task set again (agentsweep "
                                 "data tripbench generate)")
        return world

    def check(self, request: EnvironmentRequest) -> None:
        _options(request)                                   # a bad option fails here
        seen: set[Path] = set()
        for task in request.taskset.tasks:
            path = self.world_path(task)
            if path not in seen:
                seen.add(path)
                self.open_checked(path, task).close()

    async def open(self, request: EnvironmentRequest, simulator: Any,
                   simulator_model: str) -> TripEpisodes:
        """Opens every task's world now (a connection and its meta: cheap), so `describe`
        names them all for the manifest."""
        episodes = TripEpisodes(self, _options(request))
        for task in request.taskset.tasks:
            episodes.world(task)
        return episodes


def _options(request: EnvironmentRequest) -> TripOptions:
    try:
        return options_of(getattr(request.config, "options", None))
    except (msgspec.ValidationError, TypeError, ValueError) as exc:
        raise BenchmarkError(f"options of TRIP-Bench: {exc}") from None


ENVIRONMENT = TripEnvironmentFactory()
