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
                   help="number of tasks (default: 14 small, 400 paper)")
    p.add_argument("--mix", choices=("paper", "all"), default=None,
                   help="which splits, in turn: paper = the paper's evaluation set (100 easy, "
                   "100 mid, 50 each of LIT, FIT, AIS, PMR per 400; default of --size paper), "
                   "all = easy, mid, plain hard and the four hard sets (default of --size "
                   "small)")
    p.add_argument("--workers", type=int, default=1,
                   help="processes drawing the tasks (the file is the same for any number; "
                   "the paper's 400 take about 15 s each on one core)")
    p.add_argument("--force", action="store_true",
                   help="write into a directory that is not empty")
    p.set_defaults(func=cmd_generate)


def cmd_generate(args: argparse.Namespace) -> int:
    from bench_data.tripbench import SPLITS, split_of

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
    if args.workers < 1:
        print("error: --workers must be >= 1", file=sys.stderr)
        return 2
    try:
        tasks, world = generate_taskset(out, seed=args.seed, size=args.size, tasks=args.tasks,
                                        mix=args.mix, workers=args.workers)
    except (RuntimeError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    counts: dict[str, int] = {}
    for line in tasks.read_text(encoding="utf-8").splitlines()[1:]:
        rec = json.loads(line)
        split = split_of(rec["difficulty"], rec.get("hard_set", ""))
        counts[split] = counts.get(split, 0) + 1
    summary = ", ".join(f"{g} {counts[g]}" for g in SPLITS if g in counts)
    print(f"world: {world}")
    print(f"tasks: {tasks} ({sum(counts.values())}: {summary})")
    print("splits are the data's subsets: `--subset LIT` runs one, `--limit N` takes N of "
          "each split")
    return 0
