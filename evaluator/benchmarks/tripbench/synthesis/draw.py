"""One attempt at one task (generate.py draws them): the itinerary, the constraint chains,
the hard set's twist, the schedule over turns, the solvability of every node and the
reference plan of the last one (quality control)."""

from __future__ import annotations

import random
from typing import Any

import msgspec

from bench_data.tripbench import Preference, TripMeta, TripStay, TripTask, TurnEvent

from ..evaluation import EvalTask, evaluate, rubrics
from ..evaluation.rubric_base import RubricParams
from . import constraints as K
from .dialogue import MAX_TURNS, STYLES, Chain, Tier, add_extras, behaviours, replay, schedule
from .meta import WorldFacts, legs_ok, sample_meta, to_trip
from .planner import Planner
from .solvability import Checker


class Draw:
    """One attempt at one task."""

    def __init__(self, rng: random.Random, facts: WorldFacts, checker: Checker, tier: Tier,
                 hard_set: str, task_id: str) -> None:
        self.rng = rng
        self.facts = facts
        self.world = facts.world
        self.checker = checker
        self.tier = tier
        self.hard_set = hard_set
        self.task_id = task_id
        self.prefs: dict[str, Preference] = {}
        self.chains: list[Chain] = []
        self.trips: dict[str, TripMeta] = {}

    # -- constraints --------------------------------------------------------------------------
    def _pref(self, chain: str, step: int, kind: str, e: RubricParams, scope: str,
              infeasible: bool = False, wording: int = 0) -> Preference:
        pid = f"P{len(self.prefs) + 1}"
        pref = Preference(id=pid, chain=chain, step=step, family=K.FAMILY[kind],
                          rubric=msgspec.to_builtins(e),
                          text=K.say(kind, e, self.world, wording),
                          infeasible=infeasible, scope=scope)
        self.prefs[pid] = pref
        return pref

    def _specs(self, scope_trip: str, extra: list[RubricParams] = ()) -> list[RubricParams]:
        allowed = {"A": {"all", "A"}, "B": {"all", "B"}, "M": {"all", "A", "B"}}[scope_trip]
        out = [rubrics.decode_spec(c.prefs[-1].rubric) for c in self.chains
               if c.scope in allowed]
        return out + list(extra)

    def _ok(self, trip_key: str, specs: list[RubricParams]) -> bool:
        return self.checker.check(to_trip(self.trips[trip_key]), specs).ok

    def add_chain(self, kind: str, scope: str, city: str | None, trip_key: str) -> bool:
        trip = to_trip(self.trips[trip_key])
        where = K.Scope(self.world, trip, city, self.checker.rows)
        e = K.first(kind, self.rng, where)
        if e is None or not self._ok(trip_key, self._specs(trip_key, [e])):
            return False
        versions = [e]
        length = self.rng.randint(1, self.tier.max_chain)
        while len(versions) < length:
            nxt = K.tighten(kind, self.rng, where, versions[-1])
            if nxt is None or not self._ok(trip_key, self._specs(trip_key, [nxt])):
                break
            versions.append(nxt)
        # trajectory trimming: a version that filters nothing more than the next is dropped
        kept = [versions[-1]]
        for v in reversed(versions[:-1]):
            if (self.checker.generate(v, trip).feasible
                    != self.checker.generate(kept[0], trip).feasible):
                kept.insert(0, v)
        cid = f"c{len(self.chains) + 1}"
        wording = self.rng.randrange(2)  # one of the type's two wordings, kept along the chain
        prefs = [self._pref(cid, i, kind, v, scope, wording=wording)
                 for i, v in enumerate(kept)]
        self.chains.append(Chain(cid, kind, prefs, scope, wording=wording))
        return True

    def fill(self, target: int, scope: str, trip_key: str, cities: list[str | None]) -> int:
        """Add chains round-robin over the families until `target` of them exist."""
        used = {(c.kind, msgspec.to_builtins(c.prefs[0].rubric).get("city")) for c in self.chains}
        families = list(K.FAMILIES)
        self.rng.shuffle(families)
        by_family = {f: [t for t in K.TYPES if K.FAMILY[t] == f] for f in families}
        added = 0
        stalled = 0
        while len(self.chains) < target and stalled < len(families):
            family = families[len(self.chains) % len(families)]
            kinds = [t for t in by_family[family]]
            self.rng.shuffle(kinds)
            for kind in kinds:
                city = self.rng.choice(cities) if K.city_scoped(kind) else None
                if (kind, city) in used:
                    continue
                if self.add_chain(kind, scope, city, trip_key):
                    used.add((kind, city))
                    added += 1
                    stalled = 0
                    break
            else:
                stalled += 1
                families.append(families.pop(len(self.chains) % len(families)))
        return added

    # -- the task ------------------------------------------------------------------------------
    def trip(self) -> bool:
        n_cities = 2 if self.hard_set == "PMR" else self.rng.choice(self.tier.cities)
        for _ in range(20):
            meta = sample_meta(self.rng, self.facts, n_cities, self.tier.days)
            if meta is not None:
                self.trips["A"] = meta
                break
        else:
            return False
        if self.hard_set != "PMR":
            return True
        a = self.trips["A"]
        for _ in range(10):
            b = sample_meta(self.rng, self.facts, 2, self.tier.days, origin=a.origin,
                            people=a.number_of_people, start=a.start_date,
                            n_days=len(to_trip(a).dates()),
                            exclude=(a.stays[0].city,))
            if b is None:
                continue
            nights = a.stays[0].nights or 1
            if nights < 2:
                continue
            first = self.rng.randint(1, nights - 1)
            m = TripMeta(origin=a.origin, stays=[TripStay(a.stays[0].city, first),
                                                 TripStay(b.stays[0].city, nights - first)],
                         start_date=a.start_date, end_date=a.end_date,
                         number_of_people=a.number_of_people)
            if legs_ok(self.facts, m):
                self.trips["B"], self.trips["M"] = b, m
                return True
        return False

    def build(self) -> TripTask | None:
        if not self.trip():
            return None
        tier, rng = self.tier, self.rng
        lo, hi = tier.constraints
        first_lo, first_hi = tier.first
        if self.hard_set == "LIT":
            first_lo, first_hi = 1, 3
        target = rng.randint(lo, hi)
        a = self.trips["A"]
        gates: dict[str, int] = {}
        if self.hard_set == "PMR":
            shared = min(target - 2, rng.randint(6, 9))
            self.fill(shared, "all", "A", [None])
            if len(self.chains) < 6:  # the two itineraries share 6-9 chains
                return None
            own = (target - len(self.chains)) // 2
            self.fill(len(self.chains) + max(1, own), "A", "A", [a.stays[0].city])
            self.fill(len(self.chains) + max(1, own), "B", "B",
                      [self.trips["B"].stays[0].city])
            if not any(c.scope == "B" for c in self.chains):
                return None
        else:
            self.fill(target, "all", "A", [None, *(s.city for s in a.stays)])
        if len(self.chains) < lo:
            return None
        n_first = min(rng.randint(first_lo, first_hi), len(self.chains))
        order = list(self.chains)
        rng.shuffle(order)
        firsts = [c for c in order if c.scope != "B"][:n_first]
        for c in firsts:
            c.first_turn = True
        for c in self.chains:
            if len(c.prefs) > 1 and rng.random() < 0.3:
                c.rollback = True
            elif len(self.chains) > 2 and rng.random() < 0.1:
                c.delete = True
        if self.hard_set == "FIT" and not self._fit(rng.randint(2, 4)):
            return None
        redirect_at = 0
        if self.hard_set == "PMR":
            redirect_at = rng.randint(2, 4)
            for c in self.chains:
                if c.scope == "B":
                    gates[c.id] = redirect_at
        try:
            turns = schedule(rng, self.chains, tier, self.hard_set, gates)
        except ValueError:
            return None
        if self.hard_set == "PMR":
            while len(turns) < redirect_at:
                turns.append([])
            turns[redirect_at - 1].insert(0, TurnEvent(op="redirect", trip="B"))
            ending = rng.choice(("merge", "rollback"))
            if len(turns) >= MAX_TURNS:
                return None
            turns.append([TurnEvent(op=ending, trip="M" if ending == "merge" else "A")])
        add_extras(rng, turns, tier, self.hard_set)
        if len(turns) > MAX_TURNS:
            return None
        nodes = replay(turns, self.chains, self.prefs)
        final = None
        for node in nodes:
            specs = [rubrics.decode_spec(self.prefs[p].rubric) for p in node.active]
            result = self.checker.check(to_trip(self.trips[node.trip]), specs)
            if result.ok != node.feasible:
                return None
            final = result
        # quality control (paper 3.3): the reference planner must find a plan for the last
        # turn that passes every check and constraint
        last = nodes[-1]
        plan = Planner(self.world, self.checker).plan(
            TripTask(task_id=self.task_id, difficulty=tier.name, trips=self.trips,
                     preferences=self.prefs, turns=nodes), last)
        if plan is None or not evaluate(msgspec.json.encode(plan).decode(),
                                        eval_task_at(self.trips, self.prefs, last),
                                        self.world).strict:
            return None
        style = ""
        if self.hard_set == "AIS":
            # ambiguity throughout the dialogue (paper 3.2): two wishes in three are first
            # said vaguely, the first turn's included
            style = rng.choice(STYLES)
            said = [p for p in self.prefs.values() if not p.infeasible]
            first = {c.prefs[0].id for c in self.chains if c.first_turn}
            vague = set(rng.sample([p.id for p in said], -(-2 * len(said) // 3)))
            if first and not vague & first:
                vague.add(min(first))
            for p in said:
                if p.id in vague:
                    p.vague = K.vague(self._kind(p))
        used = {p for node in nodes for e in node.events for p in (e.pref, e.replaces) if p}
        prefs = {pid: p for pid, p in self.prefs.items() if pid in used}
        assert final is not None
        return TripTask(task_id=self.task_id, difficulty=tier.name, hard_set=self.hard_set,
                        trips=self.trips, preferences=prefs, turns=nodes,
                        behaviours=behaviours(nodes), style=style,
                        solvability={**msgspec.to_builtins(final), "reference_plan": "strict"})

    def _kind(self, pref: Preference) -> str:
        return str(pref.rubric["type"])

    def _fit(self, count: int) -> bool:
        """FIT: up to `count` chains get an infeasible version, rolled back later."""
        trip = to_trip(self.trips["A"])
        done = 0
        for c in self.chains:
            if done >= count:
                break
            if c.delete:
                continue
            current = c.prefs[-2] if c.rollback else c.prefs[-1]
            e = rubrics.decode_spec(current.rubric)
            bad = K.impossible(c.kind, K.Scope(self.world, trip, e.city, self.checker.rows), e)
            if bad is None or self._ok("A", self._specs("A", [bad])):
                continue
            c.fit = self._pref(c.id, len(c.prefs), c.kind, bad, c.scope, infeasible=True,
                               wording=c.wording)
            done += 1
        return done >= 2


def eval_task_at(trips: dict[str, TripMeta], prefs: dict[str, Preference], node: Any
                 ) -> EvalTask:
    trip = to_trip(trips[node.trip])
    return EvalTask(task_id="", origin=trip.origin, stays=trip.stays,
                    start_date=trip.start_date, end_date=trip.end_date,
                    number_of_people=trip.number_of_people,
                    rubrics=[rubrics.decode_spec(prefs[p].rubric) for p in node.active])
