"""Per-replica admission of the router: an adaptive in-flight cap and a priority queue.

The cap starts from the KV-capacity bound n_max = kappa * C / G (C: KV-cache tokens of the
replica, from settings or from vLLM's `vllm:cache_config_info` on /metrics; G: expected tokens
per episode), or `initial_cap` when C is unknown. It then adapts:

* with /metrics (polled off the hot path by the router): on new preemptions the cap is cut to
  `preemption_backoff` (0.75) x the requests in flight; while the cap is binding, nothing waits
  in the server's queue and KV usage is below `kv_high`, it grows by `increase` per poll.
* without /metrics (a hosted endpoint or a proxy): AIMD on latency and 429s. Completions are
  grouped into windows (max(8, cap/2) answers); the baseline is the lowest window mean seen,
  creeping up 2% a window. A window whose mean exceeds `latency_tolerance` x baseline cuts the
  cap to `latency_decrease` x; a window within it, with the cap binding, grows it by `increase`.
  A 429 (or 503) cuts it to `overload_decrease` x, at most once per cooldown.

Waiters are served depth-first by default: requests of episodes that already made a call
before first requests of new episodes, older episodes first (`order`). "fifo" and
"breadth_first" (new episodes first) exist for the measurement in perf/saturation.py.
"""

from __future__ import annotations

import asyncio
import heapq
import re
import time

import msgspec

from .vllm_metrics import VLLMMetrics

CONTINUING = 0  # a request of an episode that already has an answer
NEW = 1  # the first request of an episode
ORDERS = ("depth_first", "fifo", "breadth_first")


class AdmissionSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    enabled: bool = True
    initial_cap: int = 64
    min_cap: int = 1
    max_cap: int = 4096
    kv_tokens: int | None = None  # C per replica; None: from /metrics when the server tells
    tokens_per_episode: int = 16384  # G
    kappa: float = 2.0
    order: str = "depth_first"
    increase: int = 4
    kv_high: float = 0.9
    preemption_backoff: float = 0.75
    latency_tolerance: float = 1.5
    latency_decrease: float = 0.9
    overload_decrease: float = 0.75
    overload_cooldown_s: float = 1.0

    def __post_init__(self) -> None:
        if not 1 <= self.min_cap <= self.initial_cap <= self.max_cap:
            raise ValueError("need 1 <= min_cap <= initial_cap <= max_cap")
        if self.order not in ORDERS:
            raise ValueError(f"admission order must be one of {ORDERS}, got {self.order!r}")

    def kv_bound(self, kv_tokens: int) -> int:
        """n_max = kappa * C / G, clamped to [min_cap, max_cap]."""
        n = int(self.kappa * kv_tokens / max(1, self.tokens_per_episode))
        return max(self.min_cap, min(self.max_cap, n))


class AdmissionStats(msgspec.Struct):
    granted: int = 0
    queued: int = 0
    increases: int = 0
    decreases: int = 0
    preemption_cuts: int = 0
    overload_cuts: int = 0
    peak_in_flight: int = 0


_CACHE_INFO = re.compile(r"^vllm:cache_config_info\{([^}]*)\}", re.MULTILINE)
_LABEL = re.compile(r'(\w+)="([^"]*)"')


def kv_capacity_tokens(metrics_text: str) -> int | None:
    """C from vLLM's `vllm:cache_config_info{block_size=..,num_gpu_blocks=..}` (summed over
    engines); None when the page does not say."""
    total = 0
    for m in _CACHE_INFO.finditer(metrics_text):
        labels = dict(_LABEL.findall(m.group(1)))
        try:
            total += int(labels["num_gpu_blocks"]) * int(labels["block_size"])
        except (KeyError, ValueError):
            continue
    return total or None


class ReplicaDown(Exception):
    """Internal: the replica was taken out while a request waited for it."""


class ReplicaAdmission:
    """In-flight cap + waiters of one replica. One event loop; not thread-safe."""

    def __init__(self, settings: AdmissionSettings, clock=time.monotonic) -> None:
        self.settings = settings
        self.clock = clock
        self.cap = float(settings.initial_cap)
        self.in_flight = 0
        self.mode = "initial"  # "metrics" | "latency" once the first poll tells
        self.stats = AdmissionStats()
        self.last_metrics: VLLMMetrics | None = None
        self._heap: list[tuple[int, int, int, asyncio.Future[None]]] = []
        self._seq = 0
        self._last_preemptions: float | None = None
        self._window: list[float] = []
        self._window_binding = False
        self.baseline_s: float | None = None
        self._last_cut = -1e18

    @property
    def limit(self) -> int:
        return max(self.settings.min_cap, int(self.cap))

    @property
    def waiting(self) -> int:
        return len(self._heap)

    @property
    def binding(self) -> bool:
        return self.in_flight >= self.limit or bool(self._heap)

    def set_kv_tokens(self, kv_tokens: int) -> None:
        """Start the cap from the KV-capacity bound (before adaptation has moved it)."""
        self.cap = float(self.settings.kv_bound(kv_tokens))
        self._wake()

    # -- queue ---------------------------------------------------------------------------
    async def acquire(self, klass: int, order: int) -> None:
        if not self.settings.enabled or (self.in_flight < self.limit and not self._heap):
            self._grant()
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._seq += 1
        mode = self.settings.order
        if mode == "depth_first":
            key = (klass, order)
        elif mode == "breadth_first":
            key = (1 - klass, 0)
        else:
            key = (0, 0)
        heapq.heappush(self._heap, (key[0], key[1], self._seq, fut))
        self.stats.queued += 1
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled() and fut.exception() is None:
                self.release()  # granted just as we were cancelled: hand the slot on
            raise

    def release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def fail_waiters(self) -> None:
        """The replica is out: every waiter raises ReplicaDown (and is placed again)."""
        heap, self._heap = self._heap, []
        for *_, fut in heap:
            if not fut.done():
                fut.set_exception(ReplicaDown())

    def _grant(self) -> None:
        self.in_flight += 1
        self.stats.granted += 1
        self.stats.peak_in_flight = max(self.stats.peak_in_flight, self.in_flight)

    def _wake(self) -> None:
        heap = self._heap
        while heap and self.in_flight < self.limit:
            fut = heapq.heappop(heap)[3]
            if fut.done():
                continue
            self._grant()
            fut.set_result(None)

    def _set_cap(self, cap: float) -> None:
        s = self.settings
        cap = max(float(s.min_cap), min(float(s.max_cap), cap))
        if cap > self.cap:
            self.stats.increases += 1
        elif cap < self.cap:
            self.stats.decreases += 1
        self.cap = cap
        self._wake()

    # -- adaptation from /metrics --------------------------------------------------------
    def observe(self, m: VLLMMetrics) -> None:
        """One /metrics snapshot (polled off the hot path)."""
        s = self.settings
        self.mode = "metrics"
        self.last_metrics = m
        new_preemptions = False
        if m.preemptions is not None:
            last = self._last_preemptions
            new_preemptions = last is not None and m.preemptions > last
            self._last_preemptions = m.preemptions
        if new_preemptions:
            self.stats.preemption_cuts += 1
            self._set_cap(min(self.cap, s.preemption_backoff * max(1, self.in_flight)))
            return
        quiet = not m.requests_waiting
        room = m.kv_cache_usage is None or m.kv_cache_usage < s.kv_high
        if quiet and room and self.binding:
            self._set_cap(self.cap + s.increase)

    def metrics_unavailable(self) -> None:
        """The server has no usable /metrics: adapt from latency and 429s instead."""
        self.mode = "latency"

    # -- adaptation from answers ---------------------------------------------------------
    def on_overload(self) -> None:
        """A 429/503 answer: multiplicative decrease (any mode), at most once per cooldown."""
        now = self.clock()
        cooldown = max(self.settings.overload_cooldown_s, self.baseline_s or 0.0)
        if now - self._last_cut >= cooldown:
            self._last_cut = now
            self.stats.overload_cuts += 1
            self._set_cap(self.cap * self.settings.overload_decrease)

    def on_latency(self, latency_s: float) -> None:
        """A successful answer's latency; used only in latency mode (no /metrics)."""
        if self.mode != "latency":
            return
        s = self.settings
        w = self._window
        w.append(latency_s)
        self._window_binding = self._window_binding or self.binding
        if len(w) < max(8, int(self.cap) // 2):
            return
        mean = sum(w) / len(w)
        binding = self._window_binding
        w.clear()
        self._window_binding = False
        base = self.baseline_s
        self.baseline_s = mean if base is None else min(base * 1.02, mean)
        if base is not None and mean > s.latency_tolerance * base:
            self._set_cap(self.cap * s.latency_decrease)
        elif binding:
            self._set_cap(self.cap + s.increase)
