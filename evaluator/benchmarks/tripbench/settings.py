"""TRIP-Bench's settings: the `paper` profile and TRIP-Bench's own options.

`paper`: the seed's section 5.1 and figure 1: up to 15 user turns, up to 50 agent calls (tool
rounds) per user turn, the agent at temperature 0.7 (the paper's value for models without a
default), the user simulator at temperature 0.7 (DeepSeek-V3.2 in the paper; the model is the
run's choice). The paper states no output limit ("default settings"), so no role's
`max_tokens` is set (None: the server's own limit; the embedded CPU engine caps replies at
1,024 tokens, docs/serve.md). Before, the run's CPU-sampling defaults (agent 160, user 96
tokens) applied and cut a plan or a tool call short. Scoring is rule-based (no judge model).
`protocol.entry` is pinned to "" (the multi-turn protocol of the task's split), so a run that
picks one of table 5's other protocols through it lists that as a deviation.

`TripOptions`: TRIP-Bench's own settings, the run config's `[options]` table (checked, completed
with these defaults, which are the paper's; the paper profile names them, so a run that
changes one lists it as a deviation). Table 5's protocols can also be picked with
`protocol.entry` (docs/tripbench_tasks.md).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

RULES = "tripbench_rules"          # the rule judge's kind (part of every judgement key)
RULES_VERSION = "tripbench-rules-v1"


class TripOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """TRIP-Bench's options.

    protocol: "multi_turn" (the main results, table 2), "single_turn" (every final
        requirement in the first message, one answer) or "no_issue" (multi-turn without
        issue reporting): table 5's settings.
    tool_output: "text" (the paper's tool answers, lines such as "Showing 1-3 of 3 results."
        and "Train_id: ... | minimum price: 337.0") or "json" (one JSON object per answer).
    simulator_reply_chars: how much of each agent reply the user simulator sees (0 = all of
        it, as the paper's simulator sees the whole context).
    tool_runner: where tool calls run: "processes" (worker processes: other cores),
        "threads" (worker threads of the run's process), "inline" (on the event loop).
        Scores do not depend on it.
    tool_workers: how many threads or processes (1-64).
    """

    protocol: Literal["multi_turn", "single_turn", "no_issue"] = "multi_turn"
    tool_output: Literal["text", "json"] = "text"
    simulator_reply_chars: int = 0
    tool_runner: Literal["processes", "threads", "inline"] = "processes"
    tool_workers: int = 4

    def __post_init__(self) -> None:
        if self.simulator_reply_chars < 0:
            raise ValueError("simulator_reply_chars must be >= 0, got "
                             f"{self.simulator_reply_chars}")
        if not 1 <= self.tool_workers <= 64:
            raise ValueError(f"tool_workers must be 1 to 64, got {self.tool_workers}")


def options_of(holder: Any) -> TripOptions:
    """The run's TripOptions from what carries them (`ProtocolSettings.options`,
    `JudgeInput.options`, `ScoreContext.options`, a `[options]` mapping), else the defaults."""
    value = getattr(holder, "options", holder)
    if isinstance(value, TripOptions):
        return value
    if isinstance(value, dict) and value:
        return msgspec.convert(value, TripOptions)
    return TripOptions()


PAPER_OPTIONS = {k: v for k, v in msgspec.to_builtins(TripOptions()).items()
                 if k not in ("tool_runner", "tool_workers")}
"""The score-relevant options under the paper's values (where tool calls run changes no
score, so it is not a deviation)."""
PAPER: dict[str, Any] = {
    "protocol": {"max_turns": 15, "max_steps": 50, "entry": ""},
    "agent": {"sampling": {"temperature": 0.7, "max_tokens": None}},
    "user": {"sampling": {"temperature": 0.7, "max_tokens": None}},
    "options": PAPER_OPTIONS,
}

PROFILES = {"paper": PAPER}
