"""TRIP-Bench's environment factory: every episode's sandbox answers from a generated world
database (read-only SQLite), opened once per process and shared by all its episodes.

Which world a task uses:
- `TripEnvironmentFactory(world=PATH)`: every task uses PATH (for now the way to point a run at
  a world; the task loader that will carry it does not exist yet);
- otherwise the task names it: `task.extra["world"]` (or a `world` attribute of its payload), a
  path relative to the directory of the task's file (`Task.source` is "FILE:LINE").
Nothing is simulated; `check` opens every world before any model engine starts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench_data.types import Task
from evaluator.benchmarks.base import BenchmarkError, EnvironmentRequest

from .tools import TOOL_NAMES, TripSandbox
from .world.db import World, WorldError, open_world
from .world.generate import GENERATOR, VERSION


def _task_file_dir(task: Task) -> Path | None:
    if not task.source:
        return None
    head, sep, tail = task.source.rpartition(":")
    return Path(head if sep and tail.isdigit() else task.source).parent


class TripEpisodes:
    """The run's environment in one process: the worlds it has opened, by resolved path."""

    def __init__(self, factory: TripEnvironmentFactory) -> None:
        self.factory = factory
        self.worlds: dict[Path, World] = {}

    def world(self, task: Task) -> World:
        path = self.factory.world_path(task)
        if path not in self.worlds:
            self.worlds[path] = self.factory.open_checked(path, task)
        return self.worlds[path]

    def episode(self, task: Task) -> TripSandbox:
        return TripSandbox(self.world(task))

    def describe(self) -> dict[str, Any]:
        return {"kind": "tripbench", "state": "read-only generated world (SQLite)",
                "simulated": False, "tools": list(TOOL_NAMES),
                "worlds": {str(p): dict(w.meta) for p, w in sorted(self.worlds.items())}}

    def close(self) -> None:
        for world in self.worlds.values():
            world.close()
        self.worlds.clear()


class TripEnvironmentFactory:
    def __init__(self, world: str | Path | None = None) -> None:
        self.world = Path(world).resolve() if world is not None else None

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
        episodes = TripEpisodes(self)
        for task in request.taskset.tasks:
            episodes.world(task)
        return episodes


ENVIRONMENT = TripEnvironmentFactory()
