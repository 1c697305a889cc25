"""The `Router`'s per-replica background work: the look at each replica at start
(`/v1/models`), its health probes and restarts, and its `/metrics` polling for admission.

They are handed what they need of the router (`RouterHooks`: its settings, clock and counters,
and how it takes a replica out or lets it back in), not the router, so that this module sits
below `router.py`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from .errors import HTTPStatusError, InfrastructureError, MalformedResponse
from .replica_health import probe
from .router_admission import kv_capacity_tokens
from .router_replica import Replica, RouterSettings, RouterStats
from .vllm_metrics import parse_vllm_metrics


@dataclass(frozen=True)
class RouterHooks:
    """What a replica's background work may read and do of the router it serves.

    take_out: (replica, reason, *, cancel) takes it out of placement (cancel = its attempts
    too); rejoin: lets it back in; no_models: marks it as serving no model list; note: (key,
    text) a note shown once per key."""

    settings: RouterSettings
    stats: RouterStats
    clock: Callable[[], float]
    note: Callable[[str, str], None]
    take_out: Callable[..., None]
    rejoin: Callable[[Replica], None]
    no_models: Callable[[Replica], None]


async def inspect_replica(hooks: RouterHooks, rep: Replica) -> None:
    h = hooks.settings.health
    try:
        rep.models = [m["id"] for m in await rep.client.list_models(timeout_s=h.probe_timeout_s)]
        rep.has_models = True
    except HTTPStatusError as exc:
        if exc.status < 500:
            hooks.no_models(rep)
        else:
            hooks.take_out(rep, f"HTTP {exc.status} at start", cancel=False)
    except (InfrastructureError, MalformedResponse) as exc:
        hooks.take_out(rep, f"not answering at start: {exc}", cancel=False)

async def health_loop(hooks: RouterHooks, rep: Replica) -> None:
    h = hooks.settings.health
    while True:
        await asyncio.sleep(h.probe_interval_s)
        ok = await probe(rep.client, h.probe_path, h.probe_timeout_s)
        change = rep.health.probed(ok)
        if change == "out":
            hooks.take_out(rep, "stopped answering health probes", cancel=True)
        elif change == "in":
            hooks.rejoin(rep)
        elif rep.spec.restart is not None and rep.health.restart_due(hooks.clock()):
            rep.health.restarting(hooks.clock())
            hooks.stats.restarts += 1
            try:
                await rep.spec.restart()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - try again after the backoff
                hooks.stats.restart_errors += 1
                hooks.note(f"restart:{rep.index}:{rep.health.restarts}",
                           f"restart of {rep.name} failed: {exc}")

async def metrics_loop(hooks: RouterHooks, rep: Replica) -> None:
    kv_known = bool(hooks.settings.admission.kv_tokens)
    while True:
        if rep.health.healthy:
            try:
                text = await rep.client.get_text("/metrics", timeout_s=5.0)
            except HTTPStatusError:
                text = ""
            except (InfrastructureError, MalformedResponse):
                text = None  # down or slow: health handles it; try again
            if text is not None:
                m = parse_vllm_metrics(text)
                if m.requests_running is None and m.kv_cache_usage is None:
                    rep.admission.metrics_unavailable()
                    hooks.note("no-metrics", f"{rep.name} has no vLLM /metrics; admission "
                                             "adapts from latency and 429s")
                    return
                if not kv_known:
                    kv_known = True
                    c = kv_capacity_tokens(text)
                    if c:
                        rep.admission.set_kv_tokens(c)
                rep.admission.observe(m)
        await asyncio.sleep(hooks.settings.poll_interval_s)
