"""`agentsweep sweep SWEEP.toml`: run a grid of models x benchmarks, one run per cell.

Exit codes: 0 every cell finished; 3 some cell has failed units (rerun with --resume);
2 bad sweep file or arguments; 130 interrupted (continue with --resume SWEEP_DIR).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evaluator.sweep.grid import Sweep
    from evaluator.sweep.local import SweepOutcome


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
                   help="continue a sweep: finished cells and units are skipped, and episodes "
                   "recorded without their judgements are judged (with judge = true)")
    p.add_argument("--out", metavar="DIR",
                   help="directory that holds sweep directories: the sweep goes to DIR/<name>/ "
                   "(replaces the sweep file's `out`; not with --resume)")
    p.add_argument("--ray", metavar="ADDRESS",
                   help="run the cells on a Ray cluster: 'auto' (the cluster `ray start` "
                   "made on this node), an address (ray://host:10001, host:6379), or 'local' "
                   "(a private single-node cluster on 127.0.0.1)")
    p.add_argument("--lease-timeout", type=float, default=60.0, metavar="S",
                   help="with --ray: a cell whose runner sent no heartbeat for S seconds is "
                   "leased to another runner, which resumes it (60)")
    p.add_argument("--runners-per-node", type=int, default=1, metavar="N",
                   help="with --ray: cell runners per node (1; each runs one cell at a time)")
    p.add_argument("--engine-url", metavar="URL",
                   help="use this running server wherever a cell says 'embedded' (instead of "
                   "starting the engine)")
    p.add_argument("--progress", choices=("auto", "plain", "off"),
                   help="each cell's progress line (see `agentsweep run --progress`)")
    p.add_argument("--report-only", action="store_true",
                   help="only (re)write the grid report of --resume SWEEP_DIR")
    p.set_defaults(func=sweep_command)


def sweep_command(args: argparse.Namespace) -> int:
    from evaluator.sweep.grid import SweepError
    from evaluator.sweep.local import EXIT_USAGE, prepare, run_local
    from evaluator.sweep.report import build_grid, render_markdown, write_grid

    if not 1.0 <= args.lease_timeout <= 86400.0:
        print("agentsweep sweep: --lease-timeout must be in [1, 86400] seconds",
              file=sys.stderr)
        return EXIT_USAGE
    if args.engine_url is not None:
        from urllib.parse import urlsplit

        u = urlsplit(args.engine_url)
        if u.scheme not in ("http", "https") or not u.hostname:
            print(f"agentsweep sweep: --engine-url {args.engine_url!r}: not an http(s) URL",
                  file=sys.stderr)
            return EXIT_USAGE
    if not 1 <= args.runners_per_node <= 64:
        print("agentsweep sweep: --runners-per-node must be in [1, 64]", file=sys.stderr)
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
        sweep, cells = prepare(args.sweep, args.resume, args.out)
        if args.ray:
            from evaluator.sweep.ray_exec import RaySettings, run_on_ray

            settings = RaySettings(address=args.ray, lease_timeout_s=args.lease_timeout,
                                   runners_per_node=args.runners_per_node,
                                   engine_url=args.engine_url)
            outcome = run_on_ray(sweep, cells, settings, resume=bool(args.resume),
                                 progress=args.progress)
            return _finish(sweep, outcome)
        try:
            import uvloop

            runner = uvloop.run
        except ImportError:  # pragma: no cover - uvloop is a dependency
            runner = asyncio.run
        outcome = runner(run_local(sweep, cells, resume=bool(args.resume),
                                   progress=args.progress, engine_url=args.engine_url))
    except SweepError as exc:
        print(f"agentsweep sweep: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return _finish(sweep, outcome)


def _finish(sweep: Sweep, outcome: SweepOutcome) -> int:
    from evaluator.sweep.local import EXIT_INTERRUPTED
    from evaluator.sweep.report import build_grid, render_markdown, write_grid

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
