"""VitaBench loader: `<domain>/tasks_en.json` (a JSON array of tasks) -> `Task`s.

Each task becomes Task(benchmark="vitabench", subset=<domain>, task_id=id) with
- `instructions`: the user's instruction text followed by a rendered user profile (what the
  user simulator plays),
- `rubrics`: what the sliding-window judge scores by default: the task's
  `evaluation_criteria.state_rubrics` (all expected states, exact-string de-duplicated in
  first-seen order; the `overall_rubrics` when a task has none). In the Chinese originals the
  overall list is the same set as the state lists, so either is the intended set; the English
  files translate the two separately, and the reference code's union of both (`union`) keeps
  both wordings of most rubrics (delivery: 931 rubrics against 735 state rubrics). All three
  lists are in `extra["rubric_sets"]` (`state`, `overall`, `union`) for `judge.rubric_set`
  (docs/vitabench.md, "Which rubrics are judged"),
- `extra`: the per-task environment database and the rest of the record, kept verbatim.

The subset is the domain folder's name ("delivery", "instore"); the record's own `domain`
string is not consistent in the release ("instore", "in-store", "in-store consumption") and
is kept in `extra["domain"]`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from bench_data.decoding import convert_element, first_occurrence, iter_json_array
from bench_data.formats import DataFormat, LoadResult
from bench_data.types import LoadIssue, Task, TaskLoadError

BENCHMARK = "vitabench"
TASK_FILE = "tasks_en.json"
DOMAIN_ALIASES: dict[str, str] = {
    "in-store": "instore",
    "in-store consumption": "instore",
    "in_store": "instore",
}


class VitaCriteria(msgspec.Struct, forbid_unknown_fields=False):
    overall_rubrics: list[str]
    state_rubrics: list[str] = msgspec.field(default_factory=list)
    expected_states: list[Any] = msgspec.field(default_factory=list)


class VitaScenario(msgspec.Struct, forbid_unknown_fields=False):
    user_profile: dict[str, Any] = msgspec.field(default_factory=dict)


class VitaTaskRecord(msgspec.Struct, forbid_unknown_fields=False):
    """One element of VitaBench's tasks_en.json (fields the loader reads)."""

    id: str
    instructions: str
    evaluation_criteria: VitaCriteria
    environment: dict[str, Any]
    domain: str = ""
    user_scenario: VitaScenario = msgspec.field(default_factory=VitaScenario)
    message_history: list[Any] = msgspec.field(default_factory=list)


def canonical_domain(name: str) -> str:
    return DOMAIN_ALIASES.get(name, name)


def render_instructions(record: VitaTaskRecord) -> str:
    """The user simulator's brief: the instruction text, then the persona as a bullet list."""
    text = record.instructions.strip()
    profile = record.user_scenario.user_profile
    if profile:
        lines = [f"- {key}: {value}" for key, value in profile.items() if value not in ("", None)]
        text = f"{text}\n\nYour profile:\n" + "\n".join(lines)
    return text


def judge_rubrics(state: list[str], overall: list[str]) -> list[str]:
    """State rubrics then overall rubrics, stripped, blanks dropped, exact-string
    de-duplicated in first-seen order (the reference code's list)."""
    seen: dict[str, None] = {}
    for rubric in (*state, *overall):
        text = rubric.strip()
        if text:
            seen.setdefault(text, None)
    return list(seen)


def state_rubrics(criteria: VitaCriteria) -> tuple[list[str], str | None]:
    """Every expected state's `state_rubrics`, in order (plus a top-level `state_rubrics`,
    which some hand-made files use), and the field path of the first malformed list."""
    out = list(criteria.state_rubrics)
    for i, state in enumerate(criteria.expected_states):
        rubrics = state.get("state_rubrics", []) if isinstance(state, dict) else []
        if not isinstance(rubrics, list) or not all(isinstance(r, str) for r in rubrics):
            return out, f"expected_states[{i}].state_rubrics"
        out.extend(rubrics)
    return out, None


def rubric_sets(state: list[str], overall: list[str]) -> dict[str, list[str]]:
    """The lists `judge.rubric_set` chooses from: `state` (the default; `overall` when a task
    has no state rubrics), `overall` (`state` when it has no overall rubrics) and `union`."""
    own_state, own_overall = judge_rubrics(state, []), judge_rubrics([], overall)
    return {"state": own_state or own_overall, "overall": own_overall or own_state,
            "union": judge_rubrics(state, overall)}


def _subset_for(path: Path, record: VitaTaskRecord, subset: str | None) -> str:
    if subset:
        return canonical_domain(subset)
    if path.name == TASK_FILE and path.parent.name:
        return canonical_domain(path.parent.name)
    return canonical_domain(record.domain) or "default"


def load_vitabench_file(
    path: Path | str,
    subset: str | None = None,
    *,
    skip_bad: bool = False,
    limit: int | None = None,
) -> LoadResult:
    """Load one VitaBench task file. Same error contract as the TravelBench loader."""
    path = Path(path)
    where = str(path)
    tasks: list[Task] = []
    issues: list[LoadIssue] = []
    first_line: dict[str, int] = {}
    for index, (line, obj) in enumerate(iter_json_array(path)):
        if isinstance(obj, LoadIssue):
            issues.append(obj)
            continue
        record = convert_element(where, line, obj, VitaTaskRecord, prefix=f"[{index}]")
        if isinstance(record, LoadIssue):
            issues.append(record)
            continue
        criteria = record.evaluation_criteria
        state, bad = state_rubrics(criteria)
        if bad is not None:
            issues.append(LoadIssue(where, line, f"[{index}].evaluation_criteria.{bad}",
                                    "must be a list of strings"))
            continue
        sets = rubric_sets(state, criteria.overall_rubrics)
        rubrics = sets["state"]
        if not record.id.strip():
            issues.append(LoadIssue(where, line, f"[{index}].id", "must not be empty"))
            continue
        if not rubrics:
            issues.append(LoadIssue(where, line, f"[{index}].evaluation_criteria.overall_rubrics",
                                    "no rubric to judge the task by"))
            continue
        dup = first_occurrence(first_line, record.id, where, line, f"[{index}].id")
        if dup is not None:
            issues.append(dup)
            continue
        extra: dict[str, Any] = {
            "domain": record.domain,
            "time": record.environment.get("time", ""),
            "environment": record.environment,
            "user_profile": record.user_scenario.user_profile,
            "expected_states": criteria.expected_states,
            "state_rubrics": state,            # top-level and every expected state's
            "overall_rubrics": list(criteria.overall_rubrics),
            "rubric_sets": sets,
            "message_history": record.message_history,
            "instruction_text": record.instructions,
        }
        tasks.append(
            Task(benchmark=BENCHMARK, subset=_subset_for(path, record, subset),
                 task_id=record.id, source=f"{where}:{line}", rubrics=rubrics,
                 instructions=render_instructions(record), extra=extra)
        )
        if limit is not None and len(tasks) >= limit:
            break
    if issues and not skip_bad:
        raise TaskLoadError(issues)
    return LoadResult(tasks=tasks, issues=issues)


def _parts(root: Path) -> list[tuple[str, Path]]:
    files = sorted(root.glob(f"*/{TASK_FILE}"))
    if (root / TASK_FILE).is_file():
        files.insert(0, root / TASK_FILE)
    return [(canonical_domain(p.parent.name), p) for p in files]


def _file_subset(path: Path) -> str | None:
    """A .json task file: the domain folder's name for tasks_en.json, else the file's stem."""
    if path.suffix != ".json" or path.name.endswith("tool_schemas.json"):
        return None
    return canonical_domain(path.parent.name) if path.name == TASK_FILE else path.stem


FORMAT = DataFormat(benchmark=BENCHMARK, load_file=load_vitabench_file, find_parts=_parts,
                    file_subset=_file_subset, canonical_subset=canonical_domain)
