"""What the viewer's index reads of each line of a run's files (`index.RunIndex`): a few fields
of a judgement, a failure and a journaled response, decoded without importing the records'
modules (msgspec skips the rest of each line)."""

from __future__ import annotations

import msgspec


class Unit(msgspec.Struct):
    """A record's unit (evaluator.records.UnitId): the records' modules are imported only to
    index, not to open a run whose index is saved."""

    task: str
    trial: int
    run: str = ""
    seed: int = 0

    @property
    def key(self) -> str:
        return f"{self.task}#{self.trial}"


class JudgementLine(msgspec.Struct):
    unit: Unit
    trajectory_hash: str = ""
    kind: str = ""
    judge_model: str = ""
    score: float | None = None
    error: str | None = None
    created_at: float = 0.0


class Failure(msgspec.Struct):
    unit: Unit
    kind: str = ""
    at: float = 0.0


class Usage(msgspec.Struct):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class Response(msgspec.Struct):
    usage: Usage = msgspec.field(default_factory=Usage)


class Journaled(msgspec.Struct):
    """A line of journal.jsonl (evaluator/run/journal.py): what the list needs of it."""

    u: str
    i: int = 0
    r: str = ""
    resp: Response = msgspec.field(default_factory=Response)
