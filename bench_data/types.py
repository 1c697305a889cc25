"""What a task is: the common envelope `Task`, and the benchmarks' typed payloads.

Loaders in this package turn benchmark files into `Task` values. A task's benchmark-specific
part is its `payload`: a msgspec Struct tagged with the benchmark's name (`kind`), one member
of the tagged union `TaskPayload` for the built-in benchmarks, or a plugin benchmark's own
tagged Struct. A benchmark's code reads it with `task.payload_as(TheType)`; the generic layers
never look inside. `rubrics` (atomic rubric strings of rubric-judged benchmarks such as
VitaBench) and `instructions` are generic fields; nothing downstream parses raw dicts.
"""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec


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


class GroupTravelTask(TravelBenchTask, tag="grouptravelbench"):
    """One line of GroupTravelBench's test.jsonl: a TravelBench-shaped task (query, time,
    context; `trace_id` is the task id) plus the group (its members' preferences, the chat
    so far, metadata and difficulty)."""

    user_preferences: dict[str, Any] = msgspec.field(default_factory=dict)
    initial_messages: list[dict[str, Any]] = msgspec.field(default_factory=list)
    metadata: dict[str, Any] = msgspec.field(default_factory=dict)
    difficulty_score: float | None = None
    difficulty_type: str = ""


TaskPayload = TravelBenchTask | GroupTravelTask
"""The built-in benchmarks' payloads, tagged by `kind` (the benchmark's name)."""

P = TypeVar("P")


class PayloadError(TypeError, ValueError):
    """A task's payload is not of the type the code handling it needs."""


class Task(msgspec.Struct, omit_defaults=True, frozen=True):
    """The common envelope the scheduler works with.

    task_id is unique within (benchmark, subset). `source` names the file and line the task
    came from, for error messages and manifests. `payload` is the benchmark's typed task (a
    tagged msgspec Struct, e.g. `TravelBenchTask`); `rubrics` the atomic rubric strings of
    rubric-judged benchmarks; `instructions` the user's instructions as text, where the
    benchmark has them; `extra` keeps fields the loaders did not model (never used on the hot
    path).
    """

    benchmark: str
    subset: str
    task_id: str
    source: str = ""
    payload: msgspec.Struct | None = None
    rubrics: list[str] = msgspec.field(default_factory=list)
    instructions: str = ""
    extra: dict[str, Any] = msgspec.field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.benchmark}/{self.subset}/{self.task_id}"

    def payload_as(self, kind: type[P]) -> P:
        """The payload as `kind`; PayloadError (a ValueError) naming the task and its source
        when it is not."""
        if not isinstance(self.payload, kind):
            got = type(self.payload).__name__ if self.payload is not None else "no payload"
            raise PayloadError(f"task {self.key} (from {self.source or 'unknown source'}) has "
                             f"{got}, not the {kind.__name__} this code needs")
        return self.payload

    @property
    def travel(self) -> TravelBenchTask | None:
        """Deprecated: the payload when it is TravelBench-shaped (use `payload_as`)."""
        return self.payload if isinstance(self.payload, TravelBenchTask) else None


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
