"""TRIP-Bench's episode: the agent plans over the 18 tools while a user simulator walks the
task's dialogue graph (paper 3.4), for up to `max_turns` user turns (the paper: 15).

Each user turn n has its node in the graph: its events and the active preferences after
them. The simulator (`simulator.py`) is shown only what that node allows, and the whole
conversation before it; later turns' preferences are never in an earlier prompt, and the
simulator's conversation only grows. The simulator answers JSON (`instruction_ids`,
`user_query`); text that is not JSON is taken as the utterance, and an empty reply is replaced
by the notes in plain words (so a turn never loses its content).

The graph walked (`graph.py`): the task's for `multi_turn` (table 2), one turn with every final
requirement for `single_turn`, the dialogue without issue reporting for `no_issue` (table 5):
`TripOptions.protocol`, or the entry points `run_single_turn` / `run_no_issue`
(`protocol.entry = "evaluator.benchmarks.tripbench.protocol:run_single_turn"`). FIT: when the
agent's answer says a wish cannot be met while an infeasible wish is active, that wish's
rollback moves to the next user turn (else it comes at its scheduled turn).

The episode ends after the agent's answer to the graph's last turn ("completed"), after
`max_turns` user turns ("max_turns"), or on the loop's errors ("context_overflow",
"agent_error", "user_error"). The record keeps `extra["final_plan"]` (the latest reply with a
non-empty itinerary), `final_plan_turn`, `turn_reached`, `graph_turns`, `protocol`, FIT's
moved rollbacks (`rollbacks_moved`), the per-turn log (`turns`: the node's trip, events,
active ids and feasibility, revealed ids, the simulator's instruction ids, whether a plan
came, tool calls, the index of the agent's answer in `messages`) and `context_tokens_max`
(the largest prompt the agent was sent).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from backends.types import ChatMessage, ChatResponse, Usage
from bench_data.tripbench import TripTask
from evaluator.protocols.base import EpisodeContext, RoleClient
from evaluator.protocols.loop import Episode, EpisodeEnded
from evaluator.records import EpisodeRecord

from .evaluation import parse_plan
from .graph import LiveGraph, declares_infeasible, variant_task
from .settings import options_of
from .simulator import Simulator, parse_user, plain, prompt

__all__ = ["PROMPT_VERSION", "parse_user", "run_no_issue", "run_single_turn", "run_trip"]

PROMPT_VERSION = "tripbench-v3"
STEP_LIMIT_TEXT = "I could not finish planning within my step budget for this message."


class _Measured:
    """The agent's client, noting the largest prompt (in tokens) it was sent."""

    def __init__(self, inner: RoleClient, extra: dict[str, Any]) -> None:
        self.inner = inner
        self.role = inner.role
        self.model = inner.model
        self.extra = extra

    async def complete(self, messages: list[ChatMessage], **kwargs: Any) -> ChatResponse:
        response = await self.inner.complete(messages, **kwargs)
        usage: Usage = response.usage
        if usage.prompt_tokens > self.extra.get("context_tokens_max", 0):
            self.extra["context_tokens_max"] = usage.prompt_tokens
        return response


class TripEpisode:
    def __init__(self, ctx: EpisodeContext, variant: str | None = None) -> None:
        options = options_of(ctx.settings)
        self.variant = variant or options.protocol
        self.task = variant_task(ctx.task.payload_as(TripTask), self.variant)
        self.graph = LiveGraph(self.task)
        self.extra: dict[str, Any] = {"prompt_version": PROMPT_VERSION,
                                      "difficulty": self.task.difficulty,
                                      "hard_set": self.task.hard_set,
                                      "protocol": self.variant}
        self.ctx = dataclasses.replace(ctx, agent=_Measured(ctx.agent, self.extra))
        self.sim = Simulator(self.task, getattr(ctx.sandbox, "world", None),
                             options.simulator_reply_chars)
        self.turn_log: list[dict[str, Any]] = []
        self.plan_text = ""
        self.plan_turn = 0
        self.episode: Episode | None = None
        self.user_messages: list[ChatMessage] = [ChatMessage(role="system",
                                                             content=self.sim.system)]

    async def user_turn(self, n: int, reply: str) -> str:
        node = self.graph.node(n)
        previous = self.graph.node(n - 1) if n > 1 else None
        stated = [p for p in (previous.active if previous else []) if p in self.sim.said
                  and p in node.active]
        notes = self.sim.notes(node, previous, reply, self.plan_text)
        content = self.sim.message(notes, reply, stated, self.plan_turn, n)
        self.user_messages.append(ChatMessage(role="user", content=content))
        text, ids = "", []
        if self.ctx.user is not None:
            assert self.episode is not None
            msg = await self.episode.call_model("user", self.ctx.user, self.user_messages)
            text, ids = parse_user(msg.content or "")
        if not text:
            text = plain(notes)
            self.extra["scripted_user_turns"] = self.extra.get("scripted_user_turns", 0) + 1
        self.user_messages.append(ChatMessage(role="assistant", content=text))
        self.turn_log.append({"turn": n, "trip": node.trip,
                              "events": [e.op for e in node.events],
                              "revealed": [x.id for x in notes], "instruction_ids": ids,
                              "active": list(node.active), "feasible": node.feasible})
        return text

    def note_reply(self, n: int, reply: str, calls_before: int) -> None:
        parsed = parse_plan(reply)
        has_plan = parsed.plan is not None and bool(parsed.plan.daily_schedule)
        if has_plan:
            self.plan_text, self.plan_turn = reply, n
        assert self.episode is not None
        log = self.turn_log[-1]
        log["plan"] = has_plan
        log["no_change"] = parsed.plan is not None and not parsed.plan.daily_schedule
        log["tool_calls"] = len(self.episode.tool_calls) - calls_before
        log["reply"] = len(self.episode.messages) - 1  # the agent's answer in `messages`
        if not self.graph.node(n).feasible and declares_infeasible(reply):
            self.graph.agent_gave_up(n)

    def finish(self, termination: str, detail: str = "") -> EpisodeRecord:
        assert self.episode is not None
        ep = self.episode
        ep.user_messages = self.user_messages
        ep.extra.update({"turns": self.turn_log, "turn_reached": len(self.turn_log),
                         "final_plan": self.plan_text, "final_plan_turn": self.plan_turn,
                         "graph_turns": len(self.graph)})
        if self.graph.moved:
            ep.extra["rollbacks_moved"] = self.graph.moved
        return ep.finish(termination, detail)

    async def run(self) -> EpisodeRecord:
        settings = self.ctx.settings
        max_turns = min(settings.max_turns, 15) if settings.max_turns > 0 else 15
        self.episode = Episode(self.ctx, prompt("agent.txt"), "",
                               step_limit_text=STEP_LIMIT_TEXT, extra=self.extra)
        self.episode.usage["user"] = Usage()
        self.episode.timings["user"] = 0.0
        self.extra = self.episode.extra  # Episode copies its first extra entries
        self.ctx.agent.extra = self.extra  # type: ignore[attr-defined]
        n = 1
        try:
            first = await self.user_turn(1, "")
            self.episode.messages[1] = ChatMessage(role="user", content=first)
            while True:
                calls = len(self.episode.tool_calls)
                reply = await self.episode.agent_turn(settings.max_steps)
                self.note_reply(n, reply, calls)
                if n >= len(self.graph):
                    return self.finish("completed")
                if n >= max_turns:
                    return self.finish("max_turns")
                n += 1
                text = await self.user_turn(n, reply)
                self.episode.messages.append(ChatMessage(role="user", content=text))
                self.episode.n_user_turns += 1
        except EpisodeEnded as end:
            return self.finish(end.termination, end.detail)


async def run_trip(ctx: EpisodeContext) -> EpisodeRecord:
    """One TRIP-Bench episode in the run's protocol (`TripOptions.protocol`; multi-turn by
    default)."""
    return await TripEpisode(ctx).run()


async def run_single_turn(ctx: EpisodeContext) -> EpisodeRecord:
    """Table 5's single-turn setting: every final requirement in the first message."""
    return await TripEpisode(ctx, "single_turn").run()


async def run_no_issue(ctx: EpisodeContext) -> EpisodeRecord:
    """Table 5's multi-turn setting without issue reporting."""
    return await TripEpisode(ctx, "no_issue").run()
