"""GroupTravelBench's episode: one agent, one simulator per user, a scheduled group chat, as
the reference's interaction loop runs it.

The opening statements are the chat's first messages. The agent refreshes its preference table
(an internal call, `agent_turn.AgentSide.refresh`) and gives an opening summary (a turn with the
summary instruction, in the chat); then `scheduler.next_turn`/`advance` decide who speaks: an
@-mentioned role, a refresh plus summary every kappa rounds, else round-robin. A user's reply
goes through `CompromiseTracker.begin_reply(...).submit(...)` (pass / commit / regenerate;
the prompt is rebuilt when the user stops being compromisable). A polled or @-mentioned agent
reply that is a bare preference table stays out of the chat (its tool steps stay) and a summary
runs in its place. A plan from the agent ends the chat ("plan_generated"); after `max_rounds`
the agent is told to give its plan, up to 3 times, only the last attempt entering the chat
("max_turn_reached"; a plan-shaped one counts as generated); after a plan the table is
refreshed once more on the chat without it. Users see the outward messages only.

`options.summary_style = "table"` makes the summaries ask for the group's preference table
(posted as JSON in the chat) instead of the reference's mediation. The record's `extra` keeps
the chat (tool entries included), the effective and the agent's tables, the compromise log and
statistics and `plan_generated` for the judges; `events` counts speaking events as the
reference does (passes, @-mentions, summaries, the final plan).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import msgspec

from backends.types import ChatMessage
from bench_data.types import GroupTravelTask
from evaluator.protocols.base import EpisodeContext
from evaluator.protocols.loop import Episode, EpisodeEnded
from evaluator.records import EpisodeRecord

from .agent_turn import MAX_REPETITIVE_TURNS, AgentSide, Situation, ask
from .chat import AGENT, is_message, last_outward, message
from .compromise import CompromiseTracker
from .options import options_of
from .plan import is_travel_plan
from .prompting import Texts
from .render import CallIds, agent_messages, history_before_last_message, user_messages
from .scheduler import (
    MAX_MENTION_PASS_RETRIES,
    ScheduleConfig,
    SchedulerState,
    Turn,
    advance,
    next_turn,
)

PROMPT_VERSION = "grouptravelbench-v5"
FINAL_PLAN_ATTEMPTS = 3
DIRECTIVE_ROLE = "user"
"""The role name of the final-plan directive line in the agent's chat view (the reference's)."""


def prompt_version(ctx: EpisodeContext) -> str:
    ps = ctx.settings.prompts
    return PROMPT_VERSION if ps is None else ps.version(PROMPT_VERSION)


def user_list(users: list[str]) -> str:
    return "\n".join(f"- {name}" for name in users)


class GroupChat:
    def __init__(self, ctx: EpisodeContext) -> None:
        self.ctx = ctx
        self.task = ctx.task.payload_as(GroupTravelTask)
        self.texts = Texts.of(ctx.settings.prompts)
        self.options = options_of(ctx.settings.options)
        self.users = list(self.task.user_preferences)
        self.tracker = CompromiseTracker(self.task.user_preferences)
        self.config = ScheduleConfig.for_difficulty(self.users, self.task.difficulty_type)
        self.state = SchedulerState()
        self.history: list[dict[str, Any]] = [
            message(str(m.get("role", "")), str(m.get("content", "")))
            for m in self.task.initial_messages]
        for entry in self.history:
            del entry["has_tool_calls"]  # the opening statements carry no such flag
        self.user_names = user_list(self.users)
        self.prompts = {u: self._user_prompt(u) for u in self.users}
        self.plan_generated = False
        self.regenerations = 0
        self.repetitive_turns = 0
        self.stats = {"solicited": 0, "accepted": 0, "refused": 0, "invalid": 0}
        self.episode = Episode(ctx, "", "", task_time=self.task.time,
                               extra={"prompt_version": prompt_version(ctx)})
        self.agent = AgentSide(self.episode, self.texts, Situation(
            self.user_names, self.task.query, self.task.context, self.task.time),
            ctx.settings.max_steps)
        ask_role = "agent_table_ask" if self.options.summary_style == "table" else (
            "agent_convergence")
        self.summary_ask = self.texts.text(ask_role)

    # -- users ---------------------------------------------------------------------------
    def _user_prompt(self, user: str) -> str:
        entry = self.task.user_preferences.get(user)
        entry = entry if isinstance(entry, dict) else {}
        yes = self.tracker.compromisable.get(user, False)
        return self.texts.render(
            "user_system", name=user, users=self.user_names, query=self.task.query,
            time=self.task.time,
            preference=json.dumps(entry.get("preference", {}), ensure_ascii=False),
            compromise=self.texts.text("user_compromise_yes" if yes else "user_compromise_no"))

    async def _user_reply(self, user: str, mentioned: bool) -> str:
        """One user reply; an @-mentioned user who answers `[pass]` is asked again, up to
        MAX_MENTION_PASS_RETRIES times (the last reply returned either way)."""
        assert self.ctx.user is not None
        system = self.prompts[user] + (self.texts.text("user_mentioned") if mentioned else "")
        messages = [ChatMessage(role="system", content=system),
                    *user_messages(self.history, user, self.texts)]
        text = ""
        attempts = 1 + (MAX_MENTION_PASS_RETRIES if mentioned else 0)
        for attempt in range(1, attempts + 1):
            reply = await ask(self.episode, "user", self.ctx.user, messages)
            text = (reply.content or "").strip()
            if not (mentioned and text == "[pass]"):
                break
            if attempt < attempts:
                self.episode.count("mention_pass_retries")
        return text

    async def user_speaks(self, turn: Turn, ordinal: int) -> bool:
        """One user speaking event; returns whether an @-mentioned user still passed."""
        user = turn.speaker
        last = last_outward(self.history)
        gate = self.tracker.begin_reply(user, last[1] if last else None, ordinal)
        could_compromise = turn.mentioned and self.tracker.compromisable.get(user, False)
        text = await self._user_reply(user, turn.mentioned)
        exhausted = turn.mentioned and text.strip() == "[pass]"
        while True:
            step = gate.submit(text)
            if step.action == "regenerate" or step.forced and step.reason:
                self.stats["invalid"] += 1
            if step.action != "regenerate":
                break
            self.regenerations += 1
            text = await self._user_reply(user, turn.mentioned)
        if step.rebuild_prompt:
            self.prompts[user] = self._user_prompt(user)
        if step.action == "commit":
            self._count_compromise(could_compromise, step.applied)
            self.history.append(message(user, step.text))
            self.episode.user_messages.append(ChatMessage(role="user", content=step.text))
        return exhausted

    def _count_compromise(self, solicited: bool, applied: bool) -> None:
        """solicited: a reply to the agent's @-mention while the user could compromise;
        accepted: a compromise applied; refused: a solicited reply without one."""
        self.stats["solicited"] += int(solicited)
        self.stats["accepted"] += int(applied)
        self.stats["refused"] += int(solicited and not applied)

    # -- the agent -------------------------------------------------------------------------
    def commit(self, entries: list[dict[str, Any]]) -> None:
        self.history.extend(entries)

    async def summary(self) -> bool:
        """The table refresh, then the summary message; True when the summary was a plan."""
        await self.agent.refresh(self.history)
        return await self.summary_message()

    async def summary_message(self) -> bool:
        text, entries = await self.agent.turn(self.history, instruction=self.summary_ask)
        self.commit(entries)
        self.agent.take_table(text)
        return is_travel_plan(text)

    async def agent_speaks(self, mentioned: bool) -> tuple[bool, bool]:
        """A polled or @-mentioned agent turn: (it gave a plan, an extra summary ran).
        A bare preference table (not a plan) is kept out of the chat, its tool steps kept,
        and a summary runs in its place."""
        text, entries = await self.agent.turn(self.history, mentioned=mentioned)
        if self.agent.take_table(text) and not is_travel_plan(text):
            self.commit([e for e in entries if not is_message(e) or e.get("has_tool_calls")])
            self.episode.count("tables_intercepted")
            return await self.summary_message(), True
        self.commit(entries)
        return is_travel_plan(text), False

    # -- the loop --------------------------------------------------------------------------
    async def run(self) -> str:
        plan = await self.summary()  # the opening summary, outside any round
        self.state = advance(self.state, self.config, Turn("opening_summary"))
        if plan:
            return self.plan_made()
        while True:
            turn = next_turn(self.state, self.config, self.history)
            exhausted = extra = plan = False
            stop = ""
            if turn.kind == "stop":
                return "loop_ended"
            if turn.kind == "final_plan":
                return await self.final_plan()
            if turn.kind == "summary":
                plan = await self.summary()
            elif turn.speaker == AGENT and turn.kind in ("poll", "mention"):
                plan, extra = await self.agent_speaks(turn.kind == "mention")
                if not plan and not extra:
                    stop = self.repetition_stop()
            elif turn.kind in ("poll", "mention"):
                exhausted = await self.user_speaks(turn, self.state.events + 1)
            if plan or stop:  # the chat ends: the event counts, the round does not close
                self.state = replace(self.state, events=self.state.events + 1 + int(extra))
                return self.plan_made() if plan else stop
            self.state = advance(self.state, self.config, turn, pass_exhausted=exhausted,
                                 extra_summary=extra)

    def repetition_stop(self) -> str:
        """After a polled or @-mentioned agent turn: a call made a third time ends the chat at
        once; a repeat inside a turn ends it on the second such turn in a row."""
        reason = self.agent.guard.reason
        if reason == "multiple":
            return "multiple_repeated_tool_calls"
        if reason == "consecutive":
            self.repetitive_turns += 1
            if self.repetitive_turns >= MAX_REPETITIVE_TURNS:
                return "consecutive_repeated_tool_calls"
        else:
            self.repetitive_turns = 0
        return ""

    def plan_made(self) -> str:
        self.plan_generated = True
        return "plan_generated"

    async def final_plan(self) -> str:
        """Rounds exhausted: the agent is told to give its plan (in the system prompt and as a
        directive line at the end of its chat view), up to FINAL_PLAN_ATTEMPTS times; only the
        last attempt enters the chat. "max_turn_reached" either way; a plan counts."""
        ask_text = self.texts.text("agent_final_plan")
        directive = {"type": "message", "role": DIRECTIVE_ROLE, "has_tool_calls": False,
                     "content": self.texts.render("agent_final_directive", ask=ask_text)}
        entries: list[dict[str, Any]] = []
        for attempt in range(1, FINAL_PLAN_ATTEMPTS + 1):
            self.episode.extra["final_plan_attempts"] = attempt
            text, entries = await self.agent.turn([*self.history, directive],
                                                  instruction=ask_text)
            if is_travel_plan(text):
                self.plan_generated = True
                break
        self.state = advance(self.state, self.config, Turn("final_plan"))
        self.commit(entries)
        return "max_turn_reached"

    def finish(self, termination: str, detail: str = "") -> EpisodeRecord:
        extra = self.episode.extra
        # the record's messages: the agent's view of the whole chat at the end
        self.episode.messages = [ChatMessage(role="system", content=self.agent.system()),
                                 *agent_messages(self.history, self.texts, CallIds())]
        extra.update(chat=self.history, users=self.users, agent_table=self.agent.table_data,
                     effective=self.tracker.snapshot(), plan_generated=self.plan_generated,
                     compromises=msgspec.to_builtins(self.tracker.log),
                     compromise_counts=dict(self.tracker.counts),
                     compromise_stats=dict(self.stats),
                     difficulty=self.task.difficulty_type or "unknown",
                     regenerations=self.regenerations, rounds=self.state.rounds,
                     events=self.state.events)
        return self.episode.finish(termination, detail)


async def run_group_chat(ctx: EpisodeContext) -> EpisodeRecord:
    if ctx.user is None:
        raise ValueError("GroupTravelBench needs a user simulator (the `user` role)")
    chat = GroupChat(ctx)
    try:
        termination = await chat.run()
        if chat.plan_generated:
            await chat.agent.refresh(history_before_last_message(chat.history))
    except EpisodeEnded as end:
        return chat.finish(end.termination, end.detail)
    return chat.finish(termination)


__all__ = ["PROMPT_VERSION", "run_group_chat"]
