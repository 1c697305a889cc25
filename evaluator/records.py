"""What a finished episode and a judgement look like on disk.

One `EpisodeRecord` per finished episode is appended (one msgpack/JSON line) to the run's
episodes file by the single result writer. Judges read these records; reports read both.
"""

from __future__ import annotations

from typing import Any

import msgspec

from backends.types import ChatMessage, Usage


class UnitId(msgspec.Struct, frozen=True, omit_defaults=True):
    """One work unit: (run, task, trial, seed). The seed is derived by hashing (see scheduler)."""

    run: str
    task: str      # Task.key: "benchmark/subset/task_id"
    trial: int
    seed: int

    @property
    def key(self) -> str:
        return f"{self.task}#{self.trial}"


class ToolCallRecord(msgspec.Struct, omit_defaults=True):
    """One tool call the agent made and what the sandbox answered."""

    call_id: str
    name: str
    arguments: str                  # raw JSON text as the model wrote it
    valid: bool                     # passed schema validation
    source: str                     # ToolOutcome.source: hit | simulated | overlay | live | error
    content: str                    # what the agent saw
    error_category: str | None = None
    latency_s: float = 0.0
    step: int = 0                   # index of the agent call that issued it


class ModelCall(msgspec.Struct, omit_defaults=True):
    """One model call of an episode (agent or user simulator), for the viewer's timeline:
    `start` seconds after the episode started, `seconds` it took (admission wait included;
    about 0 when answered from the response journal), its token usage."""

    role: str
    start: float
    seconds: float
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0


class ReplayInfo(msgspec.Struct, omit_defaults=True):
    """How a resumed episode used the run's response journal (evaluator/run/journal.py).

    `journaled`: the unit's responses found in the journal; `calls`: how many of them answered
    a request again (`by_role`: per role) instead of the model; `mismatch_at`: set when a
    request differed from the journaled one: the journal entry from which the episode went on
    with live calls.
    """

    calls: int = 0
    journaled: int = 0
    by_role: dict[str, int] = msgspec.field(default_factory=dict)
    mismatch_at: int | None = None


class EpisodeRecord(msgspec.Struct, omit_defaults=True):
    """A finished episode (trajectory) with everything needed to judge and report it.

    `messages` is the agent's view of the conversation (system, user, assistant with tool
    calls, tool results). `user_messages` is the user simulator's own view in multi-turn.
    `termination`: how the episode ended: "answer", "max_steps", "context_overflow",
    "agent_error", or a reason of the benchmark's protocol (TravelBench: "user_finished",
    "max_turns", its tag reason). `usage` maps role -> summed Usage.
    `timings` maps stage -> seconds (agent, user, tool, queue, total).
    `replay`: set by the run when a resumed unit had journaled responses (None otherwise).
    `calls`: each model call's timing and tokens, in order (not in the trajectory hash).
    """

    unit: UnitId
    benchmark: str
    subset: str
    task_id: str
    messages: list[ChatMessage]
    tool_calls: list[ToolCallRecord] = msgspec.field(default_factory=list)
    user_messages: list[ChatMessage] = msgspec.field(default_factory=list)
    termination: str = "answer"
    final_answer: str = ""
    n_agent_calls: int = 0
    n_user_turns: int = 0
    usage: dict[str, Usage] = msgspec.field(default_factory=dict)
    timings: dict[str, float] = msgspec.field(default_factory=dict)
    started_at: float = 0.0
    finished_at: float = 0.0
    infra_retries: int = 0
    extra: dict[str, Any] = msgspec.field(default_factory=dict)
    replay: ReplayInfo | None = None
    calls: list[ModelCall] = msgspec.field(default_factory=list)

    @property
    def n_tool_calls(self) -> int:
        return len(self.tool_calls)

    @property
    def n_tool_errors(self) -> int:
        return sum(1 for c in self.tool_calls if c.source == "error")


class Judgement(msgspec.Struct, omit_defaults=True):
    """One judge verdict on one trajectory, keyed by (trajectory hash, judge model, prompt version).

    `kind`: the judge kind of the benchmark (`JudgeSpec.kind`), e.g. TravelBench's
    "travel_rubric" and "meta", VitaBench's "sliding_window".
    `scores`: dimension -> 1..5 rating (travel rubric) or rubric -> 0/1 (sliding window).
    `score`: the instance score in [0, 1] after the kind's own formula; None on judge error.
    `warnings`: problems that did not stop the judgement (e.g. a sliding window that could
    not be judged and kept the states).
    """

    unit: UnitId
    trajectory_hash: str
    judge_model: str
    prompt_version: str
    kind: str
    score: float | None
    scores: dict[str, float] = msgspec.field(default_factory=dict)
    reasoning: dict[str, str] = msgspec.field(default_factory=dict)
    error: str | None = None
    attempts: int = 1
    raw: str = ""
    created_at: float = 0.0
    warnings: list[str] = msgspec.field(default_factory=list)


class UnitScore(msgspec.Struct, omit_defaults=True):
    """The scored outcome of one unit, computed by `evaluator.scoring` from episodes + judgements.

    `score` is the instance score in [0, 1], as the benchmark scores it (TravelBench: the
    calibrated, tool-penalized rubric score, or 0/1 from its rule check; sliding window: 1 if
    all rubrics are satisfied). None when the unit
    could not be scored (judge error). `success` applies the explicit threshold setting.
    `dims` holds per-dimension values (rubric dimensions 1..5, or rubric accuracies).
    `labels`: benchmark-defined labels of the unit (e.g. a task's difficulty) that its report
    section groups by.
    """

    unit: UnitId
    benchmark: str
    subset: str
    task_id: str
    score: float | None
    success: bool | None = None
    dims: dict[str, float] = msgspec.field(default_factory=dict)
    tool_calls: int = 0
    tool_errors: int = 0
    error_categories: dict[str, int] = msgspec.field(default_factory=dict)
    judge_error: str | None = None
    labels: dict[str, str] = msgspec.field(default_factory=dict)
