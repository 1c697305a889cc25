"""Toybench's data: one JSON Lines file per subset, each line a question and its answer.

The payload is a msgspec Struct tagged with the benchmark's name; the loader turns each line
into a `Task` carrying it, collecting bad lines as `LoadIssue`s (file, line, field).
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from bench_data.decoding import iter_jsonl
from bench_data.formats import DataFormat, LoadResult
from bench_data.types import LoadIssue, Task, TaskLoadError

NAME = "toybench"
SUBSETS = ("arith",)


class ToyTask(msgspec.Struct, tag_field="kind", tag=NAME):
    """One line of `<subset>.jsonl`."""

    id: str
    question: str
    answer: str


def load_file(path: Path | str, subset: str | None = None, *, skip_bad: bool = False,
              limit: int | None = None) -> LoadResult:
    path = Path(path)
    subset = subset or path.stem
    tasks: list[Task] = []
    issues: list[LoadIssue] = []
    for lineno, item in iter_jsonl(path, ToyTask):
        if isinstance(item, LoadIssue):
            issues.append(item)
            continue
        tasks.append(Task(benchmark=NAME, subset=subset, task_id=item.id,
                          source=f"{path}:{lineno}", payload=item))
        if limit is not None and len(tasks) >= limit:
            break
    if issues and not skip_bad:
        raise TaskLoadError(issues)
    return LoadResult(tasks=tasks, issues=issues)


def find_parts(root: Path) -> list[tuple[str, Path]]:
    """The subsets' files in a benchmark directory ([] when it is not one)."""
    return [(s, root / f"{s}.jsonl") for s in SUBSETS if (root / f"{s}.jsonl").is_file()]


def file_subset(path: Path) -> str | None:
    """The subset a single task file stands for, or None when it is not ours."""
    return path.stem if path.suffix == ".jsonl" and path.stem in SUBSETS else None


FORMAT = DataFormat(benchmark=NAME, load_file=load_file, find_parts=find_parts,
                    file_subset=file_subset, subsets=SUBSETS)
