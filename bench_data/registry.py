"""Dataset registry: find benchmark data by name or path and load it as a `TaskSet`.

Datasets are found and read through the registered `DataFormat`s (`bench_data.formats`). This
package knows no benchmark: each benchmark's format lives in its package
(`evaluator/benchmarks/<name>/data.py`) and is registered with it (`register_format`, done by
the evaluator's benchmark registry, which also hands this module a format source: a function
run before each lookup that registers the built-in benchmarks' formats). Names: "sample" (the
built-in sample, no download), a benchmark's name (its directory under the data directory), or
a path to a benchmark directory or task file; `benchmark=` reads the data as that benchmark's
instead of recognising it.

Data directory, first that exists: the `data_dir` argument, `$AGENTSWEEP_DATA_DIR`,
`./../shared/data` (relative to the working directory), `<repo>/../shared/data`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from bench_data.formats import DataFormat
from bench_data.samples import SAMPLE_DIR  # noqa: F401  (the built-in sample, for callers)
from bench_data.tools import check_tool_schemas
from bench_data.types import LoadIssue, Task, TaskLoadError

DATA_DIR_ENV = "AGENTSWEEP_DATA_DIR"
SAMPLE = "sample"
CACHE_SUBDIRS = ("cache", "sandbox_cache")

# registration order; recognising data tries the latest registered first (plugins before the
# built-ins, whose catch-all TravelBench .jsonl rule goes last)
_FORMATS: dict[str, DataFormat] = {}
_SOURCES: list[Callable[[], object]] = []


def add_format_source(load: Callable[[], object]) -> None:
    """Run `load()` before every lookup: it registers formats this package cannot import (the
    evaluator's benchmark registry hands its loader of the built-in benchmarks; once they are
    loaded it returns at once)."""
    if load not in _SOURCES:
        _SOURCES.append(load)


def _formats() -> dict[str, DataFormat]:
    for load in _SOURCES:
        load()
    return _FORMATS


def register_format(fmt: DataFormat, *, replace: bool = False) -> None:
    """Make a benchmark's data findable by name, path and `benchmark=`."""
    if fmt.benchmark == SAMPLE:
        raise ValueError(f"{SAMPLE!r} is the built-in sample dataset, not a benchmark name")
    old = _FORMATS.get(fmt.benchmark)
    if old is not None and old is not fmt and not replace:
        raise ValueError(f"a data format for {fmt.benchmark!r} is already registered")
    _FORMATS[fmt.benchmark] = fmt



def formats() -> list[DataFormat]:
    """The registered formats in registration order."""
    return list(_formats().values())


def get_format(benchmark: str) -> DataFormat:
    try:
        return _formats()[benchmark]
    except KeyError:
        raise KeyError(f"no data format for benchmark {benchmark!r}; known: "
                       f"{', '.join(_FORMATS)}") from None


def sample_format() -> DataFormat:
    """The format of the built-in sample dataset: the first registered one that ships one."""
    for fmt in _formats().values():
        if fmt.sample is not None:
            return fmt
    raise FileNotFoundError("no registered benchmark ships a built-in sample")


def _detect_order() -> list[DataFormat]:
    return list(reversed(_formats().values()))


class DatasetInfo(msgspec.Struct):
    """One dataset as `agentsweep data list` shows it."""

    name: str
    benchmark: str
    path: str
    subsets: dict[str, int]
    builtin: bool
    license: str
    available: bool = True
    issues: int = 0

    @property
    def task_count(self) -> int:
        return sum(self.subsets.values())


class TaskSet(msgspec.Struct):
    """Loaded tasks plus what an episode needs next to them.

    tool_schemas: OpenAI-format tool dicts in the order the agent sees them ([] when the data
    does not ship them); cache_dir: a release-layout tool cache (`<tool>_cache.json` files)
    found next to the data, else None; files: every data file read (for manifest hashing).
    """

    name: str
    benchmark: str
    tasks: list[Task]
    tool_schemas: list[dict[str, Any]]
    cache_dir: Path | None
    files: list[Path]
    issues: list[LoadIssue]
    license: str = ""
    builtin: bool = False  # the built-in sample

    def subsets(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for task in self.tasks:
            counts[task.subset] = counts.get(task.subset, 0) + 1
        return counts


class _Source(msgspec.Struct):
    """A resolved dataset: which format reads which file for which subset."""

    name: str
    format: DataFormat
    root: Path
    parts: list[tuple[str, Path]]  # (subset, file) in load order
    builtin: bool = False
    schema_file: Path | None = None

    @property
    def benchmark(self) -> str:
        return self.format.benchmark


def resolve_data_dir(data_dir: Path | str | None = None) -> Path | None:
    """The data directory to use, or None when none of the candidates exists."""
    if data_dir is not None:
        path = Path(data_dir).expanduser()
        if not path.is_dir():
            raise FileNotFoundError(f"data directory {path} does not exist")
        return path
    env = os.environ.get(DATA_DIR_ENV)
    if env:
        path = Path(env).expanduser()
        if not path.is_dir():
            raise FileNotFoundError(f"${DATA_DIR_ENV}={env} is not a directory")
        return path
    for candidate in (Path.cwd().parent / "shared" / "data",
                      Path(__file__).resolve().parents[2] / "shared" / "data"):
        if candidate.is_dir():
            return candidate
    return None


def read_license(directory: Path) -> str:
    """A short license name from the LICENSE file next to the data (or one folder up)."""
    for path in (d / n for d in (directory, directory.parent)
                 for n in ("LICENSE", "LICENSE.txt", "LICENSE.md")):
        if path.is_file():
            head = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
            first = head[0].strip() if head else ""
            if first.startswith("Attribution-NonCommercial 4.0"):
                return "CC BY-NC 4.0"
            if first.startswith("MIT"):
                return "MIT"
            if "Apache License" in first:
                return "Apache-2.0"
            return first or "unknown (empty LICENSE)"
    return "unknown (no LICENSE file)"


def _from_dir(name: str, root: Path, builtin: bool = False,
              benchmark: str | None = None) -> _Source:
    candidates = [get_format(benchmark)] if benchmark else _detect_order()
    for fmt in candidates:
        parts = fmt.find_parts(root)
        if parts:
            return _Source(name=name, format=fmt, root=root, parts=parts, builtin=builtin,
                           schema_file=fmt.tool_schemas(root))
    if benchmark:
        raise FileNotFoundError(f"{root}: no {benchmark} task files found")
    raise FileNotFoundError(
        f"{root}: no benchmark files found (expected the task files of a registered benchmark: "
        f"{', '.join(_FORMATS)}; docs/data.md shows each one's layout)")


def _from_file(path: Path, benchmark: str | None = None) -> _Source:
    if any(fmt.tool_schemas(path.parent) == path for fmt in _formats().values()):
        raise ValueError(f"{path} is a tool-schema file, not a task file")
    candidates = [get_format(benchmark)] if benchmark else _detect_order()
    for fmt in candidates:
        subset = fmt.file_subset(path)
        if subset is not None:
            return _Source(name=str(path), format=fmt, root=path.parent,
                           parts=[(subset, path)], schema_file=fmt.tool_schemas(path.parent))
    if benchmark:
        raise ValueError(f"{path}: not a {benchmark} task file")
    raise ValueError(f"{path}: expected a .jsonl or .json task file")


def resolve(name_or_path: str, data_dir: Path | str | None = None,
            benchmark: str | None = None) -> _Source:
    """Find the files behind a dataset name or path; raise FileNotFoundError naming places.
    `benchmark`: read the data as that benchmark's (None = recognise it)."""
    if benchmark is not None:
        get_format(benchmark)  # a clear error for an unknown name
    if name_or_path == SAMPLE:
        fmt = get_format(benchmark) if benchmark else sample_format()
        if fmt.sample is None:
            raise FileNotFoundError(f"benchmark {benchmark!r} ships no built-in sample")
        return _from_dir(SAMPLE, fmt.sample, builtin=True, benchmark=fmt.benchmark)
    if name_or_path in _formats():
        if benchmark and benchmark != name_or_path:
            raise ValueError(f"dataset {name_or_path!r} is benchmark {name_or_path!r}'s data, "
                             f"not {benchmark!r}'s")
        base = resolve_data_dir(data_dir)
        if base is None:
            raise FileNotFoundError(
                f"dataset {name_or_path!r}: no data directory (pass --data-dir, set "
                f"${DATA_DIR_ENV}, or put the data in ../shared/data); "
                f"the built-in 'sample' dataset needs none")
        root = base / name_or_path
        if not root.is_dir():
            raise FileNotFoundError(f"dataset {name_or_path!r}: {root} does not exist")
        return _from_dir(name_or_path, root, benchmark=name_or_path)
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        return _from_dir(str(path), path, benchmark=benchmark)
    if path.is_file():
        return _from_file(path, benchmark)
    known = ", ".join((SAMPLE, *_FORMATS))
    raise FileNotFoundError(f"{name_or_path!r} is neither a dataset name ({known}) "
                            f"nor an existing file or directory")


def benchmark_of(name_or_path: str, data_dir: Path | str | None = None) -> str | None:
    """The benchmark a dataset belongs to, without loading it (None when it cannot be found)."""
    if name_or_path == SAMPLE:
        return sample_format().benchmark
    if name_or_path in _formats():
        return name_or_path
    try:
        return resolve(name_or_path, data_dir).benchmark
    except (OSError, ValueError, KeyError):
        return None


def find_cache_dir(root: Path) -> Path | None:
    for sub in CACHE_SUBDIRS:
        candidate = root / sub
        if candidate.is_dir() and any(candidate.glob("*_cache.json")):
            return candidate
    return None


def _select(source: _Source, subsets: Sequence[str] | None) -> list[tuple[str, Path]]:
    if not subsets:
        return source.parts
    canon = {source.format.canonical_subset(s) for s in subsets}
    available = {s for s, _ in source.parts}
    unknown = sorted(canon - available)
    if unknown:
        raise ValueError(f"unknown subset(s) {', '.join(unknown)} for {source.name}; "
                         f"available: {', '.join(s for s, _ in source.parts)}")
    return [(s, p) for s, p in source.parts if s in canon]


def load_tasks(
    name_or_path: str,
    *,
    subsets: Sequence[str] | None = None,
    limit: int | None = None,
    data_dir: Path | str | None = None,
    skip_bad: bool = False,
    benchmark: str | None = None,
) -> TaskSet:
    """Load a dataset by name or path.

    subsets: keep only these (aliases such as "unsolve" accepted); limit: the first N good
    tasks of each subset in file order. With skip_bad=False any bad record (in any file,
    tool schemas included) raises TaskLoadError listing every issue found. benchmark: read
    the data as that benchmark's (None = recognise it).
    """
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    source = resolve(name_or_path, data_dir, benchmark)
    loader = source.format.load_file
    tasks: list[Task] = []
    issues: list[LoadIssue] = []
    files: list[Path] = []
    for subset, path in _select(source, subsets):
        result = loader(path, subset or None, skip_bad=True, limit=limit)
        tasks.extend(result.tasks)
        issues.extend(result.issues)
        files.append(path)
    tool_schemas: list[dict[str, Any]] = []
    if source.schema_file is not None:
        tool_schemas, schema_issues = check_tool_schemas(source.schema_file)
        issues.extend(schema_issues)
        files.append(source.schema_file)
    if issues and not skip_bad:
        raise TaskLoadError(issues)
    return TaskSet(name=source.name, benchmark=source.benchmark, tasks=tasks,
                   tool_schemas=tool_schemas, cache_dir=find_cache_dir(source.root),
                   files=files, issues=issues, license=_license(source),
                   builtin=source.builtin)


def _license(source: _Source) -> str:
    if source.builtin:
        return source.format.license or "unknown (built-in sample)"
    return read_license(source.root)


def _info(source: _Source) -> DatasetInfo:
    loader = source.format.load_file
    counts: dict[str, int] = {}
    n_issues = 0
    for subset, path in source.parts:
        result = loader(path, subset or None, skip_bad=True)
        counts[subset] = counts.get(subset, 0) + len(result.tasks)
        n_issues += len(result.issues)
    return DatasetInfo(name=source.name, benchmark=source.benchmark, path=str(source.root),
                       subsets=counts, builtin=source.builtin, license=_license(source),
                       issues=n_issues)


def dataset_info(benchmark: str, data_dir: Path | str | None = None) -> DatasetInfo:
    """Benchmark BENCHMARK's data under the data directory (available or not)."""
    base = resolve_data_dir(data_dir)
    root = base / benchmark if base is not None else None
    if root is None or not root.is_dir():
        return DatasetInfo(name=benchmark, benchmark=benchmark, path=str(root) if root else "",
                           subsets={}, builtin=False, license="", available=False)
    try:
        return _info(_from_dir(benchmark, root, benchmark=benchmark))
    except FileNotFoundError:
        return DatasetInfo(name=benchmark, benchmark=benchmark, path=str(root), subsets={},
                           builtin=False, license=read_license(root), available=False)


def list_datasets(data_dir: Path | str | None = None) -> list[DatasetInfo]:
    """The built-in sample, then each registered benchmark's data (available or not)."""
    resolve_data_dir(data_dir)  # a bad --data-dir is an error, not "not found"
    infos = [_info(resolve(SAMPLE))]
    infos += [dataset_info(fmt.benchmark, data_dir) for fmt in _formats().values()]
    return infos
