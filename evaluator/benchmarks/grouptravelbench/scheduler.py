"""Who speaks next in the group chat: the scheduler's pure decision and transition.

After the broadcast of the opening statements the agent gives an opening summary. Then, in
priority order, each step is:
1. an @-mention: if the last outward message is the agent's and @-mentions a role, that role
   answers (a *preempt*; it uses no polling slot);
2. a summary: at a round boundary, every `kappa` rounds, the agent summarises the collected
   preferences and the conflicts (an internal preference-table update, then a message);
   the summary itself closes a round so the checkpoint fires once;
3. polling: round-robin over the users then the agent; a polled user with no new outward
   message since their last one is skipped without a call. A round is one pass over the
   polling order; a round is also force-closed when it reaches `cap_factor` x (users + 1)
   speaking events (runaway preempt chains).
When `max_rounds` rounds are done without a plan the agent must give its final plan.

`next_turn(state, config, history)` decides; `advance(state, config, turn, ...)` returns the
state after the turn was taken. Both are pure; the protocol owns the models and the chat.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .chat import AGENT, detect_mention, has_news_since_last_spoke, last_outward

MAX_MENTION_PASS_RETRIES = 2
"""An @-mentioned user who answers `[pass]` is asked again this many times."""

EVENTS_CAP_FACTOR = 5

ROUND_SETTINGS: dict[str, tuple[int, int]] = {
    "easy": (15, 3),
    "medium": (20, 4),
    "hard": (25, 5),
}
"""difficulty_type -> (max_rounds, kappa), as the reference runs them."""
DEFAULT_ROUNDS = (15, 3)


@dataclass(frozen=True)
class ScheduleConfig:
    users: tuple[str, ...]
    kappa: int = 3
    max_rounds: int = 15
    cap_factor: int = EVENTS_CAP_FACTOR

    def __post_init__(self) -> None:
        if not self.users:
            raise ValueError("a group chat needs at least one user")
        if AGENT in self.users:
            raise ValueError(f"{AGENT!r} is the agent's role name, not a user name")
        if self.kappa < 1 or self.max_rounds < 1:
            raise ValueError(f"kappa and max_rounds must be >= 1 (got {self.kappa}, "
                             f"{self.max_rounds})")

    @property
    def polling_order(self) -> tuple[str, ...]:
        return (*self.users, AGENT)

    @property
    def max_events_per_round(self) -> int:
        return self.cap_factor * len(self.polling_order)

    @classmethod
    def for_difficulty(cls, users: Sequence[str], difficulty: str) -> ScheduleConfig:
        """The reference's limits for a task's difficulty_type (unknown: 15 rounds, kappa 3)."""
        max_rounds, kappa = ROUND_SETTINGS.get(difficulty, DEFAULT_ROUNDS)
        return cls(tuple(users), kappa=kappa, max_rounds=max_rounds)


@dataclass(frozen=True)
class SchedulerState:
    """Counters of one chat. `rounds`: closed rounds (drives kappa and max_rounds);
    `events`: speaking events (user passes, preempts, summaries and the final plan included);
    `consumed`: (message index, role) mentions already answered by a pass-exhausted user."""

    started: bool = False
    finished: bool = False
    polling_index: int = 0
    rounds: int = 0
    events: int = 0
    events_in_round: int = 0
    consumed: frozenset[tuple[int, str]] = frozenset()


@dataclass(frozen=True)
class Turn:
    """The next step. kind: "opening_summary", "mention", "summary", "poll", "skip" (a polled
    user with nothing new; no call), "final_plan" (rounds exhausted) or "stop".
    `mentioned`: the speaker was @-mentioned and must answer (no `[pass]`, no re-@);
    `source_index`: the history index of the mentioning message."""

    kind: str
    speaker: str = AGENT
    mentioned: bool = False
    source_index: int = -1

    @property
    def calls_model(self) -> bool:
        return self.kind not in ("skip", "stop")


def next_turn(state: SchedulerState, config: ScheduleConfig,
              history: Sequence[Mapping[str, Any]]) -> Turn:
    """Decide the next step from the counters and the chat so far."""
    if state.finished:
        return Turn("stop")
    if not state.started:
        return Turn("opening_summary")
    if state.rounds >= config.max_rounds:
        return Turn("final_plan")
    last = last_outward(history)
    if last is not None and last[1].get("role") == AGENT:
        index, entry = last
        target = detect_mention(entry.get("content") or "", config.polling_order)
        if target is not None and (index, target) not in state.consumed:
            return Turn("mention", target, mentioned=True, source_index=index)
    if state.polling_index == 0 and state.rounds > 0 and state.rounds % config.kappa == 0:
        return Turn("summary")
    speaker = config.polling_order[state.polling_index]
    if speaker != AGENT and not has_news_since_last_spoke(speaker, history):
        return Turn("skip", speaker)
    return Turn("poll", speaker)


def _close_round(state: SchedulerState) -> SchedulerState:
    return replace(state, rounds=state.rounds + 1, events_in_round=0)


def advance(state: SchedulerState, config: ScheduleConfig, turn: Turn, *,
            pass_exhausted: bool = False, extra_summary: bool = False) -> SchedulerState:
    """The counters after `turn` was taken.

    pass_exhausted: a mentioned user still answered `[pass]` after the retries (the mention
    is then consumed so it cannot fire again). extra_summary: the agent's reply was a bare
    preference table, which is kept out of the chat, and the protocol ran one extra summary
    turn in its place (one more event)."""
    order = len(config.polling_order)
    if turn.kind == "stop":
        return state
    if turn.kind == "opening_summary":
        return replace(state, started=True, events=state.events + 1)
    if turn.kind == "final_plan":
        return replace(state, finished=True, events=state.events + 1)
    if turn.kind == "summary":
        return _close_round(replace(state, events=state.events + 1))
    if turn.kind == "skip":
        state = replace(state, polling_index=(state.polling_index + 1) % order)
        return _close_round(state) if state.polling_index == 0 else state
    if turn.kind not in ("mention", "poll"):
        raise ValueError(f"unknown turn kind {turn.kind!r}")
    state = replace(state, events=state.events + 1, events_in_round=state.events_in_round + 1)
    if turn.kind == "mention":
        if extra_summary:
            return replace(state, events=state.events + 1)
        if pass_exhausted:
            return replace(state, consumed=state.consumed | {(turn.source_index, turn.speaker)})
        if state.events_in_round >= config.max_events_per_round:
            return replace(_close_round(state), polling_index=0)
        return state
    state = replace(state, polling_index=(state.polling_index + 1) % order)
    if extra_summary:
        state = replace(state, events=state.events + 1)
        return _close_round(state) if state.polling_index == 0 else state
    if state.polling_index == 0:
        return _close_round(state)
    if state.events_in_round >= config.max_events_per_round:
        return replace(_close_round(state), polling_index=0)
    return state
