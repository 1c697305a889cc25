"""What a run is made of besides its config: the protocol of each subset (the benchmark's, or
`protocol.entry`), the prompt set of the benchmark's roles, and the environment of a benchmark
without tools. Used by `evaluator.run.sweep.run_sweep`."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

from bench_data.types import Task
from evaluator.benchmarks.base import Benchmark, BenchmarkError
from evaluator.config import RunConfig
from evaluator.protocols.base import EpisodeContext
from evaluator.run.resources import SweepError


def load_protocol(entry: str) -> Callable[[EpisodeContext], Any]:
    module, _, fn = entry.partition(":")
    if not module or not fn:
        raise SweepError(f"protocol.entry {entry!r}: expected 'module:function'")
    try:
        found = getattr(importlib.import_module(module), fn)
    except (ImportError, AttributeError) as exc:
        raise SweepError(f"protocol.entry {entry!r}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - the module failed while it was imported
        raise SweepError(f"protocol.entry {entry!r}: importing {module} failed: "
                         f"{type(exc).__name__}: {exc}") from None
    if not inspect.iscoroutinefunction(found):
        raise SweepError(f"protocol.entry {entry!r}: not an async function (a protocol is "
                         f"`async def fn(ctx: EpisodeContext) -> EpisodeRecord`), got "
                         f"{type(found).__name__}")
    try:
        inspect.signature(found).bind(None)
    except TypeError:
        raise SweepError(f"protocol.entry {entry!r}: a protocol takes one argument, the "
                         "EpisodeContext") from None
    except ValueError:  # no signature to inspect (a builtin)
        pass
    return found


class NoTools:
    """The environment of a benchmark without tools: no tool schemas, no calls."""

    @property
    def tools(self) -> list[dict[str, Any]]:
        return []

    def episode(self, task: Task) -> Any:
        return self

    def describe(self) -> dict[str, Any]:
        return {"tools": "none"}

    async def call(self, name: str, arguments: str, *, task_time: str) -> Any:
        from cache_store.types import ToolOutcome

        return ToolOutcome(content='{"error": "this benchmark has no tools"}', source="error",
                           error_category="unknown_tool")


def subset_protocols(config: RunConfig, bench: Benchmark, tasks: list[Task]
               ) -> dict[str, Callable[[EpisodeContext], Any]]:
    if config.protocol.entry:
        fn = load_protocol(config.protocol.entry)
        return {t.subset: fn for t in tasks}
    out = {}
    for t in tasks:
        if t.subset not in out:
            try:
                out[t.subset] = bench.protocol(t.subset)
            except BenchmarkError as exc:
                raise SweepError(f"data: {exc}") from None
    return out


def prompt_set_for(spec: str, bench: Benchmark) -> Any:
    """The run's prompt set of the benchmark's roles (None for a benchmark without prompt sets
    when `prompts` is "builtin")."""
    from evaluator.prompt_sets import BUILTIN, PromptSetError, load_prompt_set

    if bench.prompts is None:
        if spec != BUILTIN:
            raise SweepError(f"prompts: benchmark {bench.name} has no prompt sets; "
                             f"use prompts = {BUILTIN!r}")
        return None
    try:
        return load_prompt_set(spec, bench.prompts)
    except PromptSetError as exc:
        raise SweepError(f"prompts: {exc}") from None


def prompt_info(prompt_set: Any) -> dict[str, Any]:
    if prompt_set is None:
        return {"name": "builtin", "digest": "", "path": ""}
    return {"name": prompt_set.name, "digest": prompt_set.digest,
            "path": str(prompt_set.path or "")}
