"""What a task is: one msgspec Struct per benchmark family, plus the common envelope.

Loaders in this package turn benchmark files into `Task` values. Protocols in `evaluator`
read `Task.travel` (TravelBench family) and `Task.rubrics` (rubric-judged benchmarks such as
VitaBench); nothing downstream parses raw dicts.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

Subset = Literal["single_turn", "multi_turn", "unsolvable"]


class TravelBenchTask(msgspec.Struct, omit_defaults=True, forbid_unknown_fields=False):
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


class Task(msgspec.Struct, omit_defaults=True, frozen=True):
    """The common envelope the scheduler works with.

    task_id is unique within (benchmark, subset). `source` names the file and line the task
    came from, for error messages and manifests. `travel` carries the TravelBench-shaped
    payload; `rubrics` the atomic rubric strings of rubric-judged benchmarks; `extra` keeps
    benchmark-specific fields the loaders did not model (never used on the hot path).
    """

    benchmark: str
    subset: str
    task_id: str
    source: str = ""
    travel: TravelBenchTask | None = None
    rubrics: list[str] = msgspec.field(default_factory=list)
    instructions: str = ""
    extra: dict[str, Any] = msgspec.field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.benchmark}/{self.subset}/{self.task_id}"


class LoadIssue(msgspec.Struct, frozen=True):
    """One bad record: file, 1-based line, the field (JSON path) and what is wrong."""

    path: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}"
        return f"{where}: field `{self.field}`: {self.message}" if self.field else f"{where}: {self.message}"


class TaskLoadError(ValueError):
    """Raised by strict loaders; carries every issue found, the first in the message."""

    def __init__(self, issues: list[LoadIssue]) -> None:
        more = f" (and {len(issues) - 1} more)" if len(issues) > 1 else ""
        super().__init__(f"{issues[0]}{more}")
        self.issues = issues
