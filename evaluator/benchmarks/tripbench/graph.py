"""A task's dialogue graph as the episode walks it: the protocol variants of the paper's table
5 and FIT's rollbacks injected when the agent finds no solution.

`replay(task, events)` turns per-turn event lists into the nodes (trip in force, active
preferences, feasibility), as the synthesiser's replay does: one version per chain, chains in
their order, PMR's scoped wishes only on the trips they belong to. The variants derive a
graph from the task's:

- `single_turn`: one turn stating the trip and every final requirement (explicitly: no vague
  forms), the final node's trip and active preferences;
- `no_issue`: the multi-turn dialogue without issue reporting (issue events removed; a turn
  left with no event is dropped, turn 1 stays);
- `multi_turn`: the task's graph.

Each variant's last node has the task's final trip and active preferences, so the judge's
final requirements do not depend on the variant.
"""

from __future__ import annotations

import re

import msgspec

from bench_data.tripbench import TripTask, TurnEvent, TurnNode

VARIANTS = ("multi_turn", "single_turn", "no_issue")
_SCOPES = {"A": {"all", "A"}, "B": {"all", "B"}, "M": {"all", "A", "B"}}


def _chain_order(chain: str) -> tuple[int, str]:
    m = re.fullmatch(r"c(\d+)", chain)
    return (int(m.group(1)), "") if m else (1 << 30, chain)


def replay(task: TripTask, turns: list[list[TurnEvent]], start_trip: str = "A"
           ) -> list[TurnNode]:
    prefs = task.preferences
    chains = sorted({p.chain for p in prefs.values()}, key=_chain_order)
    state: dict[str, str | None] = dict.fromkeys(chains)
    trip = start_trip
    nodes = []
    for n, events in enumerate(turns, start=1):
        for e in events:
            if e.trip:
                trip = e.trip
            elif e.op in ("add", "change", "rollback") and e.pref in prefs:
                state[prefs[e.pref].chain] = e.pref
            elif e.op == "delete" and e.replaces in prefs:
                state[prefs[e.replaces].chain] = None
        active = [pid for c in chains if (pid := state[c]) is not None
                  and prefs[pid].scope in _SCOPES.get(trip, {"all"})]
        nodes.append(TurnNode(turn=n, trip=trip, events=list(events), active=active,
                              feasible=not any(prefs[p].infeasible for p in active)))
    return nodes


def variant_task(task: TripTask, variant: str) -> TripTask:
    """The task whose graph the episode walks in protocol `variant` (see the module doc)."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown TRIP-Bench protocol {variant!r} (one of "
                         f"{', '.join(VARIANTS)})")
    if variant == "multi_turn":
        return task
    last = task.turns[-1]
    if variant == "single_turn":
        events = [TurnEvent(op="add", pref=p) for p in last.active]
        node = TurnNode(turn=1, trip=last.trip, events=events, active=list(last.active),
                        feasible=last.feasible)
        prefs = {pid: msgspec.structs.replace(p, vague="")
                 for pid, p in task.preferences.items()}
        return msgspec.structs.replace(task, preferences=prefs, turns=[node])
    turns = [[e for e in node.events if e.op != "issue"] for node in task.turns]
    kept = [events for n, events in enumerate(turns) if events or n == 0]
    return msgspec.structs.replace(task, turns=replay(task, kept))


class LiveGraph:
    """The graph of one episode: FIT's rollback of an infeasible wish moves to the turn after
    the agent declares that it finds no solution (or stays at its scheduled turn, "at the
    latest now"); the nodes are replayed after each move."""

    def __init__(self, task: TripTask) -> None:
        self.task = task
        self.events = [list(node.events) for node in task.turns]
        self.nodes = list(task.turns)
        self.moved: list[dict[str, object]] = []

    def node(self, turn: int) -> TurnNode:
        return self.nodes[min(max(turn, 1), len(self.nodes)) - 1]

    def __len__(self) -> int:
        return len(self.nodes)

    def agent_gave_up(self, turn: int) -> list[str]:
        """The agent's answer at `turn` says a wish cannot be met: bring the rollbacks of the
        infeasible wishes active there forward to turn + 1. Returns the moved rollbacks'
        preference ids."""
        node = self.node(turn)
        bad = [p for p in node.active if self.task.preferences[p].infeasible]
        moved = []
        for pid in bad:
            for later in range(turn + 1, len(self.events)):   # 0-based: turns turn+2..
                found = [e for e in self.events[later]
                         if e.op == "rollback" and e.replaces == pid and not e.trip]
                if not found:
                    continue
                self.events[later].remove(found[0])
                self.events[turn].append(found[0])
                moved.append(pid)
                self.moved.append({"pref": pid, "from": later + 1, "to": turn + 1})
                break
        if moved:
            self.events = [ev for n, ev in enumerate(self.events) if ev or n <= turn]
            self.nodes = replay(self.task, self.events)
        return moved


_GIVE_UP = re.compile(
    r"\b(cannot|can ?not|can't|unable to|not (?:be )?possible|impossible|no way to|infeasible|"
    r"not feasible|could not find|couldn't find|no (?:[\w-]+ ){0,3}(?:available|found|exists?|"
    r"matches|meets?|satisf\w+)|none (?:of \w+ )?(?:is|are) available|does not exist|"
    r"doesn't exist|not available)\b", re.IGNORECASE)


def declares_infeasible(reply: str) -> bool:
    """Whether the agent's answer says (in words, outside a plan) that something cannot be
    done: "cannot", "not possible", "no hotel ... available", ..."""
    text = re.sub(r"```.*?```", " ", reply or "", flags=re.DOTALL)
    return bool(_GIVE_UP.search(text))
