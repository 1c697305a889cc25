"""TravelBench loaders: the three task subsets (JSON Lines) and the agent's tool schemas.

File name -> subset: single_turn.jsonl -> "single_turn", multi_turn.jsonl -> "multi_turn",
unsolve.jsonl -> "unsolvable". Every line is decoded with msgspec into `TravelBenchTask` with
strict types and wrapped as a `Task`; problems are collected as `LoadIssue`s (file, line, field).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import msgspec

from bench_data.decoding import convert_element, first_occurrence, iter_json_array, iter_jsonl
from bench_data.types import LoadIssue, Task, TaskLoadError, TravelBenchTask

BENCHMARK = "travelbench"
SUBSET_FILES: dict[str, str] = {
    "single_turn": "single_turn.jsonl",
    "multi_turn": "multi_turn.jsonl",
    "unsolvable": "unsolve.jsonl",
}
SUBSET_ALIASES: dict[str, str] = {"unsolve": "unsolvable", "unsolved": "unsolvable"}
TOOL_SCHEMAS_FILE = "tool_schemas.json"


class LoadResult(msgspec.Struct):
    """What one file gave: the good tasks in file order, and the issues found."""

    tasks: list[Task]
    issues: list[LoadIssue]


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
                 source=f"{where}:{lineno}", travel=item)
        )
        if limit is not None and len(tasks) >= limit:
            break
    if issues and not skip_bad:
        raise TaskLoadError(issues)
    return LoadResult(tasks=tasks, issues=issues)


# ---- tool schemas -------------------------------------------------------------------------


class _FunctionSpec(msgspec.Struct, forbid_unknown_fields=False):
    name: str
    parameters: dict[str, Any]
    description: str = ""


class _ToolSpec(msgspec.Struct, forbid_unknown_fields=False):
    type: str
    function: _FunctionSpec


def check_tool_schemas(path: Path | str) -> tuple[list[dict[str, Any]], list[LoadIssue]]:
    """Read an OpenAI-function-format tool list; return (tools in file order, issues)."""
    path = Path(path)
    where = str(path)
    tools: list[dict[str, Any]] = []
    issues: list[LoadIssue] = []
    names: dict[str, int] = {}
    for index, (line, item) in enumerate(iter_json_array(path)):
        if isinstance(item, LoadIssue):
            issues.append(item)
            continue
        spec = convert_element(where, line, item, _ToolSpec, prefix=f"[{index}]")
        if isinstance(spec, LoadIssue):
            issues.append(spec)
            continue
        field = f"[{index}]"
        if spec.type != "function":
            issues.append(LoadIssue(where, line, f"{field}.type", "must be 'function'"))
        elif spec.function.parameters.get("type") != "object":
            issues.append(LoadIssue(where, line, f"{field}.function.parameters.type",
                                    "must be 'object'"))
        elif (name := spec.function.name) in names:
            issues.append(LoadIssue(where, line, f"{field}.function.name",
                                    f"duplicate tool {name!r} (first on line {names[name]})"))
        else:
            names[name] = line
            tools.append(item)
    return tools, issues


def load_tool_schemas(path: Path | str) -> list[dict[str, Any]]:
    """The tools from `tool_schemas.json`, in file order (the order the agent sees them).

    Raises TaskLoadError naming file, line and field if any entry is malformed.
    """
    tools, issues = check_tool_schemas(path)
    if issues:
        raise TaskLoadError(issues)
    return tools
