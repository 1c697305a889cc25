"""`agentsweep judge RUN_DIR`: the separate, resumable judging stage.

Reads RUN_DIR/episodes.jsonl, judges every trajectory whose judgement key is not in
RUN_DIR/judgements.jsonl yet (all of them with --rerun), appends the judgements, and prints a
short score summary. The judge endpoints come from the run's `[judge]` table; "embedded"
means the engine of `[engine]` (attached when `engine.url` is set, else started for the
duration of the command, its log in RUN_DIR/engine-judge.log).

Ctrl-C or SIGTERM stops judging: the judgements already made are written (fsynced), those in
flight are dropped, and the command exits 130 with a one-line hint to run it again.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "judge",
        help="judge a run's trajectories (resumable; already judged ones are skipped)",
        description="Judge the episodes of RUN_DIR with their benchmark's judges (e.g. "
        "TravelBench's rubric judge, meta-judge and rule check, VitaBench's sliding-window "
        "rubric evaluator); append to judgements.jsonl and print scores.",
    )
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    p.add_argument("--judge-url", default=None,
                   help="OpenAI-compatible judge endpoint (overrides [judge] endpoints)")
    p.add_argument("--judge-model", default=None, help="judge model name (overrides [judge] model)")
    p.add_argument("--rerun", action="store_true", help="judge again even if already judged")
    p.add_argument("--retry-errors", action="store_true",
                   help="judge again only the units whose judgement is a judge error")
    p.add_argument("--concurrency", type=int, default=None, help="judge requests in flight")
    p.add_argument("--no-meta", action="store_true",
                   help="skip audit judges (TravelBench's meta-judge)")
    p.add_argument("--set", action="append", default=[], metavar="judge.KEY=VALUE",
                   help="change a judge setting for this run from now on, e.g. --set "
                   "judge.structured_output=true (kept in RUN_DIR/judge_overrides.json, applied "
                   "by later judge and report commands, listed as a deviation; repeatable). "
                   "Units already judged keep their judgements: add --rerun or --retry-errors")
    p.set_defaults(func=run_judge)


def _manifest(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "manifest.json"
    try:
        raw = msgspec.json.decode(path.read_bytes()) if path.exists() else {}
    except msgspec.DecodeError:
        return {}
    return raw if isinstance(raw, dict) else {}


def _run_config(run_dir: Path, overrides: dict[str, Any] | None = None) -> Any:
    """The run's RunConfig: the manifest's resolved config (old key names accepted), else
    config.toml, else defaults; with the judge overrides (`evaluator.judges.overrides`) set."""
    from evaluator.config import convert_config, load_config, plain
    from evaluator.judges.overrides import apply_overrides

    config = None
    resolved = _manifest(run_dir).get("resolved_config")
    if isinstance(resolved, dict):
        try:
            config = convert_config(resolved)
        except msgspec.ValidationError:
            pass
    if config is None:
        config_path = run_dir / "config.toml"
        config, _ = load_config(config_path if config_path.exists() else None)
    if not overrides:
        return config
    raw = plain(config)
    raw["judge"] = apply_overrides(raw.get("judge") or {}, overrides)
    try:
        return convert_config(raw)
    except msgspec.ValidationError as exc:
        raise ValueError(f"judge setting override ({', '.join(sorted(overrides))}): {exc}") from None


def _check_keys(run_dir: Path, config: Any) -> None:
    """The judge endpoints' `api_key_env` variables are set (ValueError naming the first)."""
    from evaluator.config import unset_api_key

    unset = unset_api_key(config, ("judge",))
    if unset is not None:
        raise ValueError(f"{run_dir / 'config.toml'}: field `{unset[0]}`: the environment "
                         f"variable {unset[1]} is not set (the judge's API key is read from it)")


def run_benchmark(run_dir: Path, config: Any) -> Any:
    """The run's Benchmark (the manifest's, else its data's); None when not registered."""
    from evaluator import benchmarks
    from evaluator.profiles import run_benchmark as data_benchmark

    name = _manifest(run_dir).get("benchmark") or data_benchmark(config.data)
    return benchmarks.find(name) if isinstance(name, str) and name else None


def run_prompt_set(config: Any, bench: Any) -> Any:
    """The run's prompt set (None: built-in, or a benchmark without prompt sets)."""
    from evaluator.prompt_sets import BUILTIN, load_prompt_set

    if bench is None or bench.prompts is None:
        if config.prompts != BUILTIN:
            raise ValueError(f"prompts {config.prompts!r}: the run's benchmark has no prompt sets")
        return None
    return load_prompt_set(config.prompts, bench.prompts)


def judge_settings_for(config: Any, args: argparse.Namespace) -> Any:
    from backends.types import Endpoint

    s = config.judge
    changes: dict[str, Any] = {}
    if args.judge_url:
        changes["endpoints"] = [Endpoint(base_url=args.judge_url, model=args.judge_model or "")]
    if args.judge_model:
        changes["model"] = args.judge_model
    if args.concurrency is not None:
        changes["concurrency"] = args.concurrency
    if args.no_meta:
        changes["meta_judge"] = False
    if args.rerun:
        changes["rerun"] = True
    if args.retry_errors:
        changes["retry_errors"] = True
    s = msgspec.structs.replace(s, **changes)
    s.__post_init__()  # replace() does not validate
    return s


def _new_overrides(items: list[str]) -> dict[str, Any]:
    from evaluator.config import known_fields
    from evaluator.config_check import parse_override
    from evaluator.judges.overrides import parse_sets

    return parse_sets([parse_override(item) for item in items], known_fields()) if items else {}


def _tasks(config: Any) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    from bench_data.registry import load_tasks

    d = config.data
    try:
        ts = load_tasks(d.dataset, subsets=d.subsets or None, data_dir=d.data_dir or None,
                        skip_bad=True, benchmark=d.benchmark or None)
    except (OSError, ValueError, KeyError) as exc:
        print(f"warning: tasks of {d.dataset!r} not loaded ({exc}); judges that need the task "
              "skip the unit or use what the record holds", file=sys.stderr)
        return {}, {}
    return {t.key: t for t in ts.tasks}, {ts.benchmark: ts.tool_schemas}


NO_MODEL_URL = "http://rule-checks-only.invalid/v1"
"""The judge endpoint of a run judged by rule checks only (never contacted)."""


def run_judge(args: argparse.Namespace) -> int:
    """Exit codes: 0 everything judgeable was judged (judge errors included); 1 some units
    were left unjudged by infrastructure errors (judge endpoint down) - run again later;
    2 bad RUN_DIR, config or arguments; 130 stopped by Ctrl-C or SIGTERM (run it again)."""
    from backends.errors import InfrastructureError
    from evaluator.config import ConfigError
    from evaluator.run.results import ResultsCorrupt

    run_dir: Path = args.run_dir
    if not (run_dir / "episodes.jsonl").is_file():
        print(f"error: {run_dir}: no episodes.jsonl (not a run directory?)", file=sys.stderr)
        return 2
    from evaluator.benchmarks import BenchmarkError

    for flag, value in (("--judge-url", args.judge_url), ("--judge-model", args.judge_model)):
        if value is not None and not value.strip():
            print(f"error: {flag}: a value is needed, got {value!r} (an unset shell variable?)",
                  file=sys.stderr)
            return 2
    from evaluator.judges.overrides import OverrideError, read_overrides, write_overrides

    try:
        new = _new_overrides(args.set)
        overrides = {**read_overrides(run_dir), **new}
        config = _run_config(run_dir, overrides)
        _check_keys(run_dir, config)
        settings = judge_settings_for(config, args)
        bench = run_benchmark(run_dir, config)
        prompts = run_prompt_set(config, bench)
    except (ConfigError, ValueError, BenchmarkError, OverrideError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if new:  # valid: kept for the later judge and report commands of this run
        write_overrides(run_dir, overrides)
        print("judge settings changed for this run: " + ", ".join(
            f"judge.{k}={json.dumps(v)}" for k, v in sorted(new.items())), file=sys.stderr)
    try:  # a corrupt line stops the command now, before an engine starts
        from evaluator.judges.pool import read_judgements
        from evaluator.run.results import iter_records

        for _ in iter_records(run_dir):
            pass
        read_judgements(run_dir)
    except ResultsCorrupt as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    # a benchmark judged by rule checks only needs no judge model: no engine, nothing to ask
    rules_only = bench is not None and bool(bench.judges) and all(
        spec.rule for spec in bench.judges.values())
    if rules_only and not settings.judge_model:
        from evaluator.judges.pool import RULE_JUDGE_MODEL

        settings = msgspec.structs.replace(settings, model=RULE_JUDGE_MODEL)
    if rules_only:  # the pool wants a client; rule checks never call it
        settings = msgspec.structs.replace(settings, endpoints=[
            msgspec.structs.replace(ep, base_url=NO_MODEL_URL) if ep.base_url == "embedded"
            else ep for ep in settings.endpoints])
    tasks, tools = _tasks(config)
    server = None
    try:
        with _term_interrupts():
            endpoints = list(settings.endpoints)
            if not rules_only and any(ep.base_url == "embedded" for ep in endpoints):
                server = _engine(config, run_dir)
                endpoints = [
                    msgspec.structs.replace(ep, base_url=server.base_url,
                                            model=ep.model or server.model)
                    if ep.base_url == "embedded" else ep
                    for ep in endpoints
                ]
                settings = msgspec.structs.replace(settings, endpoints=endpoints)
            stats, owed = asyncio.run(_judge(run_dir, settings, tasks, tools, prompts,
                                             config.options))
    except (Interrupted, KeyboardInterrupt) as exc:
        how = exc.how if isinstance(exc, Interrupted) else "interrupted"
        n = exc.judged if isinstance(exc, Interrupted) else None
        saved = "the judgements made so far are saved" if n is None else f"{n} judgements saved"
        print(f"agentsweep judge: {how}: {saved}, those in flight dropped; continue with "
              f"`agentsweep judge {run_dir}`", file=sys.stderr)
        return 130
    except ResultsCorrupt as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except InfrastructureError as exc:
        print(f"error: judge endpoint unavailable: {exc}\nnothing was scored; run "
              f"`agentsweep judge {run_dir}` again once it is up", file=sys.stderr)
        return 1
    finally:
        if server is not None:
            server.stop()
    print(f"judged {stats.judged} ({stats.judge_errors} judge errors), "
          f"{stats.skipped_done} already judged, {stats.skipped_unjudgeable} without a judge, "
          f"{stats.infra_failed} left after infrastructure errors")
    for why, n in sorted(stats.unjudgeable.items()):
        print(f"  not judged: {n} x {why}")
    print(f"still owed (counted from {run_dir.name}'s files): " + (
        f"{owed.judgements} judgements of {owed.episodes} episodes" if owed.episodes
        else "none"))
    from evaluator.judges.pool import context_hint

    if hint := context_hint(stats, settings, run_dir):
        print(hint, file=sys.stderr)
    if stats.infra_failed:
        urls = ", ".join(ep.base_url for ep in settings.endpoints)
        print(f"error: {stats.infra_failed} unit(s) not judged: the judge endpoint ({urls}) "
              "failed with connection errors, timeouts or 5xx answers after "
              f"{settings.infra_attempts} attempt(s); nothing was recorded for them, run "
              f"`agentsweep judge {run_dir}` again once it is up", file=sys.stderr)
    print(summary_text(run_dir, settings, prompts, config.options))
    return 0 if stats.infra_failed == 0 else 1


def _engine(config: Any, run_dir: Path) -> Any:
    from backends.server import VLLMServer

    e = config.engine
    if e.url:
        return VLLMServer.attach(e.url)
    print(f"starting the embedded engine (log: {run_dir / 'engine-judge.log'}) ...",
          file=sys.stderr)
    server = VLLMServer(e.model or None, device=e.device, max_model_len=e.max_model_len,
                        cpu_kv_cache_gb=e.cpu_kv_cache_gb,
                        tensor_parallel_size=e.tensor_parallel_size, extra_args=e.extra_args,
                        log_path=run_dir / "engine-judge.log",
                        startup_timeout_s=e.startup_timeout_s)
    server.start()
    return server


class Interrupted(Exception):
    """Judging was stopped by a signal (`how`: "stopped by SIGTERM", ...)."""

    def __init__(self, how: str, judged: int | None = None) -> None:
        super().__init__(how)
        self.how = how
        self.judged = judged


def _raise_interrupted(signum: int, frame: Any) -> None:
    raise Interrupted(f"stopped by {signal.Signals(signum).name}")


@contextlib.contextmanager
def _term_interrupts() -> Iterator[None]:
    """Outside the event loop (e.g. while the engine starts) SIGTERM stops the command as
    Ctrl-C does; inside it `_judge` handles both."""
    old = signal.signal(signal.SIGTERM, _raise_interrupted)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


async def _judge(run_dir: Path, settings: Any, tasks: dict[str, Any],
                 tools: dict[str, list[dict[str, Any]]], prompts: Any = None,
                 options: dict[str, Any] | None = None) -> Any:
    from backends.client import ChatClient
    from backends.fdlimit import connection_budget
    from evaluator.judges.pool import JudgePool

    eps = settings.endpoints
    # pools within the open-file limit (backends.fdlimit), shared by the judge endpoints
    share = max(4, connection_budget() // max(1, len(eps)))
    clients: list[Any]
    if len(eps) > 1:  # several endpoints: one router (least-loaded, health, failover)
        from backends.router import Router
        from backends.router_replica import ReplicaSpec, RouterSettings

        clients = [Router([ReplicaSpec(ep) for ep in eps], model=eps[0].model or None,
                          settings=msgspec.convert(settings.routing, RouterSettings),
                          template=eps[0], max_connections=min(4096, share))]
    else:
        clients = [ChatClient(ep, max_connections=min(max(64, 2 * settings.concurrency), share))
                   for ep in eps]
    try:
        pool = JudgePool(run_dir, settings, client=clients if len(clients) > 1 else clients[0],
                         tasks=tasks, tool_schemas=tools, prompts=prompts, options=options)
        job = asyncio.ensure_future(pool.judge_run(rerun=settings.rerun))
        signalled: list[str] = []
        loop = asyncio.get_running_loop()

        def on_signal(sig: signal.Signals) -> None:
            signalled.append(sig.name)
            job.cancel()

        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, on_signal, sig)
        try:
            stats = await job
            from evaluator.judges.owed import pool_owed

            # what the run still owes, counted from its files (not this session's tallies)
            return stats, pool_owed(pool)
        except asyncio.CancelledError:
            if not signalled:
                raise
            await pool.abort()  # what is judged is written; what is in flight is dropped
            raise Interrupted(f"stopped by {signalled[0]}", pool.stats.judged) from None
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)
            signal.signal(signal.SIGTERM, _raise_interrupted)  # until the command ends
    finally:
        for c in clients:
            await c.close()


def summary_text(run_dir: Path, settings: Any, prompts: Any = None,
                 options: dict[str, Any] | None = None) -> str:
    """A few lines per benchmark of the run: its report section's judge summary (TravelBench:
    subset and overall scores x100, the pooled number then the per-trial mean ± std)."""
    from evaluator import benchmarks
    from evaluator.scoring import score_run

    scores = score_run(run_dir, settings, prompts, options)
    lines: list[str] = []
    for name in dict.fromkeys(s.benchmark for s in scores):
        bench = benchmarks.find(name)
        units = [s for s in scores if s.benchmark == name]
        if bench is None or bench.report is None:
            continue
        summary = bench.report.summarize(units)
        if summary is not None:
            lines += bench.report.judge_lines(summary)
    return "\n".join(["scores:"] + lines) if lines else "scores: nothing scored"
