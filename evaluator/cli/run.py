"""`agentsweep run [CONFIG.toml] [flags]`: run a benchmark sweep into a run directory.

Exit codes: 0 all units finished; 3 some units failed (failures.jsonl, rerun by --resume);
2 bad config / data / arguments; 130 interrupted (Ctrl-C; continue with --resume RUN_DIR).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any


def register(subparsers: argparse._SubParsersAction, argv: list[str] | None = None) -> None:
    p = subparsers.add_parser(
        "run",
        help="run a benchmark sweep (default: the built-in sample on the embedded engine)",
        description="Run every (task, trial) of a dataset through its episode protocol and "
        "append the finished episodes to RUN_DIR/episodes.jsonl. Without a config file the "
        "built-in sample runs on the embedded engine. See docs/config.md and docs/running.md.",
    )
    p.add_argument("config", nargs="?", default=None, help="TOML run config (optional)")
    p.add_argument("--resume", metavar="RUN_DIR", help="continue a run: finished units are "
                   "skipped; its config.toml and first overrides are reused")
    add_run_arguments(p)
    p.add_argument("--judge", action="store_true",
                   help="judge episodes as they finish (overlaps rollouts), and first every "
                   "episode already recorded that lacks a judgement (with --resume)")
    p.add_argument("--report", action="store_true", help="write the report at the end")
    p.add_argument("--check", action="store_true",
                   help="validate the config, flags, data, prompts, protocol and tool sandbox "
                   "settings as a run would, print what would run and exit (0 = all good, 2 = "
                   "a problem, named); starts no engine and writes nothing")
    p.add_argument("--estimate", metavar="BENCH_JSON", type=Path,
                   help="an `agentsweep bench` result (RUN_DIR/bench.json): kept with the run, "
                   "the report compares its estimated wall time with the actual one")
    add_benchmark_flags(p, argv)
    p.set_defaults(func=run_command)


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    """The flags `run` and `bench` share (config overrides)."""
    p.add_argument("--trials", type=int, help="trials per task")
    p.add_argument("--subset", action="append", metavar="NAME",
                   help="subset to run (repeatable, or comma-separated)")
    p.add_argument("--domain", action="append", metavar="A[,B]",
                   help="domains of a benchmark that has them (comma-separated or repeatable): "
                   "the benchmark picks the subsets (unless --subset names them) and the tools "
                   "and state of each episode; several domains = one merged environment")
    p.add_argument("--limit", type=int, help="at most N tasks per subset")
    p.add_argument("--concurrency", type=int, help="episodes in flight at most")
    p.add_argument("--data", metavar="NAME_OR_PATH", help="dataset name or path")
    p.add_argument("--bench", metavar="NAME", help="read the data as this benchmark's "
                   "(default: the benchmark the data is recognised as; see "
                   "`agentsweep data list`)")
    p.add_argument("--plugin", action="append", metavar="MODULE",
                   help="import MODULE, which registers a benchmark (`BENCHMARK = "
                   "Benchmark(...)`; repeatable; recorded as the config's `plugins`)")
    p.add_argument("--data-dir", metavar="DIR", help="where benchmark files live")
    p.add_argument("--agent-url", metavar="URL", help="agent endpoint base URL")
    p.add_argument("--agent-model", metavar="NAME", help="agent model name")
    p.add_argument("--engine-url", metavar="URL", help="use this running server wherever the "
                   "config says 'embedded' (instead of starting the engine)")
    p.add_argument("--out", metavar="DIR", help="directory that holds run directories")
    p.add_argument("--name", help="run name (the run directory under --out)")
    p.add_argument("--seed", type=int, help="base seed of the unit seeds")
    p.add_argument("--profile", choices=("auto", "paper", "smoke"),
                   help="settings profile: paper (the benchmark reference's limits, sampling and "
                   "judging), smoke (small limits for the embedded CPU model), auto (smoke for "
                   "the built-in sample, paper for real data; the default)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override any config field, e.g. --set agent.sampling.max_tokens=64 "
                   "(value read as TOML, else as a string; repeatable)")
    p.add_argument("--progress", choices=("auto", "plain", "off"),
                   help="progress line: auto (live on a TTY, a plain line every 30 s otherwise), "
                   "plain (a line every few seconds), off")
    p.add_argument("--replicas", type=int, metavar="N",
                   help="start N replicas of the embedded engine and route over them "
                   "(engine.replicas)")
    p.add_argument("--gpus-per-replica", type=int, metavar="G",
                   help="GPUs of each replica of the embedded engine (engine.gpus_per_replica)")


def add_benchmark_flags(p: argparse.ArgumentParser, argv: list[str] | None) -> None:
    """The registered benchmarks' run flags (`Benchmark.run_flags`), added last: always for the
    whole parser (`argv` None) and `--help`, else only when the command line has an option the
    parser does not know yet. A line of generic flags imports no benchmark package (start-up is
    part of every run's cost; the run loads its own benchmark later)."""
    flags = benchmark_flags() if _may_use_benchmark_flags(p, argv) else {}
    for flag, (key, help_text) in flags.items():
        p.add_argument(flag, dest=_dest(flag), metavar=key.rsplit(".", 1)[-1].upper(),
                       help=f"{help_text} ({key})")
    p.set_defaults(bench_flags={flag: key for flag, (key, _) in flags.items()})


def _may_use_benchmark_flags(p: argparse.ArgumentParser, argv: list[str] | None) -> bool:
    if argv is None:
        return True
    words = list(argv)
    command = next((w for w in words if not w.startswith("-")), None)
    if command is not None:  # what comes after the command's name
        words = words[words.index(command) + 1:]
    known = p._option_string_actions
    for word in words:
        if word == "--":
            break
        if word in ("-h", "--help"):
            return True
        if word.startswith("-") and word.split("=", 1)[0] not in known:
            return True  # a benchmark's flag, an abbreviation, or a mistake argparse names
    return False


def benchmark_flags() -> dict[str, tuple[str, str]]:
    """The registered benchmarks' own run flags (`Benchmark.run_flags`): flag -> (key, help);
    none when the registry cannot load (the other flags still work)."""
    from evaluator import benchmarks
    from evaluator.benchmarks.base import BenchmarkError

    try:
        found = benchmarks.all_benchmarks()
    except BenchmarkError:
        return {}
    return {flag: spec for bench in found for flag, spec in bench.run_flags.items()}


def _dest(flag: str) -> str:
    return "bench_flag_" + flag.lstrip("-").replace("-", "_")


def collect_overrides(args: argparse.Namespace) -> list[tuple[str, Any, str]]:
    """CLI flags -> (dotted key, value, flag) in the order they apply."""
    from evaluator.config import ConfigError, parse_override

    out: list[tuple[str, Any, str]] = []
    simple = (("trials", "trials"), ("limit", "data.limit"), ("concurrency", "concurrency"),
              ("data", "data.dataset"), ("bench", "data.benchmark"),
              ("data_dir", "data.data_dir"),
              ("agent_url", "agent.endpoint.base_url"), ("agent_model", "agent.endpoint.model"),
              ("engine_url", "engine.url"), ("out", "out"), ("name", "name"), ("seed", "seed"),
              ("profile", "profile"), ("replicas", "engine.replicas"),
              ("gpus_per_replica", "engine.gpus_per_replica"))
    for attr, key in simple:
        value = getattr(args, attr, None)
        if value is not None:
            flag = "--" + attr.replace("_", "-")
            if isinstance(value, str) and not value.strip():
                raise ConfigError(f"{flag} ({key}): a value is needed, got {value!r} (an unset "
                                  "shell variable?)")
            out.append((key, value, flag))
    for flag, key in getattr(args, "bench_flags", {}).items():
        value = getattr(args, _dest(flag), None)
        if value is not None:
            out.append((key, value, flag))
    if getattr(args, "plugin", None):
        out.append(("plugins", list(args.plugin), "--plugin"))
    if args.subset:
        subsets = [s.strip() for item in args.subset for s in item.split(",") if s.strip()]
        out.append(("data.subsets", subsets, "--subset"))
    if getattr(args, "domain", None):
        from evaluator.run.domains import split_domains

        try:
            out.append(("data.domains", split_domains(args.domain), "--domain"))
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    for item in args.set:
        key, value = parse_override(item)
        out.append((key, value, f"--set {key}"))
    return out


def run_command(args: argparse.Namespace) -> int:
    from evaluator.config import ConfigError
    from evaluator.run.results import ResultsCorrupt
    from evaluator.run.sweep import EXIT_USAGE, RunRequest, SweepError, run_sweep

    try:
        overrides = collect_overrides(args)
    except ConfigError as exc:
        print(f"agentsweep run: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.resume and args.config:
        print("agentsweep run: give either a CONFIG or --resume RUN_DIR, not both",
              file=sys.stderr)
        return EXIT_USAGE
    estimate = None
    if args.estimate is not None:
        try:
            estimate = read_estimate(args.estimate)
        except (OSError, ValueError) as exc:
            print(f"agentsweep run: --estimate: {exc}", file=sys.stderr)
            return EXIT_USAGE
    request = RunRequest(config_path=args.config, overrides=overrides, resume=args.resume,
                         judge=args.judge, report=args.report, progress=args.progress,
                         estimate=estimate, check=args.check)
    try:
        import uvloop

        runner = uvloop.run
    except ImportError:  # pragma: no cover - uvloop is a dependency
        runner = asyncio.run
    try:
        result = runner(run_sweep(request))
    except (SweepError, ResultsCorrupt) as exc:  # ResultsCorrupt names file:line and repair
        print(f"agentsweep run: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(result.summary)
    if args.report and result.exit_code != 130 and not args.check:
        from evaluator.cli.report import run_report

        rargs = argparse.Namespace(run_dirs=[result.run_dir], out=None, success_threshold=None,
                                   bootstrap=1000, seed=0, backend="auto", no_scoring=False)
        code = run_report(rargs)
        if code:
            return code
    return result.exit_code


def read_estimate(path: Path) -> dict[str, Any]:
    """What a run keeps of a bench result: its sweep estimate, measured rate and source."""
    import msgspec

    try:
        b = msgspec.json.decode(Path(path).read_bytes())
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise ValueError(f"{path}: not JSON: {exc}") from None
    estimate = b.get("estimate") if isinstance(b, dict) else None
    if not isinstance(estimate, dict):
        raise ValueError(f"{path} is not an `agentsweep bench` result (no 'estimate')")  # noqa: TRY004
    return {"source": str(path), "bench_run": b.get("run_dir", ""),
            "episodes_per_min": b.get("episodes_per_min"), **b["estimate"]}
