"""What the run configuration may ask of the registered benchmarks, without importing them.

The config layer (`config.py`, `config_check.py`, `config_doc.py`, `profiles.py`) sits below
the benchmark registry (`evaluator.benchmarks`): the registry imports every benchmark, and the
benchmarks import the run's building blocks, which import the config. So the config never
imports the registry; it asks the `Catalog` it is handed here for a benchmark's profiles,
options type and old config keys. Importing the `evaluator` package installs the registry
(`evaluator/__init__.py`); a test may install another catalog and put the old one back.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol


class Catalog(Protocol):
    """The registry as the config layer sees it (`evaluator.benchmarks` is one). A benchmark
    here has `name`, `title`, `profiles`, `options` and `config_aliases` (`base.Benchmark`)."""

    BenchmarkError: type[Exception]

    def find(self, name: str) -> Any:
        """The benchmark NAME, or None."""
        ...

    def all_benchmarks(self) -> list[Any]: ...

    def load_plugins(self, modules: Iterable[str]) -> Any:
        """Register the benchmarks of MODULES (raises BenchmarkError in one line)."""
        ...

    def config_aliases(self) -> dict[str, str]:
        """Every registered benchmark's old config keys -> current keys."""
        ...


_installed: list[Catalog] = []


def install(catalog: Catalog) -> Catalog | None:
    """Hand the config layer its catalog; returns the one it replaces (None at first)."""
    old = _installed[0] if _installed else None
    _installed[:] = [catalog]
    return old


def current() -> Catalog:
    """The installed catalog (the registry, once the `evaluator` package is imported)."""
    if not _installed:
        raise RuntimeError("no benchmark catalog installed: import the evaluator package "
                           "(evaluator/__init__.py hands the config its registry)")
    return _installed[0]
