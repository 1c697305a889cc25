"""`agentsweep sweep SWEEP.toml`: run a grid of models x benchmarks, one run per cell.

Exit codes: 0 every cell finished; 3 some cell has failed units (rerun with --resume);
2 bad sweep file or arguments; 130 interrupted (continue with --resume SWEEP_DIR).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "sweep",
        help="run a grid of models x benchmarks (one run directory per cell) and compare them",
        description="Expand SWEEP.toml into grid cells (models x benchmarks, same trials, seed "
        "and judge settings) and run each cell as `agentsweep run` would, into "
        "<out>/<name>/<model>__<benchmark>/; then write grid.md/.html/.json comparing the "
        "cells. See docs/cluster.md.",
    )
    p.add_argument("sweep", nargs="?", default=None, help="sweep file (TOML)")
    p.add_argument("--resume", metavar="SWEEP_DIR",
                   help="continue a sweep: finished cells and units are skipped")
    p.add_argument("--ray", metavar="ADDRESS",
                   help="run on a Ray cluster (not built yet: cells run locally only)")
    p.add_argument("--progress", choices=("auto", "plain", "off"),
                   help="each cell's progress line (see `agentsweep run --progress`)")
    p.add_argument("--report-only", action="store_true",
                   help="only (re)write the grid report of --resume SWEEP_DIR")
    p.set_defaults(func=sweep_command)


def sweep_command(args: argparse.Namespace) -> int:
    from evaluator.sweep.grid import SweepError
    from evaluator.sweep.local import EXIT_INTERRUPTED, EXIT_USAGE, prepare, run_local
    from evaluator.sweep.report import build_grid, render_markdown, write_grid

    if args.ray:
        print("agentsweep sweep: --ray: running cells on a Ray cluster is not built yet; "
              "run the sweep without --ray (cells run on this machine)", file=sys.stderr)
        return EXIT_USAGE
    try:
        if args.report_only:
            if not args.resume:
                print("agentsweep sweep: --report-only needs --resume SWEEP_DIR",
                      file=sys.stderr)
                return EXIT_USAGE
            grid = build_grid(Path(args.resume))
            paths = write_grid(grid, Path(args.resume))
            print(render_markdown(grid))
            print(f"grid: {paths['md']}")
            return 0
        sweep, cells = prepare(args.sweep, args.resume)
        try:
            import uvloop

            runner = uvloop.run
        except ImportError:  # pragma: no cover - uvloop is a dependency
            runner = asyncio.run
        outcome = runner(run_local(sweep, cells, resume=bool(args.resume),
                                   progress=args.progress))
    except SweepError as exc:
        print(f"agentsweep sweep: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for line in outcome.lines:
        print(line)
    if outcome.exit_code == EXIT_INTERRUPTED:
        print(f"interrupted; continue with `agentsweep sweep --resume {outcome.directory}`",
              file=sys.stderr)
        return outcome.exit_code
    if sweep.spec.report:
        grid = build_grid(outcome.directory)
        paths = write_grid(grid, outcome.directory)
        print(render_markdown(grid))
        print(f"grid: {paths['md']}")
    return outcome.exit_code
