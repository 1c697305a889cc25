"""The `Router`'s per-replica background work: the look at each replica at start
(`/v1/models`), its health probes and restarts, and its `/metrics` polling for admission."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from .errors import HTTPStatusError, InfrastructureError, MalformedResponse
from .replica_health import probe
from .router_admission import kv_capacity_tokens
from .router_replica import Replica
from .vllm_metrics import parse_vllm_metrics

if TYPE_CHECKING:
    from .router import Router

# `self` is the Router: these were its methods and use its private helpers.


async def inspect_replica(self: Router, rep: Replica) -> None:
    h = self.settings.health
    try:
        rep.models = [m["id"] for m in await rep.client.list_models(timeout_s=h.probe_timeout_s)]
        rep.has_models = True
    except HTTPStatusError as exc:
        if exc.status < 500:
            self._no_models(rep)
        else:
            self._take_out(rep, f"HTTP {exc.status} at start", cancel=False)
    except (InfrastructureError, MalformedResponse) as exc:
        self._take_out(rep, f"not answering at start: {exc}", cancel=False)

async def health_loop(self: Router, rep: Replica) -> None:
    h = self.settings.health
    while True:
        await asyncio.sleep(h.probe_interval_s)
        ok = await probe(rep.client, h.probe_path, h.probe_timeout_s)
        change = rep.health.probed(ok)
        if change == "out":
            self._take_out(rep, "stopped answering health probes", cancel=True)
        elif change == "in":
            self._rejoin(rep)
        elif rep.spec.restart is not None and rep.health.restart_due(self.clock()):
            rep.health.restarting(self.clock())
            self.stats.restarts += 1
            try:
                await rep.spec.restart()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - try again after the backoff
                self.stats.restart_errors += 1
                self.note(f"restart:{rep.index}:{rep.health.restarts}",
                          f"restart of {rep.name} failed: {exc}")

async def metrics_loop(self: Router, rep: Replica) -> None:
    kv_known = bool(self.settings.admission.kv_tokens)
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
                    self.note("no-metrics", f"{rep.name} has no vLLM /metrics; admission "
                                            "adapts from latency and 429s")
                    return
                if not kv_known:
                    kv_known = True
                    c = kv_capacity_tokens(text)
                    if c:
                        rep.admission.set_kv_tokens(c)
                rep.admission.observe(m)
        await asyncio.sleep(self.settings.poll_interval_s)
