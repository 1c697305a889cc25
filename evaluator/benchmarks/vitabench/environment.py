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

import msgspec

from bench_data.types import Task
from evaluator.benchmarks.base import BenchmarkError, DomainChoice, EnvironmentRequest
from evaluator.prompt_sets import PromptSetError

from .env import DatabaseCache, TaskDataError, VitaEnvironment, domains_for, parse_domains
from .env.database import DOMAINS
from .env.spec import tool_schemas, tools_for

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
    task's subset decides); `overrides`: the prompt set's tool descriptions (None = the
    environment's own); `attempts`: unit key -> attempts its trial already used, for the
    trials a resumed run plays again (judge.rerun_attempts)."""

    def __init__(self, domains: tuple[str, ...] | None = None,
                 overrides: dict[str, Any] | None = None,
                 attempts: dict[str, int] | None = None) -> None:
        self.cache = DatabaseCache()
        self.domains = domains
        self.overrides = overrides
        self.attempts = attempts or {}
        self._schemas: dict[tuple[str, ...], list[dict[str, Any]]] = {}  # with overrides

    def episode(self, task: Task) -> VitaEnvironment:
        environment = task.extra.get("environment")
        if not isinstance(environment, dict):
            raise BenchmarkError(f"vitabench task {task.key}: no environment database")
        domains = self.domains or domains_for(task.subset)
        try:
            base = self.cache.get(task.task_id, environment, domains)
        except TaskDataError as exc:
            raise BenchmarkError(f"vitabench task {task.key}: {exc}") from None
        schemas = None
        if self.overrides is not None:  # built once per domain set, shared read-only
            schemas = self._schemas.get(base.domains)
            if schemas is None:
                schemas = self._schemas[base.domains] = tool_schemas(base.domains,
                                                                     self.overrides)
        return VitaEnvironment(base, id_seed=task.task_id, overrides=self.overrides,
                               attempts=self.attempts, schemas=schemas)

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "vitabench", "simulated": False,
                               "state": "per-episode copy-on-write over the task database"}
        out["domains"] = list(self.domains) if self.domains else "each task's subset"
        out["tool_descriptions"] = "prompt set" if self.overrides else "built-in"
        if self.attempts:
            out["trials_rerun"] = len(self.attempts)
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
        _check_change_rule(request)
        for task in request.taskset.tasks:
            if not isinstance(task.extra.get("environment"), dict):
                raise BenchmarkError(f"vitabench task {task.key}: no environment database")

    async def open(self, request: EnvironmentRequest, simulator: Any,
                   simulator_model: str) -> VitaEpisodes:
        from .judge import rerun_attempts
        from .options import VitaOptions
        from .prompting import tool_descriptions

        try:
            overrides = tool_descriptions(request.prompts)
        except PromptSetError as exc:
            raise BenchmarkError(str(exc)) from None
        options = msgspec.convert(dict(request.config.options or {}), VitaOptions)
        return VitaEpisodes(_run_domains(request), overrides,
                            rerun_attempts(request.run_dir, options))


ENVIRONMENT = VitaEnvironmentFactory()


def _check_change_rule(request: EnvironmentRequest) -> None:
    """`options.user_change_keeps_met` reaches the judge through the `$change_rule` of the
    built-in judge prompts; a prompt set whose judge prompt states its own rule (the
    reference's: a change of need keeps a met rubric) cannot be told the project's."""
    from .options import VitaOptions
    from .prompting import prompt_set

    options = msgspec.convert(dict(request.config.options or {}), VitaOptions)
    if options.user_change_keeps_met:
        return
    role = "judge_window_system" if options.reference else "judge_window"
    template = prompt_set(request.prompts).templates[role]
    if "change_rule" not in template.get_identifiers():
        raise BenchmarkError(
            f"options.user_change_keeps_met = false: the prompt set's {role}.txt states its "
            "own rule (it has no $change_rule); use the built-in prompts or set it to true")
