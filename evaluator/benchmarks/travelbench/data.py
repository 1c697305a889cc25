"""TravelBench loaders: the three task subsets (JSON Lines) and the agent's tool schemas.

File name -> subset: single_turn.jsonl -> "single_turn", multi_turn.jsonl -> "multi_turn",
unsolve.jsonl -> "unsolvable". Every line is decoded with msgspec into `TravelBenchTask` with
strict types and wrapped as a `Task`; problems are collected as `LoadIssue`s (file, line, field).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import msgspec

from bench_data.decoding import first_occurrence, iter_jsonl
from bench_data.formats import DataFormat, LoadResult
from bench_data.samples import SAMPLE_DIR
from bench_data.tools import check_tool_schemas, load_tool_schemas
from bench_data.types import LoadIssue, Task, TaskLoadError

__all__ = [
    "BENCHMARK",
    "FORMAT",
    "SUBSET_FILES",
    "TOOL_SCHEMAS_FILE",
    "LoadResult",
    "TravelBenchTask",
    "canonical_subset",
    "check_tool_schemas",
    "load_tool_schemas",
    "load_travelbench_file",
    "subset_for_file",
]

BENCHMARK = "travelbench"


class TravelBenchTask(msgspec.Struct, omit_defaults=True, forbid_unknown_fields=False,
                      tag_field="kind", tag="travelbench"):
    """One line of TravelBench's single_turn.jsonl / multi_turn.jsonl / unsolve.jsonl."""

    trace_id: str
    time: str
    query: str
    context: str = ""
    intent: str = ""
    primary_intent: str = ""
    missing_tool: bool = False
    missing_info: bool = False
    no_actionable: bool = False
    user_profile: str | None = None
    avg_tool_calls: float | None = None


SUBSET_FILES: dict[str, str] = {
    "single_turn": "single_turn.jsonl",
    "multi_turn": "multi_turn.jsonl",
    "unsolvable": "unsolve.jsonl",
}
SUBSET_ALIASES: dict[str, str] = {"unsolve": "unsolvable", "unsolved": "unsolvable"}
TOOL_SCHEMAS_FILE = "tool_schemas.json"


def canonical_subset(name: str) -> str:
    return SUBSET_ALIASES.get(name, name)


def subset_for_file(path: Path) -> str | None:
    """The subset a file name stands for (`unsolve.jsonl` -> "unsolvable"), or None."""
    stem = path.name.removesuffix(".jsonl")
    subset = canonical_subset(stem)
    return subset if subset in SUBSET_FILES else None


def check_travel_task(task: TravelBenchTask, subset: str) -> tuple[str, str] | None:
    """Checks beyond types: (field, message) for the first problem, or None."""
    if not task.trace_id.strip():
        return "trace_id", "must not be empty"
    try:
        datetime.fromisoformat(task.time.replace(" ", "T"))
    except ValueError:
        return "time", f"not an ISO date-time like '2025-10-24 10:00': {task.time!r}"
    if not task.query.strip():
        return "query", "must not be empty"
    if subset == "multi_turn" and not (task.user_profile or "").strip():
        return "user_profile", "required for multi_turn tasks (the user simulator's persona)"
    return None


def load_travelbench_file(
    path: Path | str,
    subset: str | None = None,
    *,
    skip_bad: bool = False,
    limit: int | None = None,
    benchmark: str = BENCHMARK,
) -> LoadResult:
    """Load one TravelBench-shaped JSONL file.

    subset defaults to the one the file name stands for; a file with another name is read as
    "multi_turn" when its first good record has a user_profile, else "single_turn".
    With skip_bad=False any issue raises TaskLoadError listing all of them; with skip_bad=True
    the good tasks are returned next to the issues. limit keeps the first N good tasks.
    """
    path = Path(path)
    where = str(path)
    subset = canonical_subset(subset) if subset else subset_for_file(path)
    tasks: list[Task] = []
    issues: list[LoadIssue] = []
    first_line: dict[str, int] = {}
    for lineno, item in iter_jsonl(path, TravelBenchTask):
        if isinstance(item, LoadIssue):
            issues.append(item)
            continue
        if subset is None:
            subset = "multi_turn" if item.user_profile else "single_turn"
        problem = check_travel_task(item, subset)
        if problem is not None:
            issues.append(LoadIssue(where, lineno, problem[0], problem[1]))
            continue
        dup = first_occurrence(first_line, item.trace_id, where, lineno, "trace_id")
        if dup is not None:
            issues.append(dup)
            continue
        tasks.append(
            Task(benchmark=benchmark, subset=subset, task_id=item.trace_id,
                 source=f"{where}:{lineno}", payload=item)
        )
        if limit is not None and len(tasks) >= limit:
            break
    if issues and not skip_bad:
        raise TaskLoadError(issues)
    return LoadResult(tasks=tasks, issues=issues)


def _parts(root: Path) -> list[tuple[str, Path]]:
    return [(s, root / f) for s, f in SUBSET_FILES.items() if (root / f).is_file()]


def _file_subset(path: Path) -> str | None:
    """Any .jsonl file (the subset from its name, else decided by its records)."""
    if path.name == TOOL_SCHEMAS_FILE or path.suffix != ".jsonl":
        return None
    return subset_for_file(path) or ""


def _tool_schemas(root: Path) -> Path | None:
    path = root / TOOL_SCHEMAS_FILE
    return path if path.is_file() else None


FORMAT = DataFormat(
    benchmark=BENCHMARK, load_file=load_travelbench_file, find_parts=_parts,
    file_subset=_file_subset, subsets=tuple(SUBSET_FILES), canonical_subset=canonical_subset,
    tool_schemas=_tool_schemas,
    sample=SAMPLE_DIR,
    license="Apache-2.0 (written for agentsweep)",
)
