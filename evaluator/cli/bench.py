"""`agentsweep bench [CONFIG.toml] [flags]`: measure a benchmark's episodes on the configured
replicas and estimate the full sweep.

A limited run (the same machinery as `agentsweep run`, `--limit` tasks per subset, default 4)
goes into a run directory with its time series (timeseries.jsonl) and per-call log
(calls.jsonl); then the figures of `evaluator.run.bench` are printed, written to
RUN_DIR/bench.json and, with the run's time-series plots, to RUN_DIR/report.html.
`--from RUN_DIR` recomputes them from a finished run. Exit codes as `agentsweep run`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

DEFAULT_LIMIT = 4


def register(subparsers: argparse._SubParsersAction, argv: list[str] | None = None) -> None:
    from evaluator.cli.run import add_benchmark_flags, add_run_arguments

    p = subparsers.add_parser(
        "bench",
        help="measure throughput and prefix-cache hits on a few episodes; estimate a sweep",
        description="Run a few episodes of a benchmark (a limited `agentsweep run`) and report "
        "per role and per replica: episodes/min, requests/s, prompt and completion tokens/s, "
        "prefix-cache hit rates (from /metrics, from per-request cached tokens, ideal), queue "
        "and KV usage over time, an episode's time by stage, and the estimated wall time of "
        "the full sweep. See docs/routing.md.",
    )
    p.add_argument("config", nargs="?", default=None, help="TOML run config (optional)")
    p.add_argument("--from", dest="from_dir", metavar="RUN_DIR", type=Path,
                   help="compute the figures of this finished run instead of running")
    add_run_arguments(p)
    p.add_argument("--full-episodes", type=int, metavar="N",
                   help="episodes of the full sweep to estimate (default: every task of the "
                   "dataset without --limit, times the trials)")
    p.add_argument("--block-size", type=int, default=16,
                   help="KV block size in tokens for the ideal prefix hits (16)")
    p.add_argument("--interval", type=float, default=1.0,
                   help="seconds between time-series samples (1.0)")
    p.add_argument("--judge", action="store_true",
                   help="judge episodes as they finish (the judge's time is a stage)")
    p.add_argument("--no-report", action="store_true", help="do not write report.html")
    add_benchmark_flags(p, argv)
    p.set_defaults(func=bench_command)


def full_episodes(config_path: str | None, overrides: list[tuple[str, Any, str]]) -> int:
    """Tasks of the dataset as configured but without a limit, times the trials."""
    from evaluator.config import load_config
    from evaluator.run.sweep import _tasks

    config, _ = load_config(config_path, [*overrides, ("data.limit", 0, "bench")])
    taskset, _bench, _domains = _tasks(config)
    return len(taskset.tasks) * config.trials


def bench_command(args: argparse.Namespace) -> int:
    from evaluator.cli.run import collect_overrides
    from evaluator.config import ConfigError
    from evaluator.run import bench
    from evaluator.run.sweep import EXIT_USAGE, RunRequest, SweepError, run_sweep

    try:
        overrides = collect_overrides(args)
    except ConfigError as exc:
        print(f"agentsweep bench: {exc}", file=sys.stderr)
        return EXIT_USAGE
    code = 0
    if args.from_dir is not None:
        run_dir = args.from_dir
        if not (run_dir / "manifest.json").exists():
            print(f"agentsweep bench: {run_dir} is not a run directory", file=sys.stderr)
            return EXIT_USAGE
    else:
        if args.limit is None:
            overrides.append(("data.limit", DEFAULT_LIMIT, "bench default"))
        request = RunRequest(config_path=args.config, overrides=overrides,
                             progress=args.progress, sample_interval_s=args.interval,
                             call_log=True, judge=args.judge)
        try:
            try:
                import uvloop

                result = uvloop.run(run_sweep(request))
            except ImportError:  # pragma: no cover - uvloop is a dependency
                result = asyncio.run(run_sweep(request))
        except SweepError as exc:
            print(f"agentsweep bench: {exc}", file=sys.stderr)
            return EXIT_USAGE
        print(result.summary, file=sys.stderr)
        run_dir, code = result.run_dir, result.exit_code
    total = args.full_episodes
    if total is None:
        try:
            if args.from_dir is not None:
                total = _full_from_manifest(run_dir)
            else:
                total = full_episodes(args.config,
                                      [o for o in overrides if o[0] != "data.limit"])
        except (SweepError, ConfigError, ValueError, OSError) as exc:
            print(f"agentsweep bench: no full-sweep size ({exc}); give --full-episodes",
                  file=sys.stderr)
            total = None
    b = bench.analyse(run_dir, full_episodes=total, block_size=args.block_size)
    path = bench.write(run_dir, b)
    print(bench.render(b))
    for line in bench_warnings(b, _concurrency(run_dir)):
        print(line, file=sys.stderr)
    print(f"json: {path}")
    if not args.no_report:
        from evaluator.report import build_report, load_run, write_report

        report = build_report([load_run(run_dir)], n_boot=200)
        print(f"html: {write_report(report, run_dir)['html']}")
    return code


def _concurrency(run_dir: Path) -> int | None:
    """The episodes the bench let run at once (its resolved config)."""
    from evaluator.run.manifest import read_manifest

    try:
        resolved = read_manifest(run_dir).resolved_config
    except Exception:  # noqa: BLE001 - a warning's input: without it, no warning
        return None
    value = resolved.get("concurrency") if isinstance(resolved, dict) else None
    return value if isinstance(value, int) else None


def bench_warnings(b: dict[str, Any], concurrency: int | None) -> list[str]:
    """What makes the bench's figures read wrong: every episode started at once, cached
    tokens that the servers do not count, judging left out of the estimate."""
    out = []
    n = b.get("episodes") or 0
    if concurrency is not None and n and concurrency >= n:
        out.append(f"warning: concurrency {concurrency} >= the bench's {n} episodes: every "
                   "episode started at once, so the rates measure one burst and its ramp-down, "
                   "not a sweep's steady state; give the bench more episodes than --concurrency "
                   "(--limit, --trials) or a lower --concurrency")
    for name, d in (b.get("roles") or {}).items():
        measured, ideal = d.get("request_hit_rate"), d.get("ideal_hit_rate")
        if measured == 0 and ideal:
            out.append(f"warning: {name}: no cached prompt tokens counted (\"of ideal\" 0.0%): "
                       "the server does not report them; start vLLM with "
                       "--enable-prompt-tokens-details (and --enable-prefix-caching) to count "
                       "them (the embedded engine does)")
    if not any(name.startswith("judge") for name in b.get("roles") or {}):
        out.append("note: the estimate leaves judging out; bench with --judge to include the "
                   "judge's time and tokens")
    return out


def _full_from_manifest(run_dir: Path) -> int | None:
    """A finished run's full-sweep size: its config without the limit."""
    from evaluator.config import load_config
    from evaluator.run.manifest import CONFIG_FILE, read_manifest
    from evaluator.run.sweep import _tasks

    m = read_manifest(run_dir)
    overrides = [(k, v, o) for k, v, o in m.overrides if k != "data.limit"]
    config, _ = load_config(run_dir / CONFIG_FILE, [*overrides, ("data.limit", 0, "bench")])
    taskset, _b, _d = _tasks(config)
    return len(taskset.tasks) * config.trials
