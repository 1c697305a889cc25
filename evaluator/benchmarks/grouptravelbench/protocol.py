"""GroupTravelBench's episode: one agent, one simulator per user, a scheduled group chat.

The opening statements are broadcast; `scheduler.next_turn`/`advance` decide who speaks (an
@-mentioned user, a summary every kappa rounds, else round-robin); a user's reply goes
through `CompromiseTracker.begin_reply(...).submit(...)` (pass / commit / regenerate; the
user's prompt is rebuilt when they stop being compromisable); the agent's final plan JSON
ends the chat. Users see only outward messages. The agent calls the benchmark's 10 tools
(`bench_data/grouptravelbench_tools.json`) through the cached sandbox; a turn's tool loop and
its repetition guard are in `agent_turn`. The record's `extra` keeps the chat (tool entries
included), the effective and the agent's preference tables, the compromise log and
statistics and `plan_generated` for the judges.
"""

from __future__ import annotations

import json
from pathlib import Path
from string import Template
from typing import Any

import msgspec

from backends.types import ChatMessage
from bench_data.types import GroupTravelTask
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

PROMPT_VERSION = "grouptravelbench-v2"
PROMPTS = Path(__file__).with_name("prompts")
SUMMARY_ASK = ("[moderator] Please summarise what each traveller wants so far as the group's "
               "preference table (one JSON object keyed by traveller) and name the conflicts.")
FINAL_PLAN_ATTEMPTS = 3
FINAL_ASK = ("[moderator] The discussion is over. Reply with only the final travel plan as "
             "one JSON object.")


def _prompt(name: str) -> str:
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
        self.stats = {"solicited": 0, "accepted": 0, "refused": 0, "invalid": 0}
        opening = "\n".join([self.task.context, self.task.query, "", render_chat(self.history)])
        system = Template(_prompt("agent.txt")).safe_substitute(users=", ".join(self.users))
        self.episode = Episode(ctx, system, opening.strip(), task_time=self.task.time,
                               step_limit_text="(no reply)",
                               extra={"prompt_version": PROMPT_VERSION})
        self._seen = len(self.history)  # chat entries the agent has already been shown

    def _user_prompt(self, user: str) -> str:
        return user_system_prompt(user, self.task.user_preferences.get(user),
                                  self.tracker.compromisable.get(user, False))

    async def agent_speaks(self, ask: str = "") -> str:
        news = [f"[{e['role']}]: {e['content']}" for e in self.history[self._seen:]
                if is_message(e) and e.get("role") != AGENT]
        if ask:
            news.append(ask)
        last = self.episode.messages[-1]
        if news and last.role == "user":
            last.content = f"{last.content}\n\n" + "\n".join(news)
        elif news:
            self.episode.messages.append(ChatMessage(role="user", content="\n".join(news)))
            self.episode.n_user_turns += 1
        text = await run_agent_turn(self.episode, self.history, self.guard,
                                    self.ctx.settings.max_steps)
        self._seen = len(self.history)
        table = parse_agent_table(text)
        if table is not None:
            self.agent_table = table
        return text

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
        while True:
            turn = next_turn(self.state, self.config, self.history)
            exhausted = False
            if turn.kind == "stop":
                return "max_rounds"
            if turn.kind == "opening_summary" or turn.kind == "summary":
                await self.agent_speaks(SUMMARY_ASK)
            elif turn.kind == "final_plan":
                return await self.final_plan()
            elif turn.speaker == AGENT and turn.kind in ("poll", "mention"):
                if is_travel_plan(await self.agent_speaks()):
                    self.plan_generated = True
                    return "plan"
            elif turn.kind in ("poll", "mention"):
                exhausted = await self.user_speaks(turn)
            if self.guard.repetitive_turns >= MAX_REPETITIVE_TURNS:
                return "repetitive_tool_calls"
            self.state = advance(self.state, self.config, turn, pass_exhausted=exhausted)

    async def final_plan(self) -> str:
        """Rounds exhausted: the agent is told to give its plan, up to FINAL_PLAN_ATTEMPTS
        times; "plan" when one is structurally valid, else "no_plan"."""
        for attempt in range(1, FINAL_PLAN_ATTEMPTS + 1):
            self.episode.extra["final_plan_attempts"] = attempt
            if is_travel_plan(await self.agent_speaks(FINAL_ASK)):
                self.plan_generated = True
                return "plan"
            if self.guard.repetitive_turns >= MAX_REPETITIVE_TURNS:
                return "repetitive_tool_calls"
        return "no_plan"

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
    except EpisodeEnded as end:
        return chat.finish(end.termination, end.detail)
    return chat.finish(termination)


__all__ = ["PROMPT_VERSION", "run_group_chat"]
