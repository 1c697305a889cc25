"""`agentsweep run --domain A,B` (config `data.domains`): the run's benchmark says what the
domains mean (`Benchmark.domains`); this module asks it before the tasks load.

The benchmark gets the domains as given and the subsets the dataset has, and answers which
subsets run (unless the run names its own with `--subset`) and what the episodes get (for the
manifest's `domains`). A benchmark without domains, or a domain list it does not accept, is a
one-line error naming the flag.
"""

from __future__ import annotations

from typing import Any

from evaluator.benchmarks.base import BenchmarkError
from evaluator.config import RunConfig
from evaluator.run.resources import SweepError

FLAG = "--domain"


def split_domains(values: list[str]) -> list[str]:
    """`--domain a,b --domain c` -> [a, b, c] (blanks dropped, order kept, duplicates once)."""
    out = [v.strip() for item in values for v in item.split(",") if v.strip()]
    if not out:
        raise ValueError(f"{FLAG}: give at least one domain name")
    return list(dict.fromkeys(out))


def resolve_domains(config: RunConfig) -> tuple[list[str] | None, dict[str, Any]]:
    """(the subsets to load, None = all; the manifest's `domains` record, {} = none given)."""
    from bench_data.registry import resolve
    from evaluator import benchmarks

    d = config.data
    if not d.domains:
        return d.subsets or None, {}
    try:
        given = tuple(split_domains(list(d.domains)))
        source = resolve(d.dataset, d.data_dir or None, d.benchmark or None)
        bench = benchmarks.get(source.benchmark)
    except ValueError as exc:
        raise SweepError(str(exc) if str(exc).startswith(FLAG) else f"data: {exc}") from None
    except (FileNotFoundError, KeyError, BenchmarkError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        raise SweepError(f"data: {msg}") from None
    if bench.domains is None:
        raise SweepError(f"{FLAG}: benchmark {bench.name} has no domains (use --subset)")
    available = tuple(dict.fromkeys(s for s, _ in source.parts))
    try:
        choice = bench.domains(given, available)
    except ValueError as exc:
        raise SweepError(f"{FLAG}: {exc}") from None
    subsets = list(d.subsets) or list(choice.subsets)
    record = {"given": list(given), "subsets": subsets, **dict(choice.describe)}
    return subsets, record
