"""How a benchmark's data looks on disk: one `DataFormat` per benchmark.

A format says which files of a directory are its task files (and for which subsets), whether a
single file is one of its task files, how one file is loaded (`bench_data/<name>.py`), where its
tool schemas are and which subset names it accepts as aliases. `bench_data.registry` finds and
loads datasets through the registered formats only; the built-in ones are TravelBench,
GroupTravelBench and VitaBench, and a plugin benchmark registers its own
(`bench_data.registry.register_format`, done for it when its `Benchmark` is registered).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import msgspec

from bench_data.types import LoadIssue, Task


class LoadResult(msgspec.Struct):
    """What one file gave: the good tasks in file order, and the issues found."""

    tasks: list[Task]
    issues: list[LoadIssue]


class Loader(Protocol):
    """Load one task file: `subset` None = the one the file stands for; with skip_bad=False any
    issue raises `TaskLoadError`; `limit` keeps the first N good tasks."""

    def __call__(self, path: Path, subset: str | None = ..., *, skip_bad: bool = ...,
                 limit: int | None = ...) -> LoadResult: ...


def _same(name: str) -> str:
    return name


def _no_tools(root: Path) -> Path | None:
    return None


def _no_aux(path: Path) -> tuple[str, list[LoadIssue]] | None:
    return None


@dataclass(frozen=True)
class DataFormat:
    """One benchmark's data layout (see the module doc).

    benchmark: the benchmark's name (also its directory under the data directory).
    load_file: reads one task file.
    find_parts: a benchmark directory -> its task files as (subset, file) in load order; []
        when the directory is not this benchmark's.
    file_subset: a single task file -> the subset it stands for ("" = decided by its records),
        or None when the file is not this benchmark's.
    subsets: the subsets the benchmark defines (shown by `agentsweep data list`; () = the ones
        found in the data).
    canonical_subset: a subset name as a user may write it -> the canonical name.
    tool_schemas: the OpenAI-format tool list shipped with the data under a root, or None.
    sample: the directory of a small built-in sample (the dataset "sample"), or None.
    license: the sample's license.
    aux_check: a file, or the directory of task files -> (what it holds, in words; its issues)
        for the benchmark's own files besides tasks and tool schemas (a lookup table), None
        when the path holds none (`agentsweep data check`).
    """

    benchmark: str
    load_file: Callable[..., LoadResult]
    find_parts: Callable[[Path], list[tuple[str, Path]]]
    file_subset: Callable[[Path], str | None]
    subsets: tuple[str, ...] = ()
    canonical_subset: Callable[[str], str] = _same
    tool_schemas: Callable[[Path], Path | None] = _no_tools
    sample: Path | None = None
    license: str = ""
    aux_check: Callable[[Path], tuple[str, list[LoadIssue]] | None] = _no_aux

    def describe(self) -> dict[str, Any]:
        return {"benchmark": self.benchmark, "subsets": list(self.subsets),
                "sample": str(self.sample) if self.sample else None}


def first_record_keys(path: Path) -> set[str]:
    """The keys of the first JSON object of a JSON Lines file (empty when unreadable)."""
    with path.open("rb") as fh:
        for raw in fh:
            if raw.strip():
                try:
                    obj = msgspec.json.decode(raw)
                except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
                    return set()
                return set(obj) if isinstance(obj, dict) else set()
    return set()
