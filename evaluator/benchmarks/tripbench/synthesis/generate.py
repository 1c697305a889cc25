"""Generating a TRIP-Bench task set from a world and a seed (paper 3.2, B.3).

    generate_taskset(out_dir, seed=0, size="small", tasks=None) -> (tasks file, world file)

writes `world.sqlite` (world/generate.py, same seed and size) and `tasks.jsonl`: a header
line (generator, version, seed, size, world file and its content digest) and one task per
line. Everything is drawn from `random.Random` seeded by strings of (seed, size, task index,
attempt), and nothing iterates an unordered set, so a seed gives a byte-identical file.

Task i gets the tier and hard set of entry i of the mix, repeated: "paper" (the paper's 400:
easy, mid, LIT, FIT, easy, mid, AIS, PMR, so 100/100/50/50/50/50) or "all" (easy, mid, plain
hard, LIT, FIT, AIS, PMR). A draw: the itinerary (meta.py), then constraints round-robin over the four
families until the tier's count, each kept only while the whole set stays solvable
(solvability.py), each chain tightened up to the tier's length with redundant prefixes
trimmed (a version whose feasible set equals the next one's is dropped); then the hard set's
twist, the schedule over turns (dialogue.py) and a solvability check of every turn's node
(FIT's deliberately infeasible nodes must be unsolvable instead). A draw that fails is drawn
again (up to `MAX_ATTEMPTS`). Quality control (paper 3.3): the reference planner
(planner.py) must build a plan for the last turn that passes every check and constraint
(`solvability.reference_plan` = "strict"); a draw where it cannot is drawn again.
"""

from __future__ import annotations

import multiprocessing
import os
import random
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import msgspec

from bench_data.tripbench import (
    FORMAT_NAME,
    PAPER_SPLITS,
    TASK_FILE,
    WORLD_FILE,
    Preference,
    TripMeta,
    TripStay,
    TripTask,
    TurnEvent,
)

from ..evaluation import EvalTask, evaluate, rubrics
from ..evaluation.rubric_base import RubricParams
from ..world.db import open_world
from ..world.generate import content_digest, generate_world
from . import constraints as K
from .dialogue import (
    MAX_TURNS,
    STYLES,
    TIERS,
    Chain,
    Tier,
    add_extras,
    behaviours,
    replay,
    schedule,
)
from .meta import WorldFacts, legs_ok, sample_meta, to_trip
from .planner import Planner
from .solvability import Checker

GENERATOR = "agentsweep.tripbench.synthesis"
VERSION = "2"
MIXES = {
    # the paper's evaluation set (table 2): 100 easy, 100 mid, 50 of each hard set, no plain
    # hard; interleaved so that the first N tasks keep those proportions
    "paper": (("easy", ""), ("mid", ""), ("hard", "LIT"), ("hard", "FIT"), ("easy", ""),
              ("mid", ""), ("hard", "AIS"), ("hard", "PMR")),
    # every split once, plain hard included (the test sets)
    "all": (("easy", ""), ("mid", ""), ("hard", ""), ("hard", "LIT"), ("hard", "FIT"),
            ("hard", "AIS"), ("hard", "PMR")),
}
DEFAULT_MIX = {"small": "all", "paper": "paper"}
DEFAULT_TASKS = {"small": 14, "paper": sum(PAPER_SPLITS.values())}
FACTOR = {"small": 2.0, "paper": 4.0}
"""|C| >= FACTOR x days. The paper asks 4-10; the small test world (about ten POIs of a kind
per city) holds 2."""
MAX_ATTEMPTS = 60


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


def _rng(seed: int, size: str, index: int, attempt: int) -> random.Random:
    return random.Random(f"{seed}/{size}/task/{index}/{attempt}")


def mix_of(size: str, mix: str | None) -> tuple[tuple[str, str], ...]:
    name = mix or DEFAULT_MIX.get(size, "all")
    if name not in MIXES:
        raise ValueError(f"unknown task mix {name!r} (one of {', '.join(MIXES)})")
    return MIXES[name]


def iter_tasks(world: Any, seed: int, size: str, count: int, mix: str | None = None,
               indices: Iterable[int] | None = None) -> Iterator[TripTask]:
    """Tasks 0..count-1 (or `indices`) in order; each depends only on (seed, size, index)."""
    facts = WorldFacts(world)
    checker = Checker(world, FACTOR.get(size, 4.0))
    order = mix_of(size, mix)
    for index in range(count) if indices is None else indices:
        difficulty, hard_set = order[index % len(order)]
        task_id = f"trip-{seed}-{index:04d}"
        for attempt in range(MAX_ATTEMPTS):
            draw = Draw(_rng(seed, size, index, attempt), facts, checker, TIERS[difficulty],
                        hard_set, task_id)
            task = draw.build()
            if task is not None:
                yield task
                break
        else:
            raise RuntimeError(f"task {task_id} ({difficulty} {hard_set}): no solvable draw in "
                               f"{MAX_ATTEMPTS} attempts")


def header(seed: int, size: str, count: int, world_path: Path,
           mix: str | None = None) -> dict[str, Any]:
    return {"header": {"format": FORMAT_NAME, "generator": GENERATOR, "version": VERSION,
                       "seed": seed, "size": size, "world": world_path.name,
                       "world_digest": content_digest(world_path), "tasks": count,
                       "mix": mix or DEFAULT_MIX.get(size, "all"),
                       "candidate_factor": FACTOR.get(size, 4.0)}}


def _some_tasks(world_path: Path, seed: int, size: str, count: int, mix: str | None,
                indices: list[int]) -> list[bytes]:
    """A worker's share of a task set: the encoded tasks of `indices`."""
    world = open_world(world_path)
    try:
        return [msgspec.json.encode(t)
                for t in iter_tasks(world, seed, size, count, mix, indices)]
    finally:
        world.close()


def write_tasks(path: Path, world_path: Path, seed: int, size: str, count: int,
                mix: str | None = None, workers: int = 1) -> Path:
    """Write the task file for the world at `world_path` (replaced atomically); `workers`
    processes draw the tasks (the file is the same whatever their number)."""
    mix_of(size, mix)
    lines = [msgspec.json.encode(header(seed, size, count, world_path, mix))]
    workers = max(1, min(workers, count))
    if workers == 1:
        lines += _some_tasks(world_path, seed, size, count, mix, list(range(count)))
    else:
        shares = [list(range(w, count, workers)) for w in range(workers)]
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) \
                as pool:
            done = list(pool.map(_some_tasks, *zip(*[(world_path, seed, size, count, mix, share)
                                                     for share in shares], strict=True)))
        by_index = {i: line for share, out in zip(shares, done, strict=True)
                    for i, line in zip(share, out, strict=True)}
        lines += [by_index[i] for i in range(count)]
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(b"\n".join(lines) + b"\n")
    os.replace(tmp, path)
    return path


def generate_taskset(out_dir: str | os.PathLike[str], seed: int = 0, size: str = "small",
                     tasks: int | None = None, mix: str | None = None,
                     workers: int = 1) -> tuple[Path, Path]:
    """The world and the task file of (seed, size) in `out_dir`; returns (tasks, world).
    `mix`: "paper" (the paper's evaluation set; the default of size paper, 400 tasks) or
    "all" (every split in turn, plain hard included; the default of size small)."""
    mix_of(size, mix)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    world_path = generate_world(out / WORLD_FILE, size=size, seed=seed)
    count = DEFAULT_TASKS.get(size, 14) if tasks is None else tasks
    return (write_tasks(out / TASK_FILE, world_path, seed, size, count, mix, workers),
            world_path)
