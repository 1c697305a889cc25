"""Generating a TRIP-Bench task set from a world and a seed (paper 3.2, B.3).

    generate_taskset(out_dir, seed=0, size="small", tasks=None) -> (tasks file, world file)

writes `world.sqlite` (world/generate.py, same seed and size) and `tasks.jsonl`: a header
line (generator, version, seed, size, world file and its content digest) and one task per
line. Everything is drawn from `random.Random` seeded by strings of (seed, size, task index,
attempt), and nothing iterates an unordered set, so a seed gives a byte-identical file.

Task i gets the tier and hard set of entry i of the mix, repeated: "paper" (the paper's 400:
easy, mid, LIT, FIT, easy, mid, AIS, PMR, so 100/100/50/50/50/50) or "all" (easy, mid, plain
hard, LIT, FIT, AIS, PMR). A draw (draw.py): the itinerary (meta.py), then constraints
round-robin over the four families until the tier's count, each kept only while the whole
set stays solvable (solvability.py), each chain tightened up to the tier's length with
redundant prefixes trimmed (a version whose feasible set equals the next one's is dropped);
then the hard set's twist, the schedule over turns (dialogue.py) and a solvability check of every turn's node
(FIT's deliberately infeasible nodes must be unsolvable instead). A draw that fails is drawn
again (up to `MAX_ATTEMPTS`). Quality control (paper 3.3): the reference planner
(planner.py) must build a plan for the last turn that passes every check and constraint
(`solvability.reference_plan` = "strict"); a draw where it cannot is drawn again.
"""

from __future__ import annotations

import multiprocessing
import os
import random
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import msgspec

from evaluator.benchmarks.tripbench.data import (
    FORMAT_NAME,
    PAPER_SPLITS,
    TASK_FILE,
    WORLD_FILE,
    TripTask,
)

from ..world.db import open_world
from ..world.generate import content_digest, generate_world
from .dialogue import TIERS
from .draw import Draw
from .meta import WorldFacts
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


CACHED_ROWS = 100_000


class CachedQueries:
    """The world with its recent query results kept (at most `limit` rows, the least recently
    asked dropped first): a task's draws ask the same questions again and again (four hard
    tasks of the paper world: 1,176 queries, 323 distinct, 1.5 million rows read for 282,000
    distinct). The world is read-only and no caller changes a row; each caller gets its own
    list."""

    def __init__(self, world: Any, limit: int = CACHED_ROWS) -> None:
        self._world = world
        self._limit = limit
        self._rows: OrderedDict[Any, list[dict[str, Any]]] = OrderedDict()
        self._held = 0

    def query(self, sql: str, params: Any = ()) -> list[dict[str, Any]]:
        key = (sql, tuple(sorted(params.items())) if isinstance(params, dict)
               else tuple(params))
        rows = self._rows.get(key)
        if rows is None:
            rows = self._rows[key] = self._world.query(sql, params)
            self._held += len(rows)
            while self._held > self._limit and len(self._rows) > 1:
                self._held -= len(self._rows.popitem(last=False)[1])
        else:
            self._rows.move_to_end(key)
        return list(rows)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._world, name)


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
    world = CachedQueries(world)
    facts = WorldFacts(world)
    order = mix_of(size, mix)
    for index in range(count) if indices is None else indices:
        difficulty, hard_set = order[index % len(order)]
        task_id = f"trip-{seed}-{index:04d}"
        # a checker per task: its caches are per trip, which another task does not share;
        # one for all tasks grew by 60-85 MB a task (12+ GB in a worker of the paper set)
        checker = Checker(world, FACTOR.get(size, 4.0))
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


def balanced_shares(count: int, workers: int, period: int) -> list[list[int]]:
    """Task indices per worker, each worker getting every position of the mix alike: index i
    (position i % period of block i // period) goes to worker (i % period + i // period) %
    workers, so the blocks rotate. Every other index, as before, gave one of two workers all
    the mid, FIT and PMR tasks of the paper's mix (the costly ones) and doubled the wall
    time."""
    shares: list[list[int]] = [[] for _ in range(workers)]
    for i in range(count):
        shares[(i % period + i // period) % workers].append(i)
    return shares


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
        shares = balanced_shares(count, workers, len(mix_of(size, mix)))
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
