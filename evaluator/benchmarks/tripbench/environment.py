"""TRIP-Bench's environment factory: every episode's sandbox answers from a generated world
database (read-only SQLite) shared by all episodes of the process.

Which world a task uses:
- `TripEnvironmentFactory(world=PATH)`: every task uses PATH;
- otherwise the task names it: `task.extra["world"]` (or a `world` attribute of its payload), a
  path relative to the directory of the task's file (`Task.source` is "FILE:LINE").
Nothing is simulated; `check` opens every world before any model engine starts and refuses a
world of another generator or version.

Tool calls run off the event loop: a `ToolRunner` (runner.py) answers them on worker
processes (other cores) or threads (`TripOptions.tool_runner`, `tool_workers`), so a slow
call never stalls the other episodes of the process. `TripOptions.tool_output` ("text", the
paper's lines; or "json") picks how answers are rendered.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import msgspec

from bench_data.types import Task
from cache_store.types import ToolOutcome
from evaluator.benchmarks.base import BenchmarkError, EnvironmentRequest

from .runner import ToolRunner
from .settings import TripOptions, options_of
from .tools import TOOL_NAMES, execute, tool_schemas
from .world.db import World, WorldError, open_world
from .world.generate import GENERATOR, VERSION


def _task_file_dir(task: Task) -> Path | None:
    if not task.source:
        return None
    head, sep, tail = task.source.rpartition(":")
    return Path(head if sep and tail.isdigit() else task.source).parent


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
