"""The benchmark registry: every `Benchmark` (see `base.py`) by name.

The generic layers (sweep, judge pool, scoring, report, viewer, CLI) import no benchmark; they
call `get(name)` / `find(name)` / `all_benchmarks()`. Benchmarks come from, in this order:

1. `BUILTIN`, the import list of the benchmarks shipped here;
2. the `agentsweep.benchmarks` entry-point group of installed distributions (each entry point
   names a module with a `BENCHMARK`, or a `Benchmark` object);
3. the modules named in `$AGENTSWEEP_PLUGINS` (comma-separated);
4. the modules named by a run's config (`plugins = ["my_pkg.my_bench"]`), loaded with
   `load_plugins` by `agentsweep run`, `judge`, `report` and `view` (which read them from the
   run's config), or `--plugin MODULE`.

A plugin module exposes `BENCHMARK = Benchmark(...)`; importing it registers nothing by itself.
docs/adding_a_benchmark.md walks through one.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable
from importlib import metadata
from typing import Any

from bench_data.registry import register_format

from .base import Benchmark, BenchmarkError

BUILTIN = (
    "evaluator.benchmarks.travelbench",
    "evaluator.benchmarks.grouptravelbench",
    "evaluator.benchmarks.vitabench",
    "evaluator.benchmarks.tripbench",
)
"""The benchmarks shipped with agentsweep (modules with a `BENCHMARK`)."""
ENTRY_POINT_GROUP = "agentsweep.benchmarks"
PLUGINS_ENV = "AGENTSWEEP_PLUGINS"

_REGISTRY: dict[str, Benchmark] = {}
_LOADED_MODULES: set[str] = set()
_started = False
_builtins_loaded = False


def register(bench: Benchmark, *, replace: bool = False) -> Benchmark:
    """Add a benchmark (and its data format, so its data can be found and loaded)."""
    load_builtins()  # the built-in formats first: recognising data tries later ones first
    old = _REGISTRY.get(bench.name)
    if old is not None and old is not bench and not replace:
        raise BenchmarkError(f"a benchmark named {bench.name!r} is already registered")
    register_format(bench.data, replace=replace or old is not None)
    _REGISTRY[bench.name] = bench
    return bench


def _from_object(obj: Any, origin: str) -> Benchmark:
    bench = getattr(obj, "BENCHMARK", obj)
    if not isinstance(bench, Benchmark):
        raise BenchmarkError(f"{origin}: expected a module with `BENCHMARK = Benchmark(...)` "
                             f"or a Benchmark, got {type(bench).__name__}")
    return bench


def load_module(name: str) -> Benchmark:
    """Import module NAME and register its `BENCHMARK` (once per module)."""
    try:
        module = importlib.import_module(name)
    except ImportError as exc:
        raise BenchmarkError(f"benchmark plugin {name!r} cannot be imported: {exc}") from None
    bench = _from_object(module, name)
    if name not in _LOADED_MODULES:
        register(bench)
        _LOADED_MODULES.add(name)
    return bench


def load_plugins(modules: Iterable[str]) -> list[Benchmark]:
    """Register the benchmarks of MODULES (besides the built-in ones)."""
    _start()
    return [load_module(m) for m in modules if m]


def load_builtins() -> None:
    """Register the built-in benchmarks (`BUILTIN`) once; the dataset registry
    (`bench_data.registry`) runs this before each lookup, so that their data formats are known
    without bench_data importing a benchmark."""
    global _builtins_loaded
    if _builtins_loaded:
        return
    _builtins_loaded = True
    for name in BUILTIN:
        load_module(name)


def _start() -> None:
    global _started
    if _started:
        return
    _started = True
    load_builtins()
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.value in _LOADED_MODULES:
            continue
        try:
            bench = _from_object(ep.load(), f"entry point {ep.name} = {ep.value}")
        except ImportError as exc:
            raise BenchmarkError(f"entry point {ep.name} = {ep.value} ({ENTRY_POINT_GROUP}) "
                                 f"cannot be imported: {exc}") from None
        register(bench)
        _LOADED_MODULES.add(ep.value)
    for name in os.environ.get(PLUGINS_ENV, "").split(","):
        if name.strip():
            load_module(name.strip())


def find(name: str) -> Benchmark | None:
    _start()
    return _REGISTRY.get(name)


def get(name: str) -> Benchmark:
    """The benchmark NAME; BenchmarkError naming the registered ones."""
    bench = find(name)
    if bench is None:
        raise BenchmarkError(f"no benchmark {name!r} is registered (known: {', '.join(names())}"
                             f"; a plugin's module goes in `plugins` or ${PLUGINS_ENV})")
    return bench


def names() -> list[str]:
    _start()
    return list(_REGISTRY)


def all_benchmarks() -> list[Benchmark]:
    _start()
    return list(_REGISTRY.values())


def config_aliases() -> dict[str, str]:
    """Every registered benchmark's old config keys -> current keys."""
    out: dict[str, str] = {}
    for bench in all_benchmarks():
        out.update(bench.config_aliases)
    return out


__all__ = ["BUILTIN", "ENTRY_POINT_GROUP", "PLUGINS_ENV", "Benchmark", "BenchmarkError",
           "all_benchmarks", "config_aliases", "find", "get", "load_builtins", "load_module",
           "load_plugins", "names", "register"]
