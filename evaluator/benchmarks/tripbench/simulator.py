"""TRIP-Bench's user simulator (paper 3.4, F.2): each user turn, the notes of that turn's node
of the dialogue graph, and the simulator's answer turned into the user's message.

The simulator's conversation holds every earlier turn: each of its user messages carries the
agent's reply to the previous user turn (whole by default, as the paper's simulator sees all
context; `TripOptions.simulator_reply_chars` cuts it) and the notes for the next message; its
assistant messages are what the user said. When the latest reply brings no new itinerary, a
line says which earlier reply holds the plan in force (the plan history).

Notes by event: the trip (turn 1, and on redirect, merge or going back), each added wish (its
vague form when it has one and was not said yet), each change, rollback (FIT's with its note),
deletion, and the behaviours without a new constraint: issue (the rule evaluation of the
latest plan against the stated active wishes: up to three problems), content_mod, clarify,
explore. AIS: a wish said vaguely gets its explicit form in a later turn's notes when the
latest plan violates it or the agent asked about it (`asked_about`).
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

from bench_data.tripbench import Preference, TripMeta, TripTask, TurnNode

from .evaluation import evaluate, parse_plan
from .evaluation.rubrics import decode_spec, validate
from .judging import eval_task
from .synthesis.meta import to_trip

PROMPTS = Path(__file__).with_name("prompts")
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


@dataclasses.dataclass
class Note:
    id: str
    text: str


# words of a question about a wish, by the wish's family
TOPICS = {
    "hotel": ("hotel", "room", "stay", "accommodation", "star", "night", "breakfast", "budget",
              "price", "cost", "cancel", "window", "review", "rating", "location", "pet"),
    "restaurant": ("restaurant", "food", "meal", "cuisine", "eat", "dining", "dinner", "lunch",
                   "budget", "price", "cost", "rating", "review", "reserv"),
    "attraction": ("attraction", "sight", "visit", "museum", "park", "place", "see", "ticket",
                   "popular", "category", "distance", "far", "rating", "review"),
    "transportation": ("flight", "train", "depart", "leave", "leaving", "return", "arrive",
                       "ticket", "airline", "fare", "time", "platform", "punctual", "delay",
                       "on-time", "transport", "budget", "price", "cost"),
}
_GENERIC = re.compile(r"\b(clarify|specify|more specific|what (?:exactly )?do you mean|"
                      r"could you (?:tell|say) (?:me )?more|which one|what kind)\b",
                      re.IGNORECASE)
_QUESTION = re.compile(r"[^.!?\n]*\?")


def questions(reply: str) -> list[str]:
    """The agent's questions: sentences ending in "?" outside code blocks and JSON."""
    text = re.sub(r"```.*?```", " ", reply or "", flags=re.DOTALL)
    text = re.sub(r"\{.*\}", " ", text, flags=re.DOTALL)
    return [q.strip() for q in _QUESTION.findall(text) if len(q.strip()) > 3]


def asked_about(reply: str, pref: Preference) -> bool:
    """Whether the agent asked about this wish: a question of its reply names the wish's
    topic (a word of its family or of its vague form) or asks for clarification outright."""
    words = set(TOPICS.get(pref.family, ()))
    words |= {w for w in re.findall(r"[a-z]{5,}", pref.vague.lower())}
    for q in questions(reply):
        low = q.lower()
        if _GENERIC.search(low) or any(w in low for w in words):
            return True
    return False


class Simulator:
    """Builds each turn's notes from the dialogue graph (only that turn's node and what was
    said before) and the simulator's input."""

    def __init__(self, task: TripTask, world: Any, reply_chars: int = 0) -> None:
        self.task = task
        self.world = world
        self.reply_chars = reply_chars
        self.said: list[str] = []        # preference ids stated so far (in any form)
        self.vague_open: list[str] = []  # said vaguely, explicit form not yet given
        self.system = prompt("user.txt")
        style = styles().get(task.style, "")
        if style:
            self.system += "\n\nYour manner: " + style

    def pref(self, pid: str) -> Preference:
        return self.task.preferences[pid]

    def _state(self, p: Preference, text: str) -> Note:
        """A wish in its vague form when it has one and was not said yet, else explicitly."""
        if p.vague and p.id not in self.said:
            self.vague_open.append(p.id)
            return Note(p.id, p.vague + " (say it this vaguely; do not give specifics yet)")
        return Note(p.id, text)

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
                notes.append(self._state(p, p.text))
                self.said.append(p.id)
            elif e.op == "change":
                old, new = self.pref(e.replaces), self.pref(e.pref)
                said = self.said_as(old.id)
                if old.id in self.vague_open:
                    self.vague_open.remove(old.id)
                note = self._state(new, new.text)
                notes.append(Note(new.id, f"You changed your mind: instead of \"{said}\" "
                                          f"it is now: {note.text}"))
                self.said.append(new.id)
            elif e.op == "rollback" and e.trip:
                notes.append(Note("TRIP_BACK", "You drop the other destination and go back to "
                                  "the original idea: " + trip_words(task.trips[e.trip])
                                  + ". Wishes about the other destination no longer apply."))
            elif e.op == "rollback":
                old, new = self.pref(e.replaces), self.pref(e.pref)
                when = f" ({e.note})" if e.note else ""
                notes.append(Note(new.id, f"Take back your last change{when}: forget "
                                          f"\"{self.said_as(old.id)}\", the earlier wish holds "
                                          f"again: {self.said_as(new.id)}"))
            elif e.op == "delete":
                notes.append(Note(e.replaces, f"You no longer need this: "
                                              f"\"{self.said_as(e.replaces)}\"; tell the "
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
        asked about them)."""
        if previous is None or not self.vague_open:
            return []
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
            if missed or asked_about(reply, self.pref(pid)):
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
                problems.append("a wish is not met: " + self.said_as(pid))
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

    def message(self, notes: list[Note], reply: str, stated: list[str],
                plan_turn: int = 0, turn: int = 0) -> str:
        """The simulator's input for one turn."""
        parts = []
        if reply:
            cut = self.reply_chars
            shown = reply if not cut or len(reply) <= cut else reply[:cut] + " [...]"
            parts.append("The assistant's latest reply:\n" + shown)
            if plan_turn and plan_turn < turn - 1:
                parts.append(f"(No new itinerary in it: the plan in force is the one the "
                             f"assistant gave after your message {plan_turn}.)")
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
