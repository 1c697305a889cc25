"""Difficulty tiers (paper table 4), the hard sets (LIT, FIT, AIS, PMR) and the dialogue graph.

A task's constraints are chains of versions (`Chain`: the first version, then up to two
tighter ones). Their instructions are scheduled over user turns: turn 1 states the trip and
the first-turn chains; later turns add chains, change them, roll a change back or delete a
chain; beside them come the behaviours without a new constraint (issue reporting, local
revisions, clarification and exploratory questions). Replaying the events gives each turn's
node: the trip in force and the active preference ids, so a turn never sees a later change.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field

from evaluator.benchmarks.tripbench.data import Preference, TurnEvent, TurnNode

MAX_TURNS = 15
MAX_IDS_PER_TURN = 4   # the simulator reveals at most four instructions a turn


@dataclass(frozen=True)
class Tier:
    name: str
    days: tuple[int, int]
    cities: tuple[int, ...]           # cities of the trip, origin included
    constraints: tuple[int, int]
    first: tuple[int, int]            # constraints stated in the first turn
    max_chain: int
    extras: tuple[str, ...]           # behaviours without a new constraint


TIERS = {
    "easy": Tier("easy", (2, 5), (2,), (2, 6), (0, 4), 2, ("issue",)),
    "mid": Tier("mid", (3, 7), (2, 3), (7, 10), (4, 7), 3,
                ("issue", "content_mod", "clarify", "explore")),
    "hard": Tier("hard", (3, 10), (2, 3), (11, 14), (8, 11), 3,
                 ("issue", "content_mod", "clarify", "explore")),
}
STYLES = ("terse", "chatty", "indecisive", "impatient", "detail_oriented")
"""The five interaction styles of AIS users."""
BEHAVIOURS = {"add": "instruction_appending", "change": "instruction_modification",
              "redirect": "intent_redirection", "rollback": "deletion_rollback",
              "delete": "deletion_rollback", "merge": "plan_merge",
              "content_mod": "local_revision", "issue": "error_reporting",
              "clarify": "clarification", "explore": "exploratory_inquiry"}


@dataclass
class Chain:
    id: str
    kind: str
    prefs: list[Preference]               # versions in order
    scope: str = "all"
    first_turn: bool = False
    rollback: bool = False                # roll the last change back later
    delete: bool = False                  # drop the chain later
    fit: Preference | None = None         # FIT: an infeasible version, rolled back after
    wording: int = 0                      # which of the type's wordings the chain uses


@dataclass
class Item:
    chain: str
    event: TurnEvent
    gate: int = 2                         # earliest turn


@dataclass
class Graph:
    turns: list[list[TurnEvent]] = field(default_factory=list)


def chain_items(chain: Chain) -> list[Item]:
    """A chain's instructions in order (each in its own turn)."""
    p = chain.prefs
    items = [] if chain.first_turn else [Item(chain.id, TurnEvent(op="add", pref=p[0].id))]
    for prev, cur in itertools.pairwise(p):
        items.append(Item(chain.id, TurnEvent(op="change", pref=cur.id, replaces=prev.id)))
    if chain.rollback and len(p) > 1:
        items.append(Item(chain.id, TurnEvent(op="rollback", pref=p[-2].id, replaces=p[-1].id)))
    current = p[-2].id if chain.rollback and len(p) > 1 else p[-1].id
    if chain.fit is not None:
        items.append(Item(chain.id, TurnEvent(op="change", pref=chain.fit.id, replaces=current)))
        items.append(Item(chain.id, TurnEvent(op="rollback", pref=current,
                                              replaces=chain.fit.id,
                                              note="when the assistant finds no way to meet "
                                                   "it, or at the latest now")))
    if chain.delete:
        items.append(Item(chain.id, TurnEvent(op="delete", replaces=current)))
    return items


def schedule(rng: random.Random, chains: list[Chain], tier: Tier, hard_set: str,
             gates: dict[str, int]) -> list[list[TurnEvent]]:
    """Turn 1's adds, then the chains' later items over turns 2.. (one item per chain and
    turn, at most `MAX_IDS_PER_TURN` a turn, one a turn for LIT), within `MAX_TURNS`."""
    turns: list[list[TurnEvent]] = [[TurnEvent(op="add", pref=c.prefs[0].id)
                                     for c in chains if c.first_turn]]
    queues = {c.id: chain_items(c) for c in chains}
    for c in chains:
        for item in queues[c.id]:
            item.gate = max(item.gate, gates.get(c.id, 2))
    pending = sum(len(q) for q in queues.values())
    turn = 2
    while pending:
        left = MAX_TURNS - turn + 1
        cap = 1 if hard_set == "LIT" else rng.randint(1, 3)
        cap = max(cap, -(-pending // max(left, 1)))
        cap = min(cap, MAX_IDS_PER_TURN)
        ready = [cid for cid, q in queues.items() if q and q[0].gate <= turn]
        rng.shuffle(ready)
        events = []
        for cid in ready[:cap]:
            item = queues[cid].pop(0)
            events.append(item.event)
            for nxt in queues[cid][:1]:
                nxt.gate = max(nxt.gate, turn + 1)
        pending -= len(events)
        turns.append(events)
        turn += 1
        if turn > MAX_TURNS + 5:  # gates beyond the limit: give up this draw
            raise ValueError("schedule does not fit")
    return turns


def add_extras(rng: random.Random, turns: list[list[TurnEvent]], tier: Tier,
               hard_set: str) -> None:
    """Behaviours without a new constraint: on some later turns, and (room allowing) a turn
    of their own at the end (reporting the plan's issues)."""
    rate = 0.25 if hard_set == "LIT" else 0.4
    for events in turns[1:]:
        if rng.random() < rate:
            events.append(TurnEvent(op=rng.choice(tier.extras)))
    if len(turns) < MAX_TURNS:
        turns.append([TurnEvent(op="issue")])
    elif not any(e.op == "issue" for e in turns[-1]):
        turns[-1].append(TurnEvent(op="issue"))
    # every behaviour of the tier at least once: a turn of its own where room allows, else
    # beside a later turn's instructions
    for op in tier.extras:
        if any(e.op == op for events in turns for e in events):
            continue
        if len(turns) < MAX_TURNS:
            turns.insert(len(turns) - 1, [TurnEvent(op=op)])
        elif len(turns) > 1:
            turns[rng.randint(1, len(turns) - 1)].append(TurnEvent(op=op))


def replay(turns: list[list[TurnEvent]], chains: list[Chain], prefs: dict[str, Preference],
           start_trip: str = "A") -> list[TurnNode]:
    """The node of every turn: trip and active preferences after its events."""
    scopes = {"A": {"all", "A"}, "B": {"all", "B"}, "M": {"all", "A", "B"}}
    state: dict[str, str | None] = {c.id: None for c in chains}
    trip = start_trip
    nodes = []
    for n, events in enumerate(turns, start=1):
        for e in events:
            if e.trip:  # redirect, merge, or a rollback to the other itinerary
                trip = e.trip
            elif e.op in ("add", "change", "rollback"):
                state[prefs[e.pref].chain] = e.pref
            elif e.op == "delete":
                state[prefs[e.replaces].chain] = None
        active = [pid for c in chains if (pid := state[c.id]) is not None
                  and prefs[pid].scope in scopes[trip]]
        feasible = not any(prefs[p].infeasible for p in active)
        nodes.append(TurnNode(turn=n, trip=trip, events=events, active=active,
                              feasible=feasible))
    return nodes


def behaviours(nodes: list[TurnNode]) -> list[str]:
    seen: list[str] = []
    for node in nodes:
        for e in node.events:
            name = BEHAVIOURS.get(e.op, e.op)
            if e.op == "rollback" and e.trip:
                name = "deletion_rollback"
            if name not in seen:
                seen.append(name)
    return seen
