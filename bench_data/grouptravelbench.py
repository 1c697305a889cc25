"""GroupTravelBench loader: JSON Lines of multi-user group-trip tasks -> `Task`s.

Task(benchmark="grouptravelbench", subset=<file stem without "_sample">, task_id=task_id).
`payload` is a `GroupTravelTask` (a TravelBench-shaped task plus the group); `instructions` is
the query; the group-specific fields (metadata, user_preferences, initial_messages,
difficulty) are also kept verbatim in `extra`. `agentsweep data check` also checks the
reference's POI table (`poi2category/all_poi_by_city.json` beside the tasks, or the file).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from bench_data.decoding import first_occurrence, iter_jsonl
from bench_data.formats import DataFormat, LoadResult, first_record_keys
from bench_data.types import GroupTravelTask, LoadIssue, Task, TaskLoadError

BENCHMARK = "grouptravelbench"


class GroupTravelRecord(msgspec.Struct, forbid_unknown_fields=False):
    """One line of GroupTravelBench's test.jsonl (fields the loader reads)."""

    task_id: str
    query: str
    time: str
    user_preferences: dict[str, Any]
    initial_messages: list[dict[str, Any]]
    context: str = ""
    metadata: dict[str, Any] = msgspec.field(default_factory=dict)
    difficulty_score: float | None = None
    difficulty_type: str = ""


def subset_for_file(path: Path) -> str:
    return path.name.removesuffix(".jsonl").removesuffix("_sample") or "test"


def load_grouptravel_file(
    path: Path | str,
    subset: str | None = None,
    *,
    skip_bad: bool = False,
    limit: int | None = None,
) -> LoadResult:
    """Load one GroupTravelBench JSONL file. Same error contract as the TravelBench loader."""
    path = Path(path)
    where = str(path)
    subset = subset or subset_for_file(path)
    tasks: list[Task] = []
    issues: list[LoadIssue] = []
    first_line: dict[str, int] = {}
    for lineno, item in iter_jsonl(path, GroupTravelRecord):
        if isinstance(item, LoadIssue):
            issues.append(item)
            continue
        if not item.task_id.strip():
            issues.append(LoadIssue(where, lineno, "task_id", "must not be empty"))
            continue
        if not item.user_preferences:
            issues.append(LoadIssue(where, lineno, "user_preferences", "no group member"))
            continue
        bad = _table_issue(item.user_preferences)
        if bad is not None:
            issues.append(LoadIssue(where, lineno, bad[0], bad[1]))
            continue
        dup = first_occurrence(first_line, item.task_id, where, lineno, "task_id")
        if dup is not None:
            issues.append(dup)
            continue
        payload = GroupTravelTask(
            trace_id=item.task_id, time=item.time, query=item.query, context=item.context,
            user_preferences=item.user_preferences, initial_messages=item.initial_messages,
            metadata=item.metadata, difficulty_score=item.difficulty_score,
            difficulty_type=item.difficulty_type)
        extra: dict[str, Any] = {
            "metadata": item.metadata,
            "user_preferences": item.user_preferences,
            "initial_messages": item.initial_messages,
            "difficulty_score": item.difficulty_score,
            "difficulty_type": item.difficulty_type,
        }
        tasks.append(Task(benchmark=BENCHMARK, subset=subset, task_id=item.task_id,
                          source=f"{where}:{lineno}", payload=payload,
                          instructions=item.query, extra=extra))
        if limit is not None and len(tasks) >= limit:
            break
    if issues and not skip_bad:
        raise TaskLoadError(issues)
    return LoadResult(tasks=tasks, issues=issues)


def _table_issue(user_preferences: dict[str, Any]) -> tuple[str, str] | None:
    """(field, problem) when a member's preference table does not have the shape the
    scorers read (the typed model of the benchmark package), else None."""
    # the benchmark package owns the typed tables; imported here, late, to validate with them
    from evaluator.benchmarks.grouptravelbench.preferences import (
        PreferenceTableError,
        parse_group,
    )

    try:
        parse_group(user_preferences)
    except PreferenceTableError as exc:
        field, _, problem = str(exc).partition(": ")
        return field, problem or str(exc)
    return None


def is_group_file(path: Path) -> bool:
    """A JSON Lines file whose records have a task_id and the group's preferences."""
    return path.suffix == ".jsonl" and {"task_id", "user_preferences"} <= first_record_keys(path)


def _parts(root: Path) -> list[tuple[str, Path]]:
    return [(subset_for_file(p), p) for p in sorted(root.glob("*.jsonl")) if is_group_file(p)]


def _file_subset(path: Path) -> str | None:
    return subset_for_file(path) if is_group_file(path) else None


BUNDLED_TOOLS = Path(__file__).with_name("grouptravelbench_tools.json")
"""The 10 tools of the seed's appendix B.1 in OpenAI format (the release ships its tools as
code, so the project keeps their schemas as data)."""


def _tool_schemas(root: Path) -> Path:
    """A `tools.json` next to the task files, else the bundled schemas."""
    local = root / "tools.json"
    return local if local.is_file() else BUNDLED_TOOLS


def _aux_check(path: Path) -> tuple[str, list[LoadIssue]] | None:
    """The reference's POI table (`poi2category/all_poi_by_city.json`), given as the file or
    found beside the task files of a directory, checked (the benchmark package's checker)."""
    from evaluator.benchmarks.grouptravelbench.poi_file import beside, check_poi_file, is_poi_file

    if path.is_file():
        if not is_poi_file(path):
            return None
        target = path
    else:
        target = beside(path / "tasks.jsonl")
        if not target.is_file():
            return None
    data, issues = check_poi_file(target)
    places = sum(len(v) for v in data.values() if isinstance(v, list)) if data else 0
    return f"POI table {target}: {places} places in {len(data or {})} cities", issues


FORMAT = DataFormat(benchmark=BENCHMARK, load_file=load_grouptravel_file, find_parts=_parts,
                    file_subset=_file_subset, tool_schemas=_tool_schemas, aux_check=_aux_check)
