"""`agentsweep data tripbench generate`: a generated world and task set in one directory
(the benchmark's data command, registered through `Benchmark.data_commands`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def data_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("generate", help="write a generated world (world.sqlite) and task set "
                       "(tasks.jsonl) for a seed into a directory")
    p.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    p.add_argument("--out", type=Path, required=True, help="output directory")
    p.add_argument("--size", choices=("small", "paper"), default="small",
                   help="world size: small (6 cities, 7 days; tests) or paper (40 cities, "
                   "60 days)")
    p.add_argument("--tasks", type=int, default=None,
                   help="number of tasks (default: 14 small, 140 paper)")
    p.add_argument("--force", action="store_true",
                   help="write into a directory that is not empty")
    p.set_defaults(func=cmd_generate)


def cmd_generate(args: argparse.Namespace) -> int:
    from bench_data.tripbench import HARD_SETS

    from .synthesis import generate_taskset

    out: Path = args.out
    if out.exists() and not out.is_dir():
        print(f"error: {out} exists and is not a directory", file=sys.stderr)
        return 2
    if out.is_dir() and any(out.iterdir()) and not args.force:
        print(f"error: {out} is not empty (pass --force to write into it)", file=sys.stderr)
        return 2
    if args.tasks is not None and args.tasks < 1:
        print("error: --tasks must be >= 1", file=sys.stderr)
        return 2
    try:
        tasks, world = generate_taskset(out, seed=args.seed, size=args.size, tasks=args.tasks)
    except (RuntimeError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    counts: dict[str, int] = {}
    for line in tasks.read_text(encoding="utf-8").splitlines()[1:]:
        rec = json.loads(line)
        group = rec["difficulty"] + (f" {rec['hard_set']}" if rec.get("hard_set") else "")
        counts[group] = counts.get(group, 0) + 1
    order = ["easy", "mid", "hard", *(f"hard {h}" for h in HARD_SETS)]
    summary = ", ".join(f"{g} {counts[g]}" for g in order if g in counts)
    print(f"world: {world}")
    print(f"tasks: {tasks} ({sum(counts.values())}: {summary})")
    return 0
