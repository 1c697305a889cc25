"""GroupTravelBench's episode: one agent, one simulator per user, a scheduled group chat.

As the reference runs it: the opening statements are broadcast; the agent refreshes its
preference table (an internal, tool-less call on the outward chat that never enters the
chat) and posts an opening summary; then `scheduler.next_turn`/`advance` decide who speaks
(an @-mentioned user, a table refresh plus summary every kappa rounds, else round-robin).
A user's reply goes through `CompromiseTracker.begin_reply(...).submit(...)` (pass / commit /
regenerate; the prompt is rebuilt when the user stops being compromisable). The agent's
table is in its system prompt on every call; a polled agent reply that is a bare preference
table is kept out of the chat (its tool steps stay) and a summary runs in its place. A plan
JSON from the agent ends the chat ("plan_generated"); after `max_rounds` the agent is told
to give its plan up to 3 times, only the last attempt entering the chat
("max_turn_reached", the plan counted when valid); after a plan the table is refreshed once
more on the chat without it. The agent calls the 10 tools through the cached sandbox
(`agent_turn`: its tool loop and repetition guard: "multiple_repeated_tool_calls",
"consecutive_repeated_tool_calls"). Users see only outward messages. The record's `extra`
keeps the chat (tool entries included), the effective and the agent's preference tables, the
compromise log and statistics and `plan_generated` for the judges.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from string import Template
from typing import Any

import msgspec

from backends.types import ChatMessage
from evaluator.benchmarks.grouptravelbench.data import GroupTravelTask
from evaluator.protocols.base import EpisodeContext
from evaluator.protocols.loop import Episode, EpisodeEnded
from evaluator.records import EpisodeRecord

from .agent_turn import MAX_REPETITIVE_TURNS, RepetitionGuard, run_agent_turn
from .chat import AGENT, is_message, last_outward, message, outward_messages
from .compromise import CompromiseTracker
from .plan import is_travel_plan, parse_agent_table
from .scheduler import (
    MAX_MENTION_PASS_RETRIES,
    ScheduleConfig,
    SchedulerState,
    Turn,
    advance,
    next_turn,
)

PROMPT_VERSION = "grouptravelbench-v4"
PROMPTS = Path(__file__).with_name("prompts")
SUMMARY_ASK = ("[moderator] Please summarise what each traveller wants so far as the group's "
               "preference table (one JSON object keyed by traveller) and name the conflicts.")
TABLE_ASK = ("Update the group's preference table from the chat: reply with only one JSON "
             "object keyed by traveller name, each value holding \"global_constraints\" and "
             "\"city_specific_preferences\" with everything each traveller has said so far "
             "(a complete snapshot: leave out what someone has withdrawn).")
TABLE_BLOCK = "Preference table collected so far:"
MENTIONED_NOTE = ("[moderator] You were @-mentioned: answer the question directly, without "
                  "passing it on to someone else.")
FINAL_PLAN_ATTEMPTS = 3
FINAL_ASK = ("[moderator] The discussion is over. Reply with only the final travel plan as "
             "one JSON object.")


@cache
def _prompt(name: str) -> str:
    """A prompt file, read once per process (a run's prompts never change under it)."""
    return (PROMPTS / name).read_text(encoding="utf-8").strip()


def user_system_prompt(name: str, entry: Any, compromisable: bool) -> str:
    """The shared rules first (one prefix for every user), then this user's block."""
    entry = entry if isinstance(entry, dict) else {}
    block = Template(_prompt("user_role.txt")).safe_substitute(
        name=name, role=entry.get("role", ""),
        preference=json.dumps(entry.get("preference", entry), ensure_ascii=False, indent=1),
        compromise=_prompt("compromise_yes.txt" if compromisable else "compromise_no.txt"))
    return _prompt("user.txt") + "\n\n" + block


def render_chat(history: list[dict[str, Any]]) -> str:
    return "\n".join(f"[{e.get('role')}]: {e.get('content') or ''}"
                     for e in outward_messages(history))


class GroupChat:
    def __init__(self, ctx: EpisodeContext) -> None:
        self.ctx = ctx
        self.task = ctx.task.payload_as(GroupTravelTask)
        self.users = list(self.task.user_preferences)
        self.tracker = CompromiseTracker(self.task.user_preferences)
        self.config = ScheduleConfig.for_difficulty(self.users, self.task.difficulty_type)
        self.state = SchedulerState()
        self.history: list[dict[str, Any]] = [
            message(str(m.get("role", "")), str(m.get("content", "")))
            for m in self.task.initial_messages]
        self.prompts = {u: self._user_prompt(u) for u in self.users}
        self.agent_table: dict[str, Any] | None = None
        self.plan_generated = False
        self.regenerations = 0
        self.guard = RepetitionGuard()
        self.repetitive_turns = 0
        self.stats = {"solicited": 0, "accepted": 0, "refused": 0, "invalid": 0}
        opening = "\n".join([self.task.context, self.task.query, "", render_chat(self.history)])
        self.base_system = Template(_prompt("agent.txt")).safe_substitute(
            users=", ".join(self.users))
        self.episode = Episode(ctx, self.base_system, opening.strip(), task_time=self.task.time,
                               step_limit_text="(no reply)",
                               extra={"prompt_version": PROMPT_VERSION})
        self._seen = len(self.history)  # chat entries the agent has already been shown

    def _user_prompt(self, user: str) -> str:
        return user_system_prompt(user, self.task.user_preferences.get(user),
                                  self.tracker.compromisable.get(user, False))

    def _system(self) -> str:
        """The agent's system prompt with its current preference table (as the reference
        keeps it in every agent call)."""
        table = json.dumps(self.agent_table or {}, ensure_ascii=False, indent=2)
        return f"{self.base_system}\n\n{TABLE_BLOCK}\n{table}"

    def _take_table(self, text: str) -> bool:
        table = parse_agent_table(text)
        if table is None or table == self.agent_table:
            return False
        self.agent_table = table
        return True

    async def agent_turn(self, ask: str = "", mentioned: bool = False
                         ) -> tuple[str, list[dict[str, Any]]]:
        """One agent turn on the chat so far; returns (reply, its chat entries) without
        committing them (the caller decides what enters the chat)."""
        news = [f"[{e['role']}]: {e['content']}" for e in self.history[self._seen:]
                if is_message(e) and e.get("role") != AGENT]
        if mentioned:
            news.append(MENTIONED_NOTE)
        if ask:
            news.append(ask)
        last = self.episode.messages[-1]
        if news and last.role == "user":
            last.content = f"{last.content}\n\n" + "\n".join(news)
        elif news:
            self.episode.messages.append(ChatMessage(role="user", content="\n".join(news)))
            self.episode.n_user_turns += 1
        self.episode.messages[0].content = self._system()
        self._seen = len(self.history)
        entries: list[dict[str, Any]] = []
        text = await run_agent_turn(self.episode, entries, self.guard,
                                    self.ctx.settings.max_steps)
        return text, entries

    def commit(self, entries: list[dict[str, Any]]) -> None:
        self.history.extend(entries)
        self._seen = len(self.history)

    async def refresh_table(self, history: list[dict[str, Any]]) -> None:
        """The internal preference-table update: one tool-less call on the outward chat that
        never enters the chat (at the opening, at each summary and after a plan)."""
        ask = f"[chat]\n{render_chat(history)}\n[end of chat]\n\n{TABLE_ASK}"
        msgs = [ChatMessage(role="system", content=self._system()),
                ChatMessage(role="user", content=ask)]
        self.episode.n_agent_calls += 1
        reply = await self.episode.call_model("agent", self.ctx.agent, msgs)
        self.episode.count("table_refreshes")
        self._take_table(reply.content or "")

    async def summary(self) -> bool:
        """The table refresh, then the summary message; True when the summary was a plan."""
        await self.refresh_table(self.history)
        return await self.summary_message()

    async def summary_message(self) -> bool:
        """The agent's summary, which enters the chat; True when it was a plan."""
        text, entries = await self.agent_turn(SUMMARY_ASK)
        self.commit(entries)
        self._take_table(text)
        return is_travel_plan(text)

    async def agent_speaks(self, mentioned: bool) -> tuple[bool, bool]:
        """A polled or @-mentioned agent turn: (it gave a plan, an extra summary ran).
        A bare preference table (not a plan) is kept out of the chat, its tool entries
        kept, and a summary runs in its place."""
        text, entries = await self.agent_turn(mentioned=mentioned)
        if self._take_table(text) and not is_travel_plan(text):
            if self.episode.messages[-1].role == "assistant":
                self.episode.messages.pop()  # out of the chat, so out of the agent's view
            self.commit([e for e in entries if not is_message(e) or e.get("has_tool_calls")])
            self.episode.count("tables_intercepted")
            return await self.summary_message(), True
        self.commit(entries)
        return is_travel_plan(text), False

    async def user_speaks(self, turn: Turn) -> bool:
        """One user speaking event; returns whether a mentioned user still passed."""
        user = turn.speaker
        last = last_outward(self.history)
        gate = self.tracker.begin_reply(user, last[1] if last else None, self.state.events)
        tries = MAX_MENTION_PASS_RETRIES + 1 if turn.mentioned else 1
        could_compromise = turn.mentioned and self.tracker.compromisable.get(user, False)
        while True:
            text = await self._ask_user(user, turn.mentioned)
            step = gate.submit(text)
            if step.action == "regenerate" or step.forced and step.reason:
                self.stats["invalid"] += 1
            if step.action == "regenerate":
                self.regenerations += 1
                continue
            if step.rebuild_prompt:
                self.prompts[user] = self._user_prompt(user)
            if step.action == "commit":
                self._count_compromise(could_compromise, step.applied)
                self.history.append(message(user, step.text))
                self.episode.user_messages.append(ChatMessage(role="user", content=step.text))
                return False
            tries -= 1
            if tries <= 0:
                return turn.mentioned
            gate = self.tracker.begin_reply(user, last[1] if last else None, self.state.events)

    def _count_compromise(self, solicited: bool, applied: bool) -> None:
        """solicited: a reply to the agent's @-mention while the user could compromise;
        accepted: a compromise applied; refused: a solicited reply without one."""
        self.stats["solicited"] += int(solicited)
        self.stats["accepted"] += int(applied)
        self.stats["refused"] += int(solicited and not applied)

    async def _ask_user(self, user: str, mentioned: bool) -> str:
        assert self.ctx.user is not None
        cue = (f"The planner @-mentioned you ({user}): answer now." if mentioned
               else f"It is your turn, {user}: answer, or [pass] if nothing concerns you.")
        messages = [ChatMessage(role="system", content=self.prompts[user]),
                    ChatMessage(role="user", content=render_chat(self.history) + "\n\n" + cue)]
        reply = await self.episode.call_model("user", self.ctx.user, messages)
        return (reply.content or "").strip() or "[pass]"

    async def run(self) -> str:
        if await self.summary():  # the opening summary, outside any round
            return self.plan_made()
        self.state = advance(self.state, self.config, Turn("opening_summary"))
        while True:
            turn = next_turn(self.state, self.config, self.history)
            exhausted = extra = False
            if turn.kind == "stop":
                return "loop_ended"
            if turn.kind == "final_plan":
                return await self.final_plan()
            if turn.kind == "summary":
                if await self.summary():
                    return self.plan_made()
            elif turn.speaker == AGENT and turn.kind in ("poll", "mention"):
                plan, extra = await self.agent_speaks(turn.kind == "mention")
                if plan:
                    return self.plan_made()
                if not extra:
                    stop = self.repetition_stop()
                    if stop:
                        return stop
            elif turn.kind in ("poll", "mention"):
                exhausted = await self.user_speaks(turn)
            self.state = advance(self.state, self.config, turn, pass_exhausted=exhausted,
                                 extra_summary=extra)

    def repetition_stop(self) -> str:
        """After a polled or @-mentioned agent turn: a call made a third time ends the chat at
        once; a repeat inside a turn ends it on the second such turn in a row."""
        if self.guard.reason == "multiple":
            return "multiple_repeated_tool_calls"
        if self.guard.reason == "consecutive":
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
        """Rounds exhausted: the agent is told to give its plan, up to FINAL_PLAN_ATTEMPTS
        times; only the last attempt enters the chat (and the agent's view). The ending is
        "max_turn_reached" either way; a structurally valid plan counts as generated."""
        start = len(self.episode.messages)
        for attempt in range(1, FINAL_PLAN_ATTEMPTS + 1):
            self.episode.extra["final_plan_attempts"] = attempt
            if attempt > 1:  # the failed attempt is forgotten, as it never entered the chat
                del self.episode.messages[start:]
                self._seen = len(self.history)
            text, entries = await self.agent_turn(FINAL_ASK)
            if is_travel_plan(text):
                self.plan_generated = True
                break
        self.commit(entries)
        return "max_turn_reached"

    async def refresh_after_plan(self) -> None:
        """The table refresh on the chat without the plan message and the tool steps that
        led to it: what the agent knew right before it committed to the plan."""
        end = len(self.history) - 1
        while end > 0 and (not is_message(self.history[end - 1])
                           or self.history[end - 1].get("has_tool_calls")):
            end -= 1
        await self.refresh_table(self.history[:end])

    def finish(self, termination: str, detail: str = "") -> EpisodeRecord:
        extra = self.episode.extra
        extra.update(chat=self.history, users=self.users, agent_table=self.agent_table,
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
            await chat.refresh_after_plan()
    except EpisodeEnded as end:
        return chat.finish(end.termination, end.detail)
    return chat.finish(termination)


__all__ = ["PROMPT_VERSION", "run_group_chat"]
