"""What a task is: the common envelope `Task`, and how a load reports bad records.

Each benchmark's loader (`evaluator/benchmarks/<name>/data.py`, or a plugin's) turns its files
into `Task` values. A task's benchmark-specific part is its `payload`: a msgspec Struct tagged
with the benchmark's name (`kind`), defined in the benchmark's own package (e.g. TravelBench's
`TravelBenchTask`, in its `data.py`). A benchmark's code reads it with
`task.payload_as(TheType)`; the generic layers never look inside. `rubrics` (atomic rubric
strings of rubric-judged benchmarks such as VitaBench) and `instructions` are generic fields;
nothing downstream parses raw dicts.
"""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

P = TypeVar("P")


class PayloadError(TypeError, ValueError):
    """A task's payload is not of the type the code handling it needs."""


class Task(msgspec.Struct, omit_defaults=True, frozen=True):
    """The common envelope the scheduler works with.

    task_id is unique within (benchmark, subset). `source` names the file and line the task
    came from, for error messages and manifests. `payload` is the benchmark's typed task (a
    tagged msgspec Struct defined by the benchmark); `rubrics` the atomic rubric strings of
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
