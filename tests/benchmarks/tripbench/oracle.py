"""A scripted "oracle" for TRIP-Bench, served as one OpenAI-compatible endpoint for both roles.

- The user simulator's requests (no tools offered) get an empty answer, so the protocol says
  each turn's notes in plain words (`simulator.plain`): the dialogue still walks the task's
  graph turn by turn, and the first user message names the task.
- The agent's requests (tools offered) get, every turn, the reference planner's plan for the
  task's final requirements (`synthesis.planner.plan_for`, the plan that made the task
  solvable when it was generated) as the single ```json block the built-in agent prompt asks
  for. It calls no tool and never says a wish cannot be met.

The task of an agent request is the one whose first turn, said plainly, is the conversation's
first user message (computed for every task of `--data` at start; two tasks that open alike
are refused at start). Run: `python -m tests.benchmarks.tripbench.oracle --data DIR` (DIR
holds `tasks.jsonl` and its world); prints `ORACLE LISTENING <url>` when it accepts
connections (oracle_http.py). `--workers N` computes the plans in N processes at start;
`--miss-every N` answers every Nth task of the file (index 0, N, 2N, ...) with no plan, for a
known mix of passes and failures.
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

NO_PLAN = "I am still looking into your trip."


def opening(task: Any, world: Any) -> str:
    """The first user message of `task`'s dialogue when the simulator answers nothing."""
    from evaluator.benchmarks.tripbench.graph import LiveGraph, variant_task
    from evaluator.benchmarks.tripbench.simulator import Simulator, plain

    live = variant_task(task, "multi_turn")
    return plain(Simulator(live, world).notes(LiveGraph(live).node(1), None, "", ""))


def answer(plan: dict[str, Any] | None) -> str:
    if plan is None:
        return "I could not find a plan that meets every requirement."
    return "Here is the itinerary.\n\n```json\n" + json.dumps(plan, ensure_ascii=False,
                                                             indent=1) + "\n```"


def _load(data: Path) -> tuple[list[Any], Path]:
    from evaluator.benchmarks.tripbench.data import load_tripbench_file

    taskset = load_tripbench_file(data / "tasks.jsonl")
    return [t.payload for t in taskset.tasks], data / "world.sqlite"


def _plans(data: str, indices: list[int], miss_every: int = 0
           ) -> list[tuple[int, str, str]]:
    """(index, opening, answer) of the tasks at `indices` (in a worker process)."""
    from evaluator.benchmarks.tripbench.synthesis.generate import FACTOR
    from evaluator.benchmarks.tripbench.synthesis.planner import plan_for
    from evaluator.benchmarks.tripbench.synthesis.solvability import Checker
    from evaluator.benchmarks.tripbench.world import open_world

    tasks, world_path = _load(Path(data))
    with open_world(world_path) as world:
        factor = FACTOR.get(world.meta.get("size", "small"), 4.0)
        return [(i, opening(tasks[i], world),       # a checker per task: its caches are per trip
                 NO_PLAN if miss_every and i % miss_every == 0
                 else answer(plan_for(world, Checker(world, factor), tasks[i])))
                for i in indices]


def answers(data: Path, workers: int = 1, miss_every: int = 0) -> dict[str, str]:
    """The oracle's answer for each task, by the task's opening message."""
    count = len(_load(data)[0])
    shares = [list(range(w, count, workers)) for w in range(max(1, workers))]
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            rows = [r for part in pool.map(_plans, [str(data)] * len(shares), shares,
                                           [miss_every] * len(shares)) for r in part]
    else:
        rows = _plans(str(data), shares[0], miss_every)
    by_opening: dict[str, str] = {}
    for i, first, text in sorted(rows):
        if first in by_opening:
            raise SystemExit(f"oracle: task {i} of {data} opens like an earlier one")
        by_opening[first] = text
    return by_opening


def serve(data: Path, port: int, workers: int, miss_every: int = 0) -> None:
    from ..oracle_http import serve as serve_answers

    by_opening = answers(data, workers, miss_every)

    def answer(body: dict[str, Any]) -> str | None:
        if not body.get("tools"):                   # the user simulator
            return ""
        first = next(m["content"] for m in body["messages"] if m["role"] == "user")
        return by_opening.get(first)

    serve_answers(answer, port)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--miss-every", type=int, default=0)
    args = parser.parse_args()
    serve(args.data, args.port, args.workers, args.miss_every)


if __name__ == "__main__":
    sys.exit(main())
