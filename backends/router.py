"""`Router`: one role's model calls spread over N replicas, with the calling surface of
`ChatClient` (`chat`, `list_models`, `resolve_model`, `get_text`, `close`, async context).

    async with Router(["http://gpu1:8000/v1", "http://gpu2:8000/v1"], model="M") as router:
        resp = await router.chat(messages, session_id=sid, sampling=...)

Each request is placed by `router_policy.PlacementPolicy` (sticky least-loaded by default),
waits for a slot under that replica's adaptive cap (`router_admission`), and is sent by the
replica's own `ChatClient`, the session header included (an external router can still route
on it). A replica that fails at the connection level, answers 5xx repeatedly or stops
answering probes is taken out (`replica_health`); its queued and in-flight requests are placed
again on the others, so an episode continues elsewhere and is never scored as an agent failure.
Only when no replica comes back within `health.all_down_wait_s` (or the call's deadline) does
`chat` raise `AllReplicasDown`, an `InfrastructureError`. Background tasks (started by `start()`
or the first call) probe health, restart managed replicas and poll `/metrics` for admission.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Callable, Sequence
from typing import Any, Self

import msgspec

from .chat_wire import TokenCount
from .client import DEFAULT_SESSION_HEADER, ChatClient
from .errors import HTTPStatusError, InfrastructureError, MalformedResponse, RequestTimeout
from .router_admission import CONTINUING, NEW, ReplicaDown
from .router_policy import PlacementPolicy
from .router_replica import (
    AllReplicasDown,
    Failover,
    Replica,
    ReplicaSpec,
    RouterSettings,
    RouterStats,
    as_replica,
    estimate_tokens,
    failure_kind,
    first_turn,
)
from .router_tasks import RouterHooks, health_loop, inspect_replica, metrics_loop
from .types import ChatMessage, ChatResponse, Endpoint

__all__ = ["AllReplicasDown", "ReplicaSpec", "Router", "RouterSettings", "RouterStats"]


class Router:
    """Spreads chat calls over replicas; see the module docstring."""

    def __init__(
        self,
        replicas: Sequence[Any],
        *,
        model: str | None = None,
        settings: RouterSettings | None = None,
        template: Endpoint | None = None,
        session_header: str = DEFAULT_SESSION_HEADER,
        max_connections: int = 4096,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not replicas:
            raise ValueError("Router needs at least one replica")
        self.settings = s = settings or RouterSettings()
        specs = [as_replica(r, template) for r in replicas]
        self.endpoint = specs[0].endpoint
        self.timeout_s = (template or self.endpoint).timeout_s
        self._model = model or next((sp.endpoint.model for sp in specs if sp.endpoint.model), None)
        self.clock = clock
        self.replicas: list[Replica] = []
        for i, sp in enumerate(specs):
            ep = msgspec.structs.replace(sp.endpoint, max_retries=s.health.replica_retries)
            client = ChatClient(ep, max_connections=max_connections, session_header=session_header,
                                backoff_base_s=s.health.replica_backoff_s, backoff_cap_s=1.0)
            rep = Replica(i, sp, client, s)
            if s.admission.kv_tokens:
                rep.admission.set_kv_tokens(s.admission.kv_tokens)
            self.replicas.append(rep)
        self.policy = PlacementPolicy(
            len(specs), s.policy, abs_threshold=s.abs_threshold, rel_threshold=s.rel_threshold,
            continuing_slack=s.continuing_slack, tokens_per_unit=s.tokens_per_unit,
            session_idle_s=s.session_idle_s, weights=[sp.weight for sp in specs], clock=clock,
        )
        self.stats = RouterStats()
        self.notes: list[str] = []  # said once each (no logging on the hot path)
        self._noted: set[str] = set()
        self._tasks: list[asyncio.Task[None]] = []
        self._started = False
        self._start_lock: asyncio.Lock | None = None
        self._healthy = asyncio.Event()
        self._healthy.set()
        self.placements: list[tuple[str | None, int]] | None = None  # a list: record answers
        self._orders: dict[str, int] = {}
        self._counter = itertools.count()

    # -- lifecycle ---------------------------------------------------------------------------
    async def start(self) -> None:
        """Check each replica once (GET /v1/models) and start the background tasks."""
        if self._started:
            return
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            if self._started:
                return
            hooks = RouterHooks(self.settings, self.stats, self.clock, self.note,
                                self._take_out, self._rejoin, self._no_models)
            await asyncio.gather(*(inspect_replica(hooks, r) for r in self.replicas))
            for rep in self.replicas:
                self._tasks.append(asyncio.create_task(health_loop(hooks, rep)))
                if self.settings.admission.enabled:
                    self._tasks.append(asyncio.create_task(metrics_loop(hooks, rep)))
            self._started = True

    async def close(self) -> None:
        for t in self._tasks:
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()
        self._started = False
        for rep in self.replicas:
            await rep.client.close()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def note(self, key: str, text: str) -> None:
        if key not in self._noted:
            self._noted.add(key)
            self.notes.append(text)

    # -- the ChatClient surface --------------------------------------------------------------
    async def chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        model: str | None = None,
        session_id: str | None = None,
        timeout_s: float | None = None,
        new_episode: bool | None = None,
        order: int | None = None,
        **kwargs: Any,
    ) -> ChatResponse:
        """`ChatClient.chat` over the replicas (same keyword arguments: tools, tool_choice,
        response_format, sampling, priority, extra_headers). `new_episode` (default: the
        conversation has no assistant message yet) and `order` (default: the session's first
        appearance) set placement and admission priority."""
        if not self._started:
            await self.start()
        if model is None:
            model = self._model or await self.resolve_model()
        stats = self.stats
        stats.requests += 1
        stats.in_flight += 1
        start = self.clock()
        total = self.timeout_s if timeout_s is None else timeout_s
        deadline = start + total
        if new_episode is None:
            new_episode = first_turn(messages)
        klass = NEW if new_episode else CONTINUING
        if order is None:
            order = self._order_of(session_id)
        tokens = estimate_tokens(messages, self.settings.chars_per_token)
        policy = self.policy
        tried: set[int] = set()
        failovers = 0
        try:
            while True:
                r = policy.place(session_id, tokens, new_episode=new_episode, exclude=tried)
                if r is None:
                    if tried and any(policy.healthy):
                        tried.clear()  # every healthy replica failed once: round again
                        await asyncio.sleep(min(1.0, 0.05 * 2**failovers))
                    else:
                        await self._wait_healthy(deadline)
                    continue
                rep = self.replicas[r]
                try:
                    resp = await self._attempt(rep, klass, order, deadline, total, messages,
                                               model, session_id, kwargs)
                except Failover as f:
                    failovers += 1
                    stats.failovers += 1
                    tried.add(r)
                    limit = self.settings.health.max_failovers
                    if failovers > limit or self.clock() >= deadline:
                        raise AllReplicasDown(
                            f"{failovers} replica failures for one request: {f.cause}"
                        ) from None
                    continue
                finally:
                    policy.finished(r, session_id, tokens)
                stats.succeeded += 1
                if self.placements is not None:
                    self.placements.append((session_id, r))
                return resp
        except BaseException:
            stats.failed += 1
            raise
        finally:
            stats.in_flight -= 1

    async def list_models(self, *, timeout_s: float | None = None) -> list[dict[str, Any]]:
        """The first healthy replica's GET /v1/models; a replica without it (404) gives the
        configured model name instead (said once in `notes`)."""
        last: BaseException | None = None
        for rep in self._healthy_first():
            try:
                return await rep.client.list_models(timeout_s=timeout_s)
            except HTTPStatusError as exc:
                if exc.status >= 500:
                    last = exc
                    continue
                self._no_models(rep)
                if self._model:
                    return [{"id": self._model, "object": "model"}]
                last = exc
            except InfrastructureError as exc:
                last = exc
        if isinstance(last, HTTPStatusError):
            raise MalformedResponse(
                last.url, "no replica lists its models (GET /v1/models); configure the model name"
            ) from None
        raise AllReplicasDown(f"no replica answered GET /v1/models: {last}")

    async def resolve_model(self) -> str:
        if not self._model:
            models = await self.list_models()
            if not models:
                raise MalformedResponse(self.endpoint.base_url, "server lists no models")
            self._model = models[0]["id"]
        return self._model

    async def count_tokens(self, messages: Sequence[ChatMessage], *, model: str | None = None,
                           timeout_s: float | None = 60.0) -> TokenCount | None:
        """`ChatClient.count_tokens` on the first healthy replica (replicas serve one model)."""
        if model is None:
            model = self._model or await self.resolve_model()
        return await self._healthy_first()[0].client.count_tokens(messages, model=model,
                                                                   timeout_s=timeout_s)

    async def get_text(self, path: str, *, timeout_s: float | None = 30.0) -> str:
        """`ChatClient.get_text` on the first healthy replica."""
        return await self._healthy_first()[0].client.get_text(path, timeout_s=timeout_s)

    def end_session(self, session_id: str) -> None:
        """An episode ended: its session stops counting as load (its pin stays for trials)."""
        self.policy.end_session(session_id)

    def snapshot(self) -> dict[str, Any]:
        """Counters and per-replica state, for telemetry and the measurements."""
        reps = []
        for rep in self.replicas:
            a, i = rep.admission, rep.index
            m = a.last_metrics
            reps.append({
                "url": rep.name, "healthy": rep.health.healthy, "requests": rep.requests,
                "in_flight": a.in_flight, "waiting": a.waiting, "cap": a.limit, "mode": a.mode,
                "load": round(self.policy.load(i), 3), "active_sessions": self.policy.active[i],
                "restarts": rep.health.restarts, "preemptions": m.preemptions if m else None,
                "weight": rep.spec.weight, "prompt_tokens": rep.prompt_tokens,
                "completion_tokens": rep.completion_tokens, "cached_tokens": rep.cached_tokens,
                "kv_usage": m.kv_cache_usage if m else None,
                "prefix_hit_rate": m.prefix_cache_hit_rate if m else None,
                "admission": msgspec.structs.asdict(a.stats),
            })
        return {"router": msgspec.structs.asdict(self.stats),
                "policy": msgspec.structs.asdict(self.policy.stats), "replicas": reps,
                "notes": list(self.notes)}

    # -- one attempt on one replica ----------------------------------------------------------
    async def _attempt(self, rep: Replica, klass: int, order: int, deadline: float, total: float,
                       messages: Sequence[ChatMessage], model: str, session_id: str | None,
                       kwargs: dict[str, Any]) -> ChatResponse:
        admission = rep.admission
        try:
            await admission.acquire(klass, order)
        except ReplicaDown:
            raise Failover("replica taken out while the request waited") from None
        try:
            remaining = deadline - self.clock()
            if remaining <= 0:
                raise RequestTimeout(rep.name, total)
            rep.requests += 1
            task = asyncio.ensure_future(rep.client.chat(
                messages, model=model, session_id=session_id, timeout_s=remaining, **kwargs))
            rep.attempts.add(task)
            try:
                resp = await task
            except asyncio.CancelledError:
                me = asyncio.current_task()
                if task.cancelled() and (me is None or not me.cancelling()):
                    raise Failover("replica taken out while the request ran") from None
                raise
            finally:
                rep.attempts.discard(task)
        except (RequestTimeout, HTTPStatusError, MalformedResponse):
            raise
        except InfrastructureError as exc:
            kind = failure_kind(exc)
            if kind == "overload":
                admission.on_overload()
            elif kind == "connection" or rep.health.server_error():
                self._take_out(rep, f"{kind} failure: {exc}", cancel=False)
            raise Failover(exc) from None
        finally:
            admission.release()
        rep.health.answered()
        admission.on_latency(resp.latency_s)
        u = resp.usage
        rep.answered += 1
        rep.prompt_tokens += u.prompt_tokens
        rep.completion_tokens += u.completion_tokens
        rep.cached_tokens += u.cached_tokens
        return resp

    # -- health ------------------------------------------------------------------------------
    def _take_out(self, rep: Replica, reason: str, *, cancel: bool) -> None:
        if not rep.health.take_out(self.clock(), reason):
            return
        self.stats.taken_out += 1
        self.policy.set_healthy(rep.index, False)
        rep.admission.fail_waiters()
        self.note(f"out:{rep.index}:{self.stats.taken_out}", f"replica {rep.name} out: {reason}")
        if cancel:
            for t in list(rep.attempts):
                t.cancel()
        if not any(self.policy.healthy):
            self._healthy.clear()

    def _rejoin(self, rep: Replica) -> None:
        if rep.health.rejoin():
            self.stats.rejoined += 1
            self.policy.set_healthy(rep.index, True)
            self.note(f"in:{rep.index}:{self.stats.rejoined}", f"replica {rep.name} rejoined")
            self._healthy.set()

    async def _wait_healthy(self, deadline: float) -> None:
        self.stats.all_down_waits += 1
        wait = min(deadline - self.clock(), self.settings.health.all_down_wait_s)
        try:
            if wait <= 0:
                raise TimeoutError
            await asyncio.wait_for(self._healthy.wait(), wait)
        except TimeoutError:
            reasons = "; ".join(f"{r.name}: {r.health.down_reason}" for r in self.replicas)
            raise AllReplicasDown(f"no replica is up ({reasons})") from None

    def _healthy_first(self) -> list[Replica]:
        return sorted(self.replicas, key=lambda r: not r.health.healthy)

    def _no_models(self, rep: Replica) -> None:
        rep.has_models = False
        name = self._model or "(none configured)"
        self.note("no-models", f"{rep.name} has no GET /v1/models; using the configured model "
                               f"name {name!r}")

    def _order_of(self, session_id: str | None) -> int:
        if session_id is None:
            return next(self._counter)
        orders = self._orders
        o = orders.get(session_id)
        if o is None:
            o = orders[session_id] = next(self._counter)
            if len(orders) > 200_000:
                with contextlib.suppress(StopIteration):
                    del orders[next(iter(orders))]
        return o
