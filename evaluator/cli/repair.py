"""`agentsweep repair RUN_DIR`: move undecodable lines of a run's results files aside.

Exit codes: 0 repaired (or nothing to repair); 2 not a run directory. See
`evaluator/run/repair.py` and docs/run_dir.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "repair",
        help="move undecodable lines of a run's episodes/judgements/failures files to "
        "RUN_DIR/quarantine.jsonl",
        description="Check every line of RUN_DIR's episodes.jsonl, judgements.jsonl and "
        "failures.jsonl; move the lines that do not decode (with their line numbers and the "
        "error) to RUN_DIR/quarantine.jsonl and keep the rest, so `run --resume`, `judge` and "
        "`report` can go on. Not while a run or judge is writing to RUN_DIR.",
    )
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    p.set_defaults(func=run_repair)


def run_repair(args: argparse.Namespace) -> int:
    from evaluator.run.repair import repair_run

    run_dir: Path = args.run_dir
    if not (run_dir / "episodes.jsonl").is_file() and not (run_dir / "manifest.json").is_file():
        print(f"agentsweep repair: {run_dir}: not a run directory (no episodes.jsonl or "
              "manifest.json)", file=sys.stderr)
        return 2
    try:
        result = repair_run(run_dir)
    except OSError as exc:
        print(f"agentsweep repair: {run_dir}: {exc}", file=sys.stderr)
        return 2
    for line in result.lines():
        print(line)
    if result.moved:
        print(f"{run_dir}: continue with `agentsweep run --resume {run_dir}` (units whose "
              "episode was moved run again) or `agentsweep judge` / `report`")
    return 0
