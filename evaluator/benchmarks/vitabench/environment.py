"""VitaBench's environment factory: per episode a `VitaEnvironment` (copy-on-write) over the
task's shared base database, built once per (task, domains) by a `DatabaseCache`.

The domains come from the subset (`domains_for`: a domain's own tools, or all three merged for
the cross-domain set). Nothing is simulated: every answer is computed from the database.
"""

from __future__ import annotations

from typing import Any

from bench_data.types import Task
from evaluator.benchmarks.base import BenchmarkError, EnvironmentRequest

from .env import DatabaseCache, TaskDataError, VitaEnvironment, domains_for


class VitaEpisodes:
    """The run's environment: base databases shared by every episode and trial of a task;
    each episode writes only to its own view."""

    def __init__(self) -> None:
        self.cache = DatabaseCache()

    def episode(self, task: Task) -> VitaEnvironment:
        environment = task.extra.get("environment")
        if not isinstance(environment, dict):
            raise BenchmarkError(f"vitabench task {task.key}: no environment database")
        try:
            base = self.cache.get(task.task_id, environment, domains_for(task.subset))
        except TaskDataError as exc:
            raise BenchmarkError(f"vitabench task {task.key}: {exc}") from None
        return VitaEnvironment(base, id_seed=task.task_id)

    def describe(self) -> dict[str, Any]:
        return {"kind": "vitabench", "state": "per-episode copy-on-write over the task database",
                "simulated": False}

    def close(self) -> None:
        return None


class VitaEnvironmentFactory:
    def check(self, request: EnvironmentRequest) -> None:
        for task in request.taskset.tasks:
            if not isinstance(task.extra.get("environment"), dict):
                raise BenchmarkError(f"vitabench task {task.key}: no environment database")

    async def open(self, request: EnvironmentRequest, simulator: Any,
                   simulator_model: str) -> VitaEpisodes:
        return VitaEpisodes()


ENVIRONMENT = VitaEnvironmentFactory()
