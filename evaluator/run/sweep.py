"""Build a run from its config and run it: data, benchmark, engine, clients, environment,
scheduler, results.

`run_sweep(request)` is what `agentsweep run` calls (inside one uvloop loop). It owns every
resource it opens and closes them in reverse order, also on Ctrl-C and errors. What is
benchmark-specific (protocols, environment, prompts) comes from the run's `Benchmark`, looked
up in the registry by the tasks' benchmark.
"""

from __future__ import annotations

import asyncio
import re
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from bench_data.types import Task
from evaluator.benchmarks.base import Benchmark, BenchmarkError, EnvironmentRequest
from evaluator.config import ConfigError, RunConfig, load_config
from evaluator.config_check import check_output_dir
from evaluator.profiles import settings_summary
from evaluator.protocols.base import EpisodeContext, ProtocolSettings
from evaluator.records import EpisodeRecord, UnitId
from evaluator.run.domains import resolve_domains
from evaluator.run.journal import CURRENT, open_journal
from evaluator.run.judging_hook import start_judging
from evaluator.run.manifest import (
    CONFIG_FILE,
    MANIFEST_FILE,
    RoleInfo,
    read_manifest,
    record_end,
    record_start,
    run_deviations,
)
from evaluator.run.progress import Counters, Summary, progress_task
from evaluator.run.resources import (
    Resources,
    SweepError,
    open_role,
    resolve_endpoint,
    slow_engine_timeout,
    start_engine,
    start_pollers,
    start_sampler,
)
from evaluator.run.results import (
    EPISODES_FILE,
    FAILURES_FILE,
    ResultWriter,
    finished_keys,
    iter_records,
)
from evaluator.run.roles import AdmittedChat, EpisodeTicket
from evaluator.run.scheduler import Scheduler, make_units
from evaluator.run.sweep_setup import NoTools, prompt_info, prompt_set_for, subset_protocols
from evaluator.run.telemetry import write_call_log, write_estimate

EXIT_OK, EXIT_FAILED_UNITS, EXIT_USAGE, EXIT_INTERRUPTED = 0, 3, 2, 130

__all__ = ["EXIT_FAILED_UNITS", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE", "RunRequest",
           "SweepError", "SweepResult", "run_sweep"]


@dataclass
class RunRequest:
    config_path: str | None = None
    overrides: list[tuple[str, Any, str]] = field(default_factory=list)
    resume: str | None = None
    judge: bool = False
    report: bool = False
    progress: str | None = None  # overrides config.progress
    sample_interval_s: float = 1.0  # RUN_DIR/timeseries.jsonl (0 = no sampler)
    call_log: bool = False  # RUN_DIR/calls.jsonl: one entry per model call (agentsweep bench)
    estimate: dict[str, Any] | None = None  # a bench's estimate, kept as RUN_DIR/estimate.json
    server_factory: Any = None  # makes managed replicas (tests: a fake; default VLLMServer)
    check: bool = False  # validate everything a run needs, then stop: no engine, no writes
    # the least per-request timeout of roles on the embedded engine when that engine is one a
    # caller started on CPU and hands over by URL (a sweep's): attached, it is not raised here
    min_request_timeout_s: float = 0.0
    # set by a caller to stop the run as a second Ctrl-C does (no new episodes, running ones
    # cancelled: the journal keeps their responses; judging stopped, what is judged is kept)
    stop: asyncio.Event | None = None


@dataclass
class SweepResult:
    run_dir: Path
    exit_code: int
    summary: str = ""
    owed: int = 0  # with judging: recorded episodes still lacking judgements (from the files)
    signalled: bool = False  # stopped by SIGINT/SIGTERM to this process (not `request.stop`)


def _load(request: RunRequest) -> tuple[RunConfig, str, Path, Any]:
    """(config, config text as given, run dir, manifest or None) for a new run or a resume."""
    if request.resume:
        run_dir = Path(request.resume)
        manifest = read_manifest(run_dir)
        cfg_path = run_dir / CONFIG_FILE
        first = [(k, v, o) for k, v, o in manifest.overrides]
        if not manifest.profile:
            # written before profiles existed: its defaults were the smoke profile's
            first.insert(0, ("profile", "smoke", "run written before settings profiles"))
        later = [(f"judge.{k}", v, "agentsweep judge --set")  # judge settings changed since
                 for k, v in _judge_overrides(run_dir).items()]
        config, text = load_config(cfg_path, first + later + list(request.overrides))
        return config, text, run_dir, manifest
    config, text = load_config(request.config_path, list(request.overrides))
    try:
        check_output_dir("out", config.out)
    except ValueError as exc:
        origin = next((o for k, _, o in reversed(request.overrides) if k == "out"), None)
        where = f"{origin} (out)" if origin else (request.config_path or "<defaults>")
        raise SweepError(f"{where}: {exc}") from None
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(config.data.dataset).stem).lstrip("._-")
    name = config.name or (  # a safe name, as config.name must be (config_check.RUN_NAME)
        f"{stem[:150] or 'run'}-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}"
    )
    run_dir = Path(config.out) / name
    if (run_dir / MANIFEST_FILE).exists():
        raise SweepError(f"{run_dir} already holds a run; continue it with --resume {run_dir}")
    return msgspec.structs.replace(config, name=name), text, run_dir, None


def _note_literal_keys(config: RunConfig) -> None:
    """A key given in the config itself is recorded with it: say so, and what keeps it out."""
    from evaluator.config import role_endpoints

    fields = [f"{field}.api_key" for field, ep in role_endpoints(config) if ep.api_key]
    if fields:
        print(f"note: {', '.join(fields)} will be written into the run directory (config.toml, "
              "manifest.json); `api_key_env = \"VARIABLE\"` reads the key from the environment "
              "and records only the variable's name", file=sys.stderr)


def _judge_overrides(run_dir: Path) -> dict[str, Any]:
    from evaluator.judges.overrides import OverrideError, read_overrides

    try:
        return read_overrides(run_dir)
    except OverrideError as exc:
        raise SweepError(str(exc)) from None


def _tasks(config: RunConfig) -> tuple[Any, Benchmark, dict[str, Any]]:
    """The run's tasks, their benchmark and what its `--domain` means ({} without one)."""
    from bench_data.registry import load_tasks
    from bench_data.types import TaskLoadError
    from evaluator import benchmarks

    d = config.data
    subsets, domains = resolve_domains(config)
    try:
        taskset = load_tasks(d.dataset, subsets=subsets, limit=d.limit or None,
                             data_dir=d.data_dir or None, skip_bad=d.skip_bad,
                             benchmark=d.benchmark or None)
        bench = benchmarks.get(taskset.benchmark)
    except (TaskLoadError, FileNotFoundError, ValueError, KeyError, BenchmarkError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        raise SweepError(f"data: {msg}") from None
    if not taskset.tasks:
        raise SweepError(f"data: dataset {d.dataset!r} with subsets {subsets} has no tasks")
    return taskset, bench, domains


async def run_sweep(request: RunRequest) -> SweepResult:
    try:
        config, text, run_dir, manifest = _load(request)
    except (ConfigError, FileNotFoundError, ValueError) as exc:
        raise SweepError(str(exc)) from None
    if manifest is None:
        _note_literal_keys(config)
    taskset, bench, domains = _tasks(config)
    prompt_set = prompt_set_for(config.prompts, bench)
    try:
        options = bench.read_options(config.options)
    except BenchmarkError as exc:
        raise SweepError(str(exc)) from None
    deviations = (manifest.deviations if manifest is not None
                  else run_deviations(config, bench, prompt_set))
    settings_line = "  " + settings_summary(config.profile, deviations)
    protocols = subset_protocols(config, bench, taskset.tasks)
    env_request = EnvironmentRequest(config=config, run_dir=run_dir, taskset=taskset,
                                     prompts=prompt_set)
    try:  # before the engine starts: a missing table or database fails now
        if bench.environment is not None:
            bench.environment.check(env_request)
    except BenchmarkError as exc:
        raise SweepError(str(exc)) from None
    if request.check:
        done = finished_keys(run_dir) if request.resume else set()
        if bench.reruns is not None:  # trials the benchmark plays again
            done -= bench.reruns(run_dir, options)
        n = len(taskset.tasks) * config.trials
        return SweepResult(run_dir, EXIT_OK, f"check: OK: {len(taskset.tasks)} tasks x "
                           f"{config.trials} trials = {n} units ({len(done)} finished) of "
                           f"{taskset.benchmark}; run directory {run_dir}; nothing started\n"
                           + settings_line)

    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SweepError(f"out: cannot make the run directory {run_dir}: "
                         f"{exc.strerror or exc}") from None
    done = finished_keys(run_dir, repair=True)
    if bench.reruns is not None:  # trials the benchmark plays again
        done -= bench.reruns(run_dir, options)
    units = make_units(config.name, taskset.tasks, config.trials, config.seed, skip=done)
    counters = Counters()
    counters.units_total = len(taskset.tasks) * config.trials
    counters.units_skipped = counters.units_total - len(units)
    summary = Summary()
    for rec in iter_records(run_dir):
        summary.add(rec)

    res = Resources()
    started = time.monotonic()
    judged = ""
    try:
        engine_url = await start_engine(config, run_dir, res, request.judge,
                                        request.server_factory)
        engine_model = res.server.model if res.server is not None else ""
        slow = max(slow_engine_timeout(res.server), request.min_request_timeout_s)
        infos: list[RoleInfo] = []
        roles = {}
        for name in ("agent", "user", "tool_simulator"):
            rc = getattr(config, name)
            ep = rc.endpoint if rc.replicas else resolve_endpoint(rc.endpoint, engine_url,
                                                                  engine_model, slow)
            roles[name] = await open_role(name, ep, rc.sampling, config, res, counters, infos,
                                          rc.endpoint.base_url == "embedded", rc)
        sim = roles["tool_simulator"]
        if bench.environment is not None:
            res.environment = await bench.environment.open(
                env_request, AdmittedChat(sim, journal=config.journal), sim.model)
        environment = res.environment or NoTools()
        record_start(run_dir, config, text, request.overrides, manifest, taskset, infos,
                     len(done), environment, prompt_info(prompt_set), domains, deviations)
        judge = None
        if request.judge:
            judge_eps = [resolve_endpoint(ep, engine_url, engine_model, slow)
                         for ep in config.judge.endpoints]
            judge = await start_judging(config, run_dir, judge_eps, res, counters, taskset,
                                        prompt_set)
            judge.start_backfill()  # what was recorded earlier and lacks judgements

        p = config.protocol
        psettings = ProtocolSettings(
            max_steps=p.max_steps, max_turns=p.max_turns, finish_marker=p.finish_marker,
            abstain_tags=tuple(p.abstain_tags), language=p.language, layout=p.layout,
            stop_at_abstain_tag=p.stop_at_abstain_tag,
            retry_empty_replies=p.retry_empty_replies, prompts=prompt_set,
            options=options,
        )
        agent_ep, user_ep = roles["agent"], roles["user"]

        journal = (open_journal(run_dir, {wu.unit.key for wu in units}, fsync=config.fsync)
                   if config.journal else None)
        if journal is not None and journal.describe():
            print(journal.describe(), file=sys.stderr)

        async def episode(unit: UnitId, task: Task, ticket: EpisodeTicket) -> EpisodeRecord:
            ctx = EpisodeContext(
                unit=unit, task=task, agent=agent_ep.for_episode(ticket, unit.seed),
                sandbox=environment.episode(task), user=user_ep.for_episode(ticket, unit.seed),
                settings=psettings, session_id=ticket.session_id,
            )
            if journal is None:
                return await protocols[task.subset](ctx)
            unit_journal = ticket.journal = journal.for_unit(unit.key)
            token = CURRENT.set(unit_journal)
            try:
                record = await protocols[task.subset](ctx)
            except BaseException:  # a retry of this unit replays what this attempt got
                journal.keep_for_retry(unit_journal)
                raise
            finally:
                CURRENT.reset(token)
            record.replay = unit_journal.info()
            return record

        writer = ResultWriter(run_dir / EPISODES_FILE, fsync=config.fsync).start()
        failures = ResultWriter(run_dir / FAILURES_FILE, fsync=config.fsync).start()

        def on_record(rec: EpisodeRecord) -> None:
            summary.add(rec)
            if judge is not None:
                judge.submit(rec)

        sched = Scheduler(units, episode, writer=writer, failures=failures, counters=counters,
                          concurrency=config.concurrency, retry=config.retry,
                          shutdown_grace_s=config.shutdown_grace_s, on_record=on_record)
        start_pollers(res, config, counters, agent_ep.admission)
        if request.sample_interval_s > 0:
            start_sampler(res, counters, run_dir, request.sample_interval_s, request.call_log)
        if request.estimate is not None:
            write_estimate(run_dir, request.estimate)
        res.tasks.append(asyncio.create_task(
            progress_task(counters, request.progress or config.progress,
                          routers=res.named_routers())))
        loop = asyncio.get_running_loop()

        tail: list[bool] = []  # set once the episodes are done: judging the last ones

        def on_signal() -> None:
            again = sched.stopping
            sched.request_stop()
            if judge is not None and tail:  # the episodes are done: judging the last ones
                judge.request_stop()
                print("\nstopping: judgements made are saved, the others stay owed",
                      file=sys.stderr)
                return
            print("\ncancelling running episodes ..." if again else
                  f"\nstopping: no new episodes; waiting up to {config.shutdown_grace_s:g}s "
                  "for running ones (Ctrl-C again to cancel them)", file=sys.stderr)

        signals: list[int] = []

        def on_process_signal(sig: int) -> None:
            signals.append(sig)
            on_signal()

        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, on_process_signal, sig)
        if request.stop is not None:
            res.tasks.append(asyncio.create_task(_stop_when(request.stop, on_signal)))
        try:
            try:
                outcome = await sched.run()
                if not outcome.interrupted:
                    tail.append(True)
            finally:
                await writer.close()
                await failures.close()
                if journal is not None:  # every unit recorded: its responses are not needed
                    await journal.close(all_done=sched.outcome.finished == len(units))
            if judge is not None:  # what is judged is written; the rest stays owed
                if outcome.interrupted:
                    await judge.abort()
                else:
                    print("judging the remaining episodes ...", file=sys.stderr)
                    await judge.finish()
                judged = judge.summary(run_dir)
                if judge.stopped and not outcome.interrupted:
                    outcome.interrupted = True
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)
            if judge is not None and not judge.closed:  # an error on the way: keep what is judged
                await judge.abort()
        record_end(run_dir, time.monotonic() - started, outcome.finished, outcome.interrupted,
                   res.named_routers(), counters.infra_retries, counters.fd_retries,
                   res.fd_exhausted(), replayed_calls=counters.replayed_calls)
    finally:
        await res.aclose()
        if request.call_log:
            write_call_log(run_dir, res.roles)
    text_summary = summary.render(wall_s=time.monotonic() - started, counters=counters,
                                  failures=outcome.failed, run_dir=str(run_dir))
    text_summary += "\n" + settings_line
    if judged:
        text_summary += "\n" + judged
    owed = judge.owed.episodes if judge is not None and judge.owed is not None else 0
    if outcome.interrupted:
        again = f"`agentsweep run --resume {run_dir}{' --judge' if request.judge else ''}`"
        text_summary += (f"\n  interrupted while judging; continue with {again}" if tail else
                         f"\n  interrupted: {outcome.cancelled} running episodes cancelled, "
                         f"{outcome.not_started} not started; continue with {again}")
        return SweepResult(run_dir, EXIT_INTERRUPTED, text_summary, owed, bool(signals))
    return SweepResult(run_dir, EXIT_FAILED_UNITS if outcome.failed else EXIT_OK, text_summary,
                       owed)


async def _stop_when(event: asyncio.Event, on_signal: Callable[[], None]) -> None:
    await event.wait()
    on_signal()
    on_signal()  # as Ctrl-C twice: running episodes are cancelled now
