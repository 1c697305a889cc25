"""TRIP-Bench loader: a generated task set (one JSON Lines file, the world database next to it)
-> `Task`s.

The file the synthesiser writes (`evaluator/benchmarks/tripbench/synthesis/`) is
`tasks.jsonl`: its first line is the header `{"header": {"format": "tripbench-tasks",
"generator", "version", "seed", "size", "world", ...}}`, every other line one task
(`TripRecord`): the trip variants (`trips`: "A", and "B"/"M" for redirect and merge), the
preferences (one rubric version each), the dialogue graph (`turns`: per turn its events and
the active preference ids), the difficulty and hard set. Each task becomes
Task(benchmark="tripbench", subset=<difficulty>, task_id) with a `TripTask` payload,
`extra["world"]` (the world file, relative to the task file), `extra["split"]` and
`instructions` (the first turn's trip in words). The format's subsets are the evaluation
splits (`SPLITS`: easy, mid, hard, LIT, FIT, AIS, PMR), so `--subset LIT` picks a hard set
and `--limit N` takes N tasks of each split.

The paper's own release is not published. The one other shape accepted is the evaluation
package's flat task (`{"task_id", "origin", "stays", "start_date", "end_date",
"number_of_people", "rubrics", "difficulty"?, "world"?}`), read by `_from_flat` as a one-turn
dialogue; that function is the boundary for a future release layout. Bad records become
`LoadIssue`s naming file, line and field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from bench_data.decoding import first_occurrence, iter_jsonl, validation_issue
from bench_data.formats import DataFormat, LoadResult
from bench_data.types import LoadIssue, Task, TaskLoadError
from evaluator.benchmarks.tripbench.trip import TripMeta, TripStay

BENCHMARK = "tripbench"
FORMAT_NAME = "tripbench-tasks"
TASK_FILE = "tasks.jsonl"
WORLD_FILE = "world.sqlite"
DIFFICULTIES = ("easy", "mid", "hard")
HARD_SETS = ("LIT", "FIT", "AIS", "PMR")
# unit labels and violation dimensions of a scored unit (judging.py writes, report.py reads)
DIFFICULTY = "difficulty"
HARD_SET = "hard_set"
SPLIT = "split"
VIOL = "viol:"
SPLITS = ("easy", "mid", "hard", *HARD_SETS)
"""The evaluation splits, the loader's subsets (`--subset LIT`, `--limit N` = N of each split):
easy, mid, plain hard (no hard set; not in the paper's evaluation set) and the four hard sets.
A task's `subset` stays its difficulty (record keys, protocols); its split is `split_of`."""
PAPER_SPLITS = {"easy": 100, "mid": 100, "LIT": 50, "FIT": 50, "AIS": 50, "PMR": 50}
"""The paper's evaluation set (table 2): 400 tasks; its Overall pools them (the mean over the
400, i.e. these weights over the split means)."""


def split_of(difficulty: str, hard_set: str) -> str:
    """A task's evaluation split: its hard set, else its difficulty."""
    return hard_set or difficulty


def canonical_split(name: str) -> str:
    """A split as a user may write it ("lit", "Hard LIT", "hard-fit") -> its name."""
    words = name.strip().replace("-", " ").replace("_", " ").split()
    if words and words[0].lower() == "hard" and len(words) == 2:
        words = words[1:]
    key = " ".join(words)
    for split in SPLITS:
        if key.lower() == split.lower():
            return split
    return name
OPS = ("add", "change", "rollback", "delete", "redirect", "merge", "issue", "content_mod",
       "clarify", "explore")
"""Dialogue events; with the nine user behaviours of the paper's B.3: add = instruction
appending, change = modification, redirect = intent redirection, rollback/delete = deletion
or rollback, merge = plan comparison and integration, content_mod = local revision, issue =
error reporting, clarify = clarification, explore = exploratory inquiry."""


class Preference(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One version of one constraint chain: the rubric parameters (`{"type": ...}` as the
    evaluation's rubric table decodes them), how the user says it, and (AIS) a vague form."""

    id: str
    chain: str
    step: int
    family: str
    rubric: dict[str, Any]
    text: str
    vague: str = ""
    infeasible: bool = False
    scope: str = "all"   # PMR: "all" (both itineraries), "A" or "B"


class TurnEvent(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What the user does in a turn: `op` (see OPS), the preference it introduces (`pref`),
    the one it replaces or removes (`replaces`), the trip it switches to (`trip`)."""

    op: str
    pref: str = ""
    replaces: str = ""
    trip: str = ""
    note: str = ""


class TurnNode(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One user turn of the dialogue graph: its events and, after them, the trip in force and
    the active preference ids (what the final plan of this turn is judged against)."""

    turn: int
    trip: str
    events: list[TurnEvent]
    active: list[str]
    feasible: bool = True


class TripTask(msgspec.Struct, kw_only=True, omit_defaults=True, tag_field="kind",
               tag="tripbench"):
    """A TRIP-Bench task: trips, preferences, the dialogue graph and its labels."""

    task_id: str
    difficulty: str
    trips: dict[str, TripMeta]
    preferences: dict[str, Preference]
    turns: list[TurnNode]
    hard_set: str = ""
    world: str = WORLD_FILE
    behaviours: list[str] = msgspec.field(default_factory=list)
    style: str = ""
    solvability: dict[str, Any] = msgspec.field(default_factory=dict)

    def node(self, turn: int) -> TurnNode:
        """The node of user turn `turn` (1-based), the last one beyond the graph."""
        return self.turns[min(max(turn, 1), len(self.turns)) - 1]

    def active_rubrics(self, turn: int) -> list[dict[str, Any]]:
        return [self.preferences[p].rubric for p in self.node(turn).active]


class Header(msgspec.Struct, kw_only=True, omit_defaults=True, forbid_unknown_fields=False):
    format: str
    generator: str
    version: str
    seed: int
    size: str = ""
    world: str = WORLD_FILE
    tasks: int = 0


class _Line(msgspec.Struct, forbid_unknown_fields=False, omit_defaults=True):
    """Any line: the header, a generated task (has `turns`/`trips`) or a flat task."""

    header: Header | None = None
    task_id: str | None = None
    turns: Any = None
    trips: Any = None


class FlatTask(msgspec.Struct, kw_only=True, forbid_unknown_fields=False):
    """The evaluation package's flat task shape (one turn, every rubric active)."""

    task_id: str
    origin: str
    stays: list[TripStay]
    start_date: str
    end_date: str
    number_of_people: int
    rubrics: list[dict[str, Any]] = msgspec.field(default_factory=list)
    difficulty: str = "easy"
    world: str = WORLD_FILE


def _from_flat(flat: FlatTask) -> TripTask:
    prefs = {}
    for i, rubric in enumerate(flat.rubrics, start=1):
        pid = f"P{i}"
        prefs[pid] = Preference(id=pid, chain=f"c{i}", step=0, family="",
                                rubric=rubric, text=str(rubric))
    trip = TripMeta(origin=flat.origin, stays=flat.stays, start_date=flat.start_date,
                    end_date=flat.end_date, number_of_people=flat.number_of_people)
    node = TurnNode(turn=1, trip="A", events=[TurnEvent(op="add", pref=p) for p in prefs],
                    active=list(prefs))
    return TripTask(task_id=flat.task_id, difficulty=flat.difficulty, trips={"A": trip},
                    preferences=prefs, turns=[node], world=flat.world)


def _graph_issue(task: TripTask) -> tuple[str, str] | None:
    """(field, problem) when the task's graph does not hold together."""
    if task.difficulty not in DIFFICULTIES:
        return "difficulty", f"must be one of {', '.join(DIFFICULTIES)}, got {task.difficulty!r}"
    if task.hard_set and task.hard_set not in HARD_SETS:
        return "hard_set", f"must be one of {', '.join(HARD_SETS)}, got {task.hard_set!r}"
    if "A" not in task.trips:
        return "trips", "no trip 'A'"
    for key, trip in task.trips.items():
        if not trip.stays:
            return f"trips.{key}.stays", "no destination"
        if trip.number_of_people < 1:
            return f"trips.{key}.number_of_people", "must be >= 1"
        if trip.end_date < trip.start_date:
            return f"trips.{key}.end_date", "before start_date"
    for pid, pref in task.preferences.items():
        if pref.id != pid:
            return f"preferences.{pid}.id", f"is {pref.id!r}"
        if not isinstance(pref.rubric.get("type"), str):
            return f"preferences.{pid}.rubric.type", "missing rubric type"
    if not task.turns:
        return "turns", "no turn"
    for i, node in enumerate(task.turns):
        where = f"turns[{i}]"
        if node.turn != i + 1:
            return f"{where}.turn", f"expected {i + 1}, got {node.turn}"
        if node.trip not in task.trips:
            return f"{where}.trip", f"unknown trip {node.trip!r}"
        for pid in node.active:
            if pid not in task.preferences:
                return f"{where}.active", f"unknown preference {pid!r}"
        for j, event in enumerate(node.events):
            if event.op not in OPS:
                return f"{where}.events[{j}].op", f"unknown op {event.op!r}"
            for name in ("pref", "replaces"):
                ref = getattr(event, name)
                if ref and ref not in task.preferences:
                    return f"{where}.events[{j}].{name}", f"unknown preference {ref!r}"
    return None


def _rubric_issue(task: TripTask) -> tuple[str, str] | None:
    """(field, problem) when a preference's rubric is not one the evaluation can read."""
    for pid, pref in task.preferences.items():
        try:
            _decode_spec(pref.rubric)
        except (msgspec.ValidationError, TypeError, ValueError) as exc:
            return f"preferences.{pid}.rubric", str(exc).splitlines()[0]
    return None


def _instructions(task: TripTask) -> str:
    trip = task.trips["A"]
    stays = ", ".join(f"{s.city} ({s.nights} nights)" if s.nights else s.city
                      for s in trip.stays)
    return (f"{trip.number_of_people} traveller(s) from {trip.origin} to {stays}, "
            f"{trip.start_date} to {trip.end_date}")


def load_tripbench_file(path: Path | str, subset: str | None = None, *, skip_bad: bool = False,
                        limit: int | None = None) -> LoadResult:
    """Load one task file; `subset` keeps only that split (`SPLITS`; None = every task) and
    `limit` the first N of it."""
    path = Path(path)
    where = str(path)
    tasks: list[Task] = []
    issues: list[LoadIssue] = []
    first_line: dict[str, int] = {}
    task_decoder = msgspec.json.Decoder(TripTask)
    flat_decoder = msgspec.json.Decoder(FlatTask)
    raw_lines = _raw_lines(path)
    for lineno, item in iter_jsonl(path, _Line):
        if isinstance(item, LoadIssue):
            issues.append(item)
            continue
        if item.header is not None:
            if item.header.format != FORMAT_NAME:
                issues.append(LoadIssue(where, lineno, "header.format",
                                        f"expected {FORMAT_NAME!r}, got {item.header.format!r}"))
            continue
        raw = raw_lines.get(lineno, b"")
        try:
            if item.turns is not None or item.trips is not None:
                task = task_decoder.decode(raw)
            else:
                task = _from_flat(flat_decoder.decode(raw))
        except msgspec.ValidationError as exc:
            issues.append(validation_issue(where, lineno, exc))
            continue
        if not task.task_id.strip():
            issues.append(LoadIssue(where, lineno, "task_id", "must not be empty"))
            continue
        bad = _graph_issue(task) or _rubric_issue(task)
        if bad is not None:
            issues.append(LoadIssue(where, lineno, bad[0], bad[1]))
            continue
        dup = first_occurrence(first_line, task.task_id, where, lineno, "task_id")
        if dup is not None:
            issues.append(dup)
            continue
        if subset and split_of(task.difficulty, task.hard_set) != subset:
            continue
        extra: dict[str, Any] = {"world": task.world, "difficulty": task.difficulty,
                                 "hard_set": task.hard_set,
                                 "split": split_of(task.difficulty, task.hard_set)}
        tasks.append(Task(benchmark=BENCHMARK, subset=task.difficulty, task_id=task.task_id,
                          source=f"{where}:{lineno}", payload=task,
                          instructions=_instructions(task), extra=extra))
        if limit is not None and len(tasks) >= limit:
            break
    if issues and not skip_bad:
        raise TaskLoadError(issues)
    if subset and subset != SPLITS[0]:
        issues = []  # one file stands for every split: its issues are reported once
    return LoadResult(tasks=tasks, issues=issues)


def _raw_lines(path: Path) -> dict[int, bytes]:
    with path.open("rb") as fh:
        return {n: raw.rstrip(b"\r\n") for n, raw in enumerate(fh, start=1)}


def read_header(path: Path) -> Header | None:
    """The header of a task file, or None when its first line is not one."""
    try:
        with path.open("rb") as fh:
            for raw in fh:
                if raw.strip():
                    line = msgspec.json.decode(raw, type=_Line)
                    return line.header
    except (OSError, msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError,
            RecursionError):
        return None
    return None


def is_task_file(path: Path) -> bool:
    """A .jsonl file whose first line is a TRIP-Bench header or task."""
    if path.suffix != ".jsonl" or not path.is_file():
        return False
    if read_header(path) is not None:
        return True
    try:
        with path.open("rb") as fh:
            for raw in fh:
                if raw.strip():
                    obj = msgspec.json.decode(raw)
                    return isinstance(obj, dict) and "task_id" in obj and (
                        "turns" in obj and "trips" in obj
                        or {"origin", "stays", "number_of_people"} <= set(obj))
    except (OSError, msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return False
    return False


def _parts(root: Path) -> list[tuple[str, Path]]:
    files = [p for p in sorted(root.glob("*.jsonl")) if is_task_file(p)]
    return [(d, p) for p in files for d in SPLITS]


def _file_subset(path: Path) -> str | None:
    return "" if is_task_file(path) else None


def _tool_schemas(root: Path) -> Path | None:
    return None  # the 18 tools come with the environment (evaluator/benchmarks/tripbench)


FORMAT = DataFormat(benchmark=BENCHMARK, load_file=load_tripbench_file, find_parts=_parts,
                    file_subset=_file_subset, subsets=SPLITS, canonical_subset=canonical_split,
                    tool_schemas=_tool_schemas,
                    license="generated (agentsweep's TRIP-Bench synthesiser)")


def _decode_spec(raw: Any) -> Any:
    """The rubric checker's reading of a rubric (imported on first use: loading TRIP-Bench's
    data format costs a run of another benchmark nothing)."""
    from evaluator.benchmarks.tripbench.evaluation.rubrics import decode_spec

    return decode_spec(raw)
