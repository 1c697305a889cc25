"""Build a run from its config and run it: data, engine, clients, sandbox, scheduler, results.

`run_sweep(request)` is what `agentsweep run` calls (inside one uvloop loop). It owns every
resource it opens and closes them in reverse order, also on Ctrl-C and errors.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from backends.client import ChatClient
from backends.types import Endpoint
from bench_data.types import Task
from evaluator.config import (
    AdmissionConfig,
    ConfigError,
    RunConfig,
    load_config,
    plain,
    profile_deviations,
)
from evaluator.protocols.base import EpisodeContext, ProtocolSettings
from evaluator.records import EpisodeRecord, UnitId
from evaluator.run.admission import AdmissionController
from evaluator.run.judging_hook import start_judging
from evaluator.run.manifest import (
    CONFIG_FILE,
    MANIFEST_FILE,
    ResumeEntry,
    RoleInfo,
    data_files,
    new_manifest,
    read_manifest,
    write_manifest,
)
from evaluator.run.progress import Counters, Summary, progress_task
from evaluator.run.results import (
    EPISODES_FILE,
    FAILURES_FILE,
    ResultWriter,
    finished_keys,
    iter_records,
)
from evaluator.run.roles import AdmittedChat, EpisodeTicket, RoleEndpoint
from evaluator.run.scheduler import Scheduler, make_units

EXIT_OK, EXIT_FAILED_UNITS, EXIT_USAGE, EXIT_INTERRUPTED = 0, 3, 2, 130


class SweepError(Exception):
    """A run cannot start (bad config, data, run directory): the message says why."""


@dataclass
class RunRequest:
    config_path: str | None = None
    overrides: list[tuple[str, Any, str]] = field(default_factory=list)
    resume: str | None = None
    judge: bool = False
    report: bool = False
    progress: str | None = None  # overrides config.progress


@dataclass
class SweepResult:
    run_dir: Path
    exit_code: int
    summary: str = ""


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
        config, text = load_config(cfg_path, first + list(request.overrides))
        return config, text, run_dir, manifest
    config, text = load_config(request.config_path, list(request.overrides))
    name = config.name or (
        f"{Path(config.data.dataset).stem}-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}"
    )
    run_dir = Path(config.out) / name
    if (run_dir / MANIFEST_FILE).exists():
        raise SweepError(f"{run_dir} already holds a run; continue it with --resume {run_dir}")
    return msgspec.structs.replace(config, name=name), text, run_dir, None


def _load_protocol(entry: str) -> Callable[[EpisodeContext], Any]:
    module, _, fn = entry.partition(":")
    if not module or not fn:
        raise SweepError(f"protocol.entry {entry!r}: expected 'module:function'")
    try:
        return getattr(importlib.import_module(module), fn)
    except (ImportError, AttributeError) as exc:
        raise SweepError(f"protocol.entry {entry!r}: {exc}") from None


class _Resources:
    """Everything a run opens, closed in reverse order by `aclose`."""

    def __init__(self) -> None:
        self.server: Any = None
        self.clients: dict[tuple[Any, ...], ChatClient] = {}
        self.admission: dict[str, AdmissionController] = {}
        self.tasks: list[asyncio.Task[Any]] = []
        self.sandbox: Any = None

    def client(self, ep: Endpoint, max_connections: int) -> ChatClient:
        key = (ep.base_url, ep.api_key, tuple(sorted(ep.extra_headers.items())), ep.timeout_s,
               ep.max_retries)
        c = self.clients.get(key)
        if c is None:
            c = self.clients[key] = ChatClient(ep, max_connections=max_connections)
        return c

    def admission_for(self, base_url: str, config: AdmissionConfig) -> AdmissionController:
        """The one admission controller of an endpoint, shared by every role that uses it."""
        adm = self.admission.get(base_url)
        if adm is None:
            adm = self.admission[base_url] = AdmissionController(base_url, config)
        return adm

    async def aclose(self) -> None:
        for t in self.tasks:
            t.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        if self.sandbox is not None:
            with contextlib.suppress(Exception):
                self.sandbox.close()
        for c in self.clients.values():
            await c.close()
        if self.server is not None:
            await self.server.astop()


async def _engine(config: RunConfig, run_dir: Path, res: _Resources, judge: bool) -> str | None:
    """Base URL that replaces "embedded", starting the engine when the config needs one."""
    eps = [config.agent.endpoint, config.user.endpoint, config.tool_simulator.endpoint]
    if judge:
        eps += config.judge.endpoints
    if not any(ep.base_url == "embedded" for ep in eps):
        return None
    from backends.server import VLLMServer

    e = config.engine
    if e.url:
        res.server = await asyncio.to_thread(VLLMServer.attach, e.url)
    else:
        print(f"starting the embedded engine (log: {run_dir / 'engine.log'}) ...", file=sys.stderr)
        res.server = VLLMServer(
            e.model or None, device=e.device, max_model_len=e.max_model_len,
            cpu_kv_cache_gb=e.cpu_kv_cache_gb, tensor_parallel_size=e.tensor_parallel_size,
            extra_args=e.extra_args, log_path=run_dir / "engine.log",
            startup_timeout_s=e.startup_timeout_s,
        )
        await res.server.astart()
    return res.server.base_url


def _resolve(ep: Endpoint, engine_url: str | None, engine_model: str) -> Endpoint:
    if ep.base_url != "embedded":
        return ep
    assert engine_url is not None
    return msgspec.structs.replace(ep, base_url=engine_url, model=ep.model or engine_model)


async def _role(
    role: str, ep: Endpoint, sampling: Any, config: RunConfig, res: _Resources,
    counters: Counters, infos: list[RoleInfo], embedded: bool,
) -> RoleEndpoint:
    client = res.client(ep, max_connections=max(64, config.admission.max_cap * 2))
    info = RoleInfo(role=role, base_url=ep.base_url, model=ep.model, embedded=embedded)
    try:
        info.models = await client.list_models(timeout_s=30.0)
        model = await client.resolve_model()
        info.model = model
    except Exception as exc:  # noqa: BLE001 - recorded in the manifest, fatal below
        info.error = f"{type(exc).__name__}: {exc}"
        infos.append(info)
        raise SweepError(f"[{role}] endpoint {ep.base_url} is not answering: {exc}") from None
    infos.append(info)
    adm = res.admission_for(ep.base_url, config.admission)
    return RoleEndpoint(role, client, model, sampling, adm, counters,
                        send_priority=config.admission.send_priority)


def _sandbox_settings(config: RunConfig, run_dir: Path, cache_dir: Path | None) -> Any:
    s = config.sandbox
    changes: dict[str, Any] = {}
    if not s.miss_log:
        changes["miss_log"] = str(run_dir / "tool_misses.log")
    if not s.store and cache_dir is not None:
        from backends.model import cache_root
        from cache_store.importer import import_cache

        digest = __import__("hashlib").sha256(str(cache_dir.resolve()).encode()).hexdigest()[:16]
        store = cache_root() / "stores" / f"{cache_dir.parent.name}-{digest}.store"
        store.parent.mkdir(parents=True, exist_ok=True)
        import_cache(cache_dir, store)
        changes["store"] = str(store)
    if not s.store and "store" not in changes and not s.simulated_store:
        changes["simulated_store"] = str(run_dir / "simulated")
    return msgspec.structs.replace(s, **changes) if changes else s


async def run_sweep(request: RunRequest) -> SweepResult:
    from bench_data.registry import load_tasks
    from bench_data.types import TaskLoadError

    try:
        config, text, run_dir, manifest = _load(request)
    except (ConfigError, FileNotFoundError, ValueError) as exc:
        raise SweepError(str(exc)) from None
    prompt_set = _prompt_set(config.prompts)
    d = config.data
    try:
        taskset = load_tasks(d.dataset, subsets=d.subsets or None, limit=d.limit or None,
                             data_dir=d.data_dir or None, skip_bad=d.skip_bad)
    except TaskLoadError as exc:
        raise SweepError(f"data: {exc}") from None
    except (FileNotFoundError, ValueError, KeyError) as exc:
        raise SweepError(f"data: {exc}") from None
    if not taskset.tasks:
        raise SweepError(f"data: dataset {d.dataset!r} with subsets {d.subsets} has no tasks")
    protocols = _protocols(config, taskset.tasks)
    _check_adcode_table(config, taskset)  # before the engine starts: a missing table fails now

    run_dir.mkdir(parents=True, exist_ok=True)
    done = finished_keys(run_dir, repair=True)
    units = make_units(config.name, taskset.tasks, config.trials, config.seed, skip=done)
    counters = Counters()
    counters.units_total = len(taskset.tasks) * config.trials
    counters.units_skipped = counters.units_total - len(units)
    summary = Summary()
    for rec in iter_records(run_dir):
        summary.add(rec)

    res = _Resources()
    started = time.monotonic()
    judged = ""
    try:
        engine_url = await _engine(config, run_dir, res, request.judge)
        engine_model = res.server.model if res.server is not None else ""
        infos: list[RoleInfo] = []
        roles = {}
        for name in ("agent", "user", "tool_simulator"):
            rc = getattr(config, name)
            ep = _resolve(rc.endpoint, engine_url, engine_model)
            roles[name] = await _role(name, ep, rc.sampling, config, res, counters, infos,
                                      rc.endpoint.base_url == "embedded")
        from cache_store.sandbox import open_sandbox

        sb_settings = _sandbox_settings(config, run_dir, taskset.cache_dir)
        sim = roles["tool_simulator"]
        res.sandbox = await open_sandbox(sb_settings, tool_schemas=taskset.tool_schemas,
                                         simulator_client=AdmittedChat(sim),
                                         simulator_model=sim.model, prompts=prompt_set,
                                         **_adcode_args(config, taskset))
        _write_run_files(run_dir, config, text, request, manifest, taskset, infos, len(done),
                         sb_settings.store, res.sandbox)
        judge = None
        if request.judge:
            judge_eps = [_resolve(ep, engine_url, engine_model) for ep in config.judge.endpoints]
            judge = await start_judging(config, run_dir, judge_eps, res, counters, taskset)

        psettings = ProtocolSettings(
            max_steps=config.protocol.max_steps, max_turns=config.protocol.max_turns,
            finish_marker=config.protocol.finish_marker,
            unsolvable_tags=tuple(config.protocol.unsolvable_tags),
            language=config.protocol.language, layout=config.protocol.layout,
            stop_at_unsolvable_tag=config.protocol.stop_at_unsolvable_tag,
            retry_empty_replies=config.protocol.retry_empty_replies, prompts=prompt_set,
        )
        agent_ep, user_ep, sandbox = roles["agent"], roles["user"], res.sandbox

        async def episode(unit: UnitId, task: Task, ticket: EpisodeTicket) -> EpisodeRecord:
            ctx = EpisodeContext(
                unit=unit, task=task, agent=agent_ep.for_episode(ticket, unit.seed),
                sandbox=sandbox, user=user_ep.for_episode(ticket, unit.seed),
                settings=psettings, session_id=ticket.session_id,
            )
            return await protocols[task.subset](ctx)

        writer = ResultWriter(run_dir / EPISODES_FILE, fsync=config.fsync).start()
        failures = ResultWriter(run_dir / FAILURES_FILE, fsync=config.fsync).start()

        def on_record(rec: EpisodeRecord) -> None:
            summary.add(rec)
            if judge is not None:
                judge.submit(rec)

        sched = Scheduler(units, episode, writer=writer, failures=failures, counters=counters,
                          concurrency=config.concurrency, retry=config.retry,
                          shutdown_grace_s=config.shutdown_grace_s, on_record=on_record)
        _start_pollers(res, config, counters, agent_ep.admission)
        res.tasks.append(asyncio.create_task(
            progress_task(counters, request.progress or config.progress)))
        loop = asyncio.get_running_loop()

        def on_signal() -> None:
            again = sched.stopping
            sched.request_stop()
            print("\ncancelling running episodes ..." if again else
                  f"\nstopping: no new episodes; waiting up to {config.shutdown_grace_s:g}s "
                  "for running ones (Ctrl-C again to cancel them)", file=sys.stderr)

        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, on_signal)
        try:
            outcome = await sched.run()
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)
            await writer.close()
            await failures.close()
        if judge is not None and not outcome.interrupted:
            print("judging the remaining episodes ...", file=sys.stderr)
            judged = await judge.finish()
    finally:
        await res.aclose()
    text_summary = summary.render(wall_s=time.monotonic() - started, counters=counters,
                                  failures=outcome.failed, run_dir=str(run_dir))
    if judged:
        text_summary += "\n" + judged
    if outcome.interrupted:
        text_summary += (f"\n  interrupted: {outcome.cancelled} running episodes cancelled, "
                         f"{outcome.not_started} not started; continue with "
                         f"`agentsweep run --resume {run_dir}`")
        return SweepResult(run_dir, EXIT_INTERRUPTED, text_summary)
    return SweepResult(run_dir, EXIT_FAILED_UNITS if outcome.failed else EXIT_OK, text_summary)


def _protocols(config: RunConfig, tasks: list[Task]) -> dict[str, Callable[[EpisodeContext], Any]]:
    if config.protocol.entry:
        fn = _load_protocol(config.protocol.entry)
        return {t.subset: fn for t in tasks}
    from evaluator.protocols import get_protocol

    out = {}
    for t in tasks:
        if t.subset not in out:
            try:
                out[t.subset] = get_protocol(t.subset)
            except KeyError as exc:
                raise SweepError(f"data: {exc.args[0]}") from None
    return out


def _prompt_set(spec: str) -> Any:
    from evaluator.prompt_sets import PromptSetError, load_prompt_set

    try:
        return load_prompt_set(spec)
    except PromptSetError as exc:
        raise SweepError(f"prompts: {exc}") from None


def _prompt_info(spec: str) -> dict[str, Any]:
    ps = _prompt_set(spec)
    return {"name": ps.name, "digest": ps.digest, "path": str(ps.path or "")}


def _adcode_args(config: RunConfig, taskset: Any) -> dict[str, Any]:
    """Where open_sandbox looks for the division table when `sandbox.adcode_table` is ""."""
    return {"data_root": taskset.files[0].parent if taskset.files else None,
            "builtin_sample": config.data.dataset == "sample"}


def _check_adcode_table(config: RunConfig, taskset: Any) -> None:
    from cache_store.adcode import AdcodeTableError, regions_for

    names = [t["function"]["name"] for t in taskset.tool_schemas]
    try:  # loads and caches the table; open_sandbox reuses it
        regions_for(config.sandbox.adcode_table, names, **_adcode_args(config, taskset))
    except AdcodeTableError as exc:
        raise SweepError(f"sandbox: {exc}") from None


def _describe(sandbox: Any) -> dict[str, Any]:
    """What the sandbox says of itself for the manifest (validation mode, retrieval)."""
    describe = getattr(sandbox, "describe", None)
    return dict(describe()) if callable(describe) else {}


def _write_run_files(run_dir: Path, config: RunConfig, text: str, request: RunRequest,
                     manifest: Any, taskset: Any, infos: list[RoleInfo], n_done: int,
                     store: str, sandbox: Any = None) -> None:
    if manifest is not None:  # resume: keep config.toml, record this start
        manifest.resumes.append(ResumeEntry(
            at=time.time(), overrides=[list(o) for o in request.overrides],
            finished_before=n_done))
        write_manifest(run_dir, manifest)
        return
    (run_dir / CONFIG_FILE).write_text(text or "# no config file given: all defaults\n",
                                       encoding="utf-8")
    subsets: dict[str, int] = {}
    for t in taskset.tasks:
        subsets[t.subset] = subsets.get(t.subset, 0) + 1
    m = new_manifest(
        run=config.name, overrides=[list(o) for o in request.overrides],
        dataset=config.data.dataset, benchmark=taskset.benchmark, n_tasks=len(taskset.tasks),
        trials=config.trials, seed=config.seed, subsets=subsets,
        data_files=data_files(list(taskset.files)), data_issues=[str(i) for i in taskset.issues],
        roles=infos, resolved_config=plain(config), sandbox_store=store,
        profile=config.profile, deviations=profile_deviations(config),
        sandbox=_describe(sandbox), prompt_set=_prompt_info(config.prompts),
    )
    # the run name is part of every unit: pin it so a resume rebuilds the same units
    m.overrides.insert(0, ["name", config.name, "run name"])
    write_manifest(run_dir, m)


def _start_pollers(res: _Resources, config: RunConfig, counters: Counters,
                   agent_adm: AdmissionController) -> None:
    from backends.vllm_metrics import scrape_vllm_metrics

    for url, adm in res.admission.items():
        client = next(c for c in res.clients.values() if c.base_url == url.rstrip("/"))
        state: dict[str, Any] = {}

        async def scrape(client: ChatClient = client, adm: AdmissionController = adm,
                         state: dict[str, Any] = state) -> Any:
            m = await scrape_vllm_metrics(client, timeout_s=5.0)
            if adm is agent_adm:
                first = state.setdefault("first", m)
                rate = m.hit_rate_since(first)
                if rate is not None:
                    counters.prefix_hit_rate = rate
            return m

        res.tasks.append(asyncio.create_task(adm.poll(scrape), name=f"metrics:{url}"))
