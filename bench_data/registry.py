"""Dataset registry: find benchmark data by name or path and load it as a `TaskSet`.

Names: "sample" (built in, no download), "travelbench", "vitabench", "grouptravelbench"
(looked up under the data directory), or a path to a benchmark directory or task file.

Data directory, first that exists: the `data_dir` argument, `$AGENTSWEEP_DATA_DIR`,
`./../shared/data` (relative to the working directory), `<repo>/../shared/data`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from bench_data import grouptravelbench, travelbench, vitabench
from bench_data.travelbench import LoadResult
from bench_data.types import LoadIssue, Task, TaskLoadError

DATA_DIR_ENV = "AGENTSWEEP_DATA_DIR"
SAMPLE_DIR = Path(__file__).resolve().parent / "samples" / "travel_sample"
SAMPLE_LICENSE = "Apache-2.0 (written for agentsweep)"
KNOWN = ("travelbench", "vitabench", "grouptravelbench")
CACHE_SUBDIRS = ("cache", "sandbox_cache")

Loader = Callable[..., LoadResult]


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

    def subsets(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for task in self.tasks:
            counts[task.subset] = counts.get(task.subset, 0) + 1
        return counts


class _Source(msgspec.Struct):
    """A resolved dataset: which loader reads which file for which subset."""

    name: str
    benchmark: str
    root: Path
    parts: list[tuple[str, Path]]  # (subset, file) in load order
    loader_name: str
    builtin: bool = False
    schema_file: Path | None = None


_LOADERS: dict[str, Loader] = {
    "travelbench": travelbench.load_travelbench_file,
    "vitabench": vitabench.load_vitabench_file,
    "grouptravelbench": grouptravelbench.load_grouptravel_file,
}


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


def _first_record_keys(path: Path) -> set[str]:
    with path.open("rb") as fh:
        for raw in fh:
            if raw.strip():
                try:
                    obj = msgspec.json.decode(raw)
                except msgspec.DecodeError:
                    return set()
                return set(obj) if isinstance(obj, dict) else set()
    return set()


def _jsonl_benchmark(path: Path) -> str:
    keys = _first_record_keys(path)
    return "grouptravelbench" if {"task_id", "user_preferences"} <= keys else "travelbench"


def _from_dir(name: str, root: Path, builtin: bool = False) -> _Source:
    travel_parts = [(s, root / f) for s, f in travelbench.SUBSET_FILES.items()
                    if (root / f).is_file()]
    if travel_parts:
        schema = root / travelbench.TOOL_SCHEMAS_FILE
        return _Source(name=name, benchmark="travelbench", root=root, parts=travel_parts,
                       loader_name="travelbench", builtin=builtin,
                       schema_file=schema if schema.is_file() else None)
    vita = sorted(p for p in root.glob(f"*/{vitabench.TASK_FILE}"))
    if (root / vitabench.TASK_FILE).is_file():
        vita.insert(0, root / vitabench.TASK_FILE)
    if vita:
        parts = [(vitabench.canonical_domain(p.parent.name), p) for p in vita]
        return _Source(name=name, benchmark="vitabench", root=root, parts=parts,
                       loader_name="vitabench")
    jsonl = sorted(root.glob("*.jsonl"))
    group = [p for p in jsonl if _jsonl_benchmark(p) == "grouptravelbench"]
    if group:
        parts = [(grouptravelbench.subset_for_file(p), p) for p in group]
        return _Source(name=name, benchmark="grouptravelbench", root=root, parts=parts,
                       loader_name="grouptravelbench")
    raise FileNotFoundError(
        f"{root}: no benchmark files found (expected TravelBench single_turn/multi_turn/"
        f"unsolve.jsonl, VitaBench <domain>/{vitabench.TASK_FILE}, or GroupTravelBench *.jsonl)")


def _from_file(path: Path) -> _Source:
    if path.name == travelbench.TOOL_SCHEMAS_FILE:
        raise ValueError(f"{path} is a tool-schema file, not a task file")
    if path.suffix == ".json":
        subset = vitabench.canonical_domain(path.parent.name) if path.name == vitabench.TASK_FILE \
            else path.stem
        return _Source(name=str(path), benchmark="vitabench", root=path.parent,
                       parts=[(subset, path)], loader_name="vitabench")
    if path.suffix != ".jsonl":
        raise ValueError(f"{path}: expected a .jsonl or .json task file")
    bench = _jsonl_benchmark(path)
    if bench == "grouptravelbench":
        return _Source(name=str(path), benchmark=bench, root=path.parent,
                       parts=[(grouptravelbench.subset_for_file(path), path)],
                       loader_name=bench)
    subset = travelbench.subset_for_file(path) or ""
    schema = path.parent / travelbench.TOOL_SCHEMAS_FILE
    return _Source(name=str(path), benchmark="travelbench", root=path.parent,
                   parts=[(subset, path)], loader_name="travelbench",
                   schema_file=schema if schema.is_file() else None)


def resolve(name_or_path: str, data_dir: Path | str | None = None) -> _Source:
    """Find the files behind a dataset name or path; raise FileNotFoundError naming places."""
    if name_or_path == "sample":
        return _from_dir("sample", SAMPLE_DIR, builtin=True)
    if name_or_path in KNOWN:
        base = resolve_data_dir(data_dir)
        if base is None:
            raise FileNotFoundError(
                f"dataset {name_or_path!r}: no data directory (pass --data-dir, set "
                f"${DATA_DIR_ENV}, or put the data in ../shared/data); "
                f"the built-in 'sample' dataset needs none")
        root = base / name_or_path
        if not root.is_dir():
            raise FileNotFoundError(f"dataset {name_or_path!r}: {root} does not exist")
        return _from_dir(name_or_path, root)
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        return _from_dir(str(path), path)
    if path.is_file():
        return _from_file(path)
    known = ", ".join(("sample", *KNOWN))
    raise FileNotFoundError(f"{name_or_path!r} is neither a dataset name ({known}) "
                            f"nor an existing file or directory")


def find_cache_dir(root: Path) -> Path | None:
    for sub in CACHE_SUBDIRS:
        candidate = root / sub
        if candidate.is_dir() and any(candidate.glob("*_cache.json")):
            return candidate
    return None


def _select(source: _Source, subsets: Sequence[str] | None) -> list[tuple[str, Path]]:
    if not subsets:
        return source.parts
    canon = {travelbench.canonical_subset(vitabench.canonical_domain(s)) for s in subsets}
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
) -> TaskSet:
    """Load a dataset by name or path.

    subsets: keep only these (aliases such as "unsolve" accepted); limit: the first N good
    tasks of each subset in file order. With skip_bad=False any bad record (in any file,
    tool schemas included) raises TaskLoadError listing every issue found.
    """
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    source = resolve(name_or_path, data_dir)
    loader = _LOADERS[source.loader_name]
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
        tool_schemas, schema_issues = travelbench.check_tool_schemas(source.schema_file)
        issues.extend(schema_issues)
        files.append(source.schema_file)
    if issues and not skip_bad:
        raise TaskLoadError(issues)
    license_name = SAMPLE_LICENSE if source.builtin else read_license(source.root)
    return TaskSet(name=source.name, benchmark=source.benchmark, tasks=tasks,
                   tool_schemas=tool_schemas, cache_dir=find_cache_dir(source.root),
                   files=files, issues=issues, license=license_name)


def _info(source: _Source) -> DatasetInfo:
    loader = _LOADERS[source.loader_name]
    counts: dict[str, int] = {}
    n_issues = 0
    for subset, path in source.parts:
        result = loader(path, subset or None, skip_bad=True)
        counts[subset] = counts.get(subset, 0) + len(result.tasks)
        n_issues += len(result.issues)
    return DatasetInfo(name=source.name, benchmark=source.benchmark, path=str(source.root),
                       subsets=counts, builtin=source.builtin,
                       license=SAMPLE_LICENSE if source.builtin else read_license(source.root),
                       issues=n_issues)


def list_datasets(data_dir: Path | str | None = None) -> list[DatasetInfo]:
    """The built-in sample, then each known benchmark (available or not) under the data dir."""
    infos = [_info(_from_dir("sample", SAMPLE_DIR, builtin=True))]
    base = resolve_data_dir(data_dir)
    for name in KNOWN:
        root = base / name if base is not None else None
        if root is None or not root.is_dir():
            infos.append(DatasetInfo(name=name, benchmark=name,
                                     path=str(root) if root else "", subsets={},
                                     builtin=False, license="", available=False))
            continue
        try:
            infos.append(_info(_from_dir(name, root)))
        except FileNotFoundError:
            infos.append(DatasetInfo(name=name, benchmark=name, path=str(root), subsets={},
                                     builtin=False, license=read_license(root),
                                     available=False))
    return infos
