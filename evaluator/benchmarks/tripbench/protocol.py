"""TRIP-Bench's episode: the agent plans over the 18 tools while a user simulator walks the
task's dialogue graph (paper 3.4), for up to `max_turns` user turns (the paper: 15).

Each user turn n has its node in the graph (`TripTask.turns[n-1]`): its events and the
active preferences after them. The simulator is shown only what that node allows -- the trip
(turn 1, or when the user redirects, merges or goes back), the preferences the turn adds,
changes, rolls back or drops, and the turn's behaviour without a new constraint:
- issue (error reporting): the rule evaluation of the agent's latest plan against the active
  preferences (evaluation package), up to three problems to point out;
- content_mod (local revision), clarify (clarification), explore (exploratory inquiry);
- AIS: a preference with a vague form is first said vaguely; its explicit form is added to a
  later turn's notes only when the agent's latest plan violates it or the agent asked a
  question;
- FIT: rolling back an infeasible wish is offered with the note "when the assistant finds no
  way to meet it, or at the latest now".
Later turns' preferences are never in an earlier prompt: notes are built per turn from the
node, and the simulator's conversation only grows. The simulator answers JSON
(`instruction_ids`, `user_query`); text that is not JSON is taken as the utterance, and an
empty reply is replaced by the notes in plain words (so a turn never loses its content).

The episode ends after the agent's answer to the graph's last turn ("completed"), after
`max_turns` user turns ("max_turns"), or on the loop's errors ("context_overflow",
"agent_error", "user_error"). The record keeps `extra["final_plan"]` (the latest reply with a
non-empty itinerary), `final_plan_turn`, `turn_reached`, the per-turn log (`turns`: node
events, revealed ids, the simulator's instruction ids, whether a plan came, tool calls, the
index of the agent's answer in `messages`) and
`context_tokens_max` (the largest prompt the agent was sent).
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

from backends.types import ChatMessage, ChatResponse, Usage
from bench_data.tripbench import Preference, TripMeta, TripTask, TurnNode
from evaluator.protocols.base import EpisodeContext, RoleClient
from evaluator.protocols.loop import Episode, EpisodeEnded
from evaluator.records import EpisodeRecord

from .evaluation import evaluate, parse_plan
from .evaluation.rubrics import decode_spec, validate
from .judging import eval_task
from .synthesis.meta import to_trip

PROMPT_VERSION = "tripbench-v3"
PROMPTS = Path(__file__).with_name("prompts")
STEP_LIMIT_TEXT = "I could not finish planning within my step budget for this message."
REPLY_CHARS = 4000   # the agent's reply as the simulator sees it (plans are long)
MAX_ISSUES = 3


def prompt(name: str) -> str:
    return (PROMPTS / name).read_text(encoding="utf-8").strip()


def styles() -> dict[str, str]:
    out = {}
    for line in prompt("styles.txt").splitlines():
        key, _, text = line.partition(":")
        if text:
            out[key.strip()] = text.strip()
    return out


def trip_words(trip: TripMeta) -> str:
    stays = " then ".join(f"{s.city} ({s.nights} night{'s' if s.nights != 1 else ''})"
                          if s.nights else s.city for s in trip.stays)
    people = f"{trip.number_of_people} traveller{'s' if trip.number_of_people != 1 else ''}"
    return (f"{people}, leaving {trip.origin} on {trip.start_date}, visiting {stays}, back in "
            f"{trip.origin} on {trip.end_date}")


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


@dataclasses.dataclass
class Note:
    id: str
    text: str


class Simulator:
    """Builds each turn's notes from the dialogue graph (only that turn's node and what was
    said before) and turns the simulator's answer into the user's message."""

    def __init__(self, task: TripTask, world: Any) -> None:
        self.task = task
        self.world = world
        self.said: list[str] = []        # preference ids stated so far (in any form)
        self.vague_open: list[str] = []  # said vaguely, explicit form not yet given
        self.system = prompt("user.txt")
        style = styles().get(task.style, "")
        if style:
            self.system += "\n\nYour manner: " + style

    def pref(self, pid: str) -> Preference:
        return self.task.preferences[pid]

    def notes(self, node: TurnNode, previous: TurnNode | None, reply: str,
              plan_text: str) -> list[Note]:
        """What the user may say at `node` (its events only), after the agent's `reply`."""
        task = self.task
        notes: list[Note] = []
        if previous is None:
            notes.append(Note("TRIP", "Your trip: " + trip_words(task.trips[node.trip])
                              + ". Ask the assistant to plan it."))
        notes += self._clarifications(node, previous, reply, plan_text)
        for e in node.events:
            if e.op == "add":
                p = self.pref(e.pref)
                if p.vague and p.id not in self.said:
                    notes.append(Note(p.id, p.vague + " (say it this vaguely; do not give "
                                                      "specifics yet)"))
                    self.vague_open.append(p.id)
                else:
                    notes.append(Note(p.id, p.text))
                self.said.append(p.id)
            elif e.op == "change":
                old, new = self.pref(e.replaces), self.pref(e.pref)
                notes.append(Note(new.id, f"You changed your mind: instead of \"{old.text}\" "
                                          f"it is now: {new.text}"))
                self.said.append(new.id)
            elif e.op == "rollback" and e.trip:
                notes.append(Note("TRIP_BACK", "You drop the other destination and go back to "
                                  "the original idea: " + trip_words(task.trips[e.trip])
                                  + ". Wishes about the other destination no longer apply."))
            elif e.op == "rollback":
                old, new = self.pref(e.replaces), self.pref(e.pref)
                when = f" ({e.note})" if e.note else ""
                notes.append(Note(new.id, f"Take back your last change{when}: forget "
                                          f"\"{old.text}\", the earlier wish holds again: "
                                          f"{new.text}"))
            elif e.op == "delete":
                notes.append(Note(e.replaces, f"You no longer need this: "
                                              f"\"{self.pref(e.replaces).text}\"; tell the "
                                              "assistant to drop it."))
            elif e.op == "redirect":
                notes.append(Note("REDIRECT", "New idea: go somewhere else instead -- "
                                  + trip_words(task.trips[e.trip]) + ". General wishes stay; "
                                  "wishes about the first destination are on hold."))
            elif e.op == "merge":
                notes.append(Note("MERGE", "You would like both destinations after all, in "
                                  "one trip: " + trip_words(task.trips[e.trip])
                                  + ". Ask for one plan that combines the two."))
            elif e.op == "issue":
                notes.append(Note("ISSUE", self._issues(node, plan_text)))
            elif e.op == "content_mod":
                notes.append(Note("ContentMod", "Ask for one small edit to a detail of the "
                                  "assistant's latest plan (a time, or swapping one place for "
                                  "a similar one) that contradicts none of your wishes."))
            elif e.op == "clarify":
                notes.append(Note("ClarifyExp", "Ask the assistant to explain one of its "
                                  "choices or what something in its answer means."))
            elif e.op == "explore":
                notes.append(Note("ExploreQues", "Ask an open question or for suggestions "
                                  "(e.g. what else is worth doing), without committing to a "
                                  "new wish."))
        return notes

    def _clarifications(self, node: TurnNode, previous: TurnNode | None, reply: str,
                        plan_text: str) -> list[Note]:
        """AIS: vague wishes whose explicit form is owed (the plan misses them, or the agent
        asked)."""
        if previous is None or not self.vague_open:
            return []
        asked = "?" in reply
        parsed = parse_plan(plan_text).plan if plan_text else None
        trip = to_trip(self.task.trips[previous.trip])
        out = []
        for pid in list(self.vague_open):
            if pid not in previous.active:
                self.vague_open.remove(pid)
                continue
            missed = parsed is None
            if parsed is not None and self.world is not None:
                try:
                    missed = not validate(decode_spec(self.pref(pid).rubric), parsed,
                                          self.world, trip)
                except (KeyError, TypeError, ValueError):
                    missed = True
            if missed or asked:
                out.append(Note(pid, "Make clear what you meant earlier: "
                                     + self.pref(pid).text))
                self.vague_open.remove(pid)
        return out

    def _issues(self, node: TurnNode, plan_text: str) -> str:
        if not plan_text:
            return ("You have not received a complete itinerary yet: point that out and ask "
                    "for one.")
        if self.world is None:
            return "Ask the assistant to double-check its plan against all your wishes."
        said = [p for p in node.active if p in self.said]
        result = evaluate(plan_text, eval_task(self.task, node, said), self.world)
        problems: list[str] = []  # the user's own wishes first, then the general rules
        for pid, r in zip(said, result.rubrics, strict=True):  # in the task's rubric order
            if not r.passed:
                problems.append("a wish is not met: " + self.pref(pid).text)
        for name, count in {**result.feasibility, **result.soundness}.items():
            if count:
                first = next((v.message for v in result.violations if v.check == name), "")
                problems.append(f"{name.replace('_', ' ')}: {first}")
        if not problems:
            return ("The plan looks right to you: say so briefly and ask the assistant to "
                    "confirm it checked opening hours and transfers.")
        return ("Point out these problems in the latest plan and ask for a fix: "
                + "; ".join(problems[:MAX_ISSUES]))

    def said_as(self, pid: str) -> str:
        """How a stated wish was put: vaguely while its explicit form is still owed."""
        pref = self.pref(pid)
        return pref.vague if pid in self.vague_open else pref.text

    def message(self, notes: list[Note], reply: str, stated: list[str]) -> str:
        """The simulator's input for one turn."""
        parts = []
        if reply:
            shown = reply if len(reply) <= REPLY_CHARS else reply[:REPLY_CHARS] + " [...]"
            parts.append("The assistant's latest reply:\n" + shown)
        parts.append("Notes for your next message (id: note):\n"
                     + "\n".join(f"- {n.id}: {n.text}" for n in notes))
        if stated:
            parts.append("Already stated and still wanted (for reference):\n"
                         + "\n".join(f"- {pid}: {self.said_as(pid)}" for pid in stated))
        return "\n\n".join(parts)


_JSON = re.compile(r"\{.*\}", re.DOTALL)


def parse_user(text: str) -> tuple[str, list[str]]:
    """(utterance, instruction ids) from the simulator's answer (tolerant)."""
    match = _JSON.search(text or "")
    if match:
        try:
            obj = json.loads(match.group(0))
        except json.JSONDecodeError:
            obj = None
        if isinstance(obj, dict) and isinstance(obj.get("user_query"), str):
            ids = obj.get("instruction_ids")
            ids = [str(i) for i in ids] if isinstance(ids, list) else []
            return obj["user_query"].strip(), ids
    return (text or "").strip(), []


def plain(notes: list[Note]) -> str:
    """The notes said plainly (the utterance when the simulator gives none)."""
    return " ".join(n.text.split(" (say it this vaguely")[0] for n in notes)


class TripEpisode:
    def __init__(self, ctx: EpisodeContext) -> None:
        self.task = ctx.task.payload_as(TripTask)
        self.extra: dict[str, Any] = {"prompt_version": PROMPT_VERSION,
                                      "difficulty": self.task.difficulty,
                                      "hard_set": self.task.hard_set}
        self.ctx = dataclasses.replace(ctx, agent=_Measured(ctx.agent, self.extra))
        self.sim = Simulator(self.task, getattr(ctx.sandbox, "world", None))
        self.turn_log: list[dict[str, Any]] = []
        self.plan_text = ""
        self.plan_turn = 0
        self.episode: Episode | None = None
        self.user_messages: list[ChatMessage] = [ChatMessage(role="system",
                                                             content=self.sim.system)]

    async def user_turn(self, n: int, reply: str) -> str:
        node = self.task.node(n)
        previous = self.task.node(n - 1) if n > 1 else None
        stated = [p for p in (previous.active if previous else []) if p in self.sim.said
                  and p in node.active]
        notes = self.sim.notes(node, previous, reply, self.plan_text)
        self.user_messages.append(ChatMessage(role="user",
                                              content=self.sim.message(notes, reply, stated)))
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
                              "active": list(node.active)})
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

    def finish(self, termination: str, detail: str = "") -> EpisodeRecord:
        assert self.episode is not None
        ep = self.episode
        ep.user_messages = self.user_messages
        ep.extra.update({"turns": self.turn_log, "turn_reached": len(self.turn_log),
                         "final_plan": self.plan_text, "final_plan_turn": self.plan_turn,
                         "graph_turns": len(self.task.turns)})
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
                if n >= len(self.task.turns):
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
    """One TRIP-Bench episode (see the module doc)."""
    return await TripEpisode(ctx).run()
