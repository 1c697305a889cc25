"""VitaBench's environment factory: per episode a `VitaEnvironment` (copy-on-write) over the
task's shared base database, built once per (task, domains) by a `DatabaseCache`.

The domains come from the run's `--domain` (config `data.domains`: one domain's tools, or
several domains merged into one tool set and database, as the reference's comma domain string
does) or, without it, from each task's subset (`domains_for`: a domain's own tools, or all
three for the cross-domain set). Nothing is simulated: every answer is computed from the
database. `select_domains` is the benchmark's `--domain` hook (which subsets run).
"""

from __future__ import annotations

from typing import Any

from bench_data.types import Task
from evaluator.benchmarks.base import BenchmarkError, DomainChoice, EnvironmentRequest

from .env import DatabaseCache, TaskDataError, VitaEnvironment, domains_for, parse_domains
from .env.database import DOMAINS
from .env.spec import tools_for

CROSS_SUBSET = "cross_domain"


def parse_run_domains(names: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """`--domain` values -> canonical domain names (aliases such as "in-store" accepted);
    ValueError naming the bad one."""
    out: list[str] = []
    for name in names:
        try:
            out += parse_domains(name)
        except ValueError:
            raise ValueError(f"unknown domain {name!r}; known: {', '.join(DOMAINS)}") from None
    return tuple(dict.fromkeys(out))


def select_domains(given: tuple[str, ...], available: tuple[str, ...]) -> DomainChoice:
    """One domain: its own subset. Several: the cross-domain task set when the data has one
    (the reference's comma domain string loads it), else the named domains' own tasks; either
    way every episode gets the merged tools and database of the domains given."""
    domains = parse_run_domains(given)
    if len(domains) > 1 and CROSS_SUBSET in available:
        subsets: tuple[str, ...] = (CROSS_SUBSET,)
    else:
        subsets = tuple(d for d in domains if d in available)
    if not subsets:
        raise ValueError(f"the data has no tasks of domain(s) {', '.join(domains)}; "
                         f"its subsets: {', '.join(available) or 'none'}")
    return DomainChoice(subsets=subsets, describe={
        "domains": list(domains), "merged": len(domains) > 1,
        "tools": [s.name for s in tools_for(domains)]})


class VitaEpisodes:
    """The run's environment: base databases shared by every episode and trial of a task;
    each episode writes only to its own view. `domains`: the run's `--domain` (None = each
    task's subset decides)."""

    def __init__(self, domains: tuple[str, ...] | None = None) -> None:
        self.cache = DatabaseCache()
        self.domains = domains

    def episode(self, task: Task) -> VitaEnvironment:
        environment = task.extra.get("environment")
        if not isinstance(environment, dict):
            raise BenchmarkError(f"vitabench task {task.key}: no environment database")
        domains = self.domains or domains_for(task.subset)
        try:
            base = self.cache.get(task.task_id, environment, domains)
        except TaskDataError as exc:
            raise BenchmarkError(f"vitabench task {task.key}: {exc}") from None
        return VitaEnvironment(base, id_seed=task.task_id)

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "vitabench", "simulated": False,
                               "state": "per-episode copy-on-write over the task database"}
        out["domains"] = list(self.domains) if self.domains else "each task's subset"
        return out

    def close(self) -> None:
        return None


def _run_domains(request: EnvironmentRequest) -> tuple[str, ...] | None:
    names = request.config.data.domains
    if not names:
        return None
    try:
        return parse_run_domains(list(names))
    except ValueError as exc:
        raise BenchmarkError(f"--domain: {exc}") from None


class VitaEnvironmentFactory:
    def check(self, request: EnvironmentRequest) -> None:
        _run_domains(request)
        for task in request.taskset.tasks:
            if not isinstance(task.extra.get("environment"), dict):
                raise BenchmarkError(f"vitabench task {task.key}: no environment database")

    async def open(self, request: EnvironmentRequest, simulator: Any,
                   simulator_model: str) -> VitaEpisodes:
        return VitaEpisodes(_run_domains(request))


ENVIRONMENT = VitaEnvironmentFactory()
