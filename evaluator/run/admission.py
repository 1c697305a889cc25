"""Admission control of model requests, one controller per endpoint.

A request waits for a slot under the endpoint's in-flight cap. Waiters are served depth-first:
requests of episodes that already made a call come before first requests of new episodes, and
within a class older episodes come first. This finishes started episodes early (bounded memory,
their prefixes stay in the KV cache) while the cap keeps the server saturated.

The cap adapts (AIMD) to the server's own view of load, scraped from vLLM's `/metrics` by a
separate task (`poll`): grow additively while the cap is binding and the server has little
queue and KV room; shrink multiplicatively when requests pile up in the server's queue, KV
usage nears full, or new preemptions appear. Without metrics the cap stays where it is.
"""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from evaluator.config import AdmissionConfig

CONTINUING = 0  # a request of an episode that already made a model call
NEW = 1  # the first request of an episode


class LoadSample(msgspec.Struct, frozen=True):
    """The server load the cap adapts to (from backends.vllm_metrics.VLLMMetrics)."""

    running: float | None = None
    waiting: float | None = None
    kv_usage: float | None = None
    preemptions: float | None = None


class AdmissionStats(msgspec.Struct):
    granted: int = 0
    queued: int = 0  # grants that had to wait
    increases: int = 0
    decreases: int = 0
    polls: int = 0
    poll_errors: int = 0
    peak_in_flight: int = 0


class AdmissionController:
    """In-flight cap with a priority queue of waiters. Not thread-safe (one event loop)."""

    __slots__ = (
        "_heap",
        "_last_preemptions",
        "_seq",
        "cap",
        "in_flight",
        "last_sample",
        "name",
        "settings",
        "stats",
    )

    def __init__(self, name: str, settings: AdmissionConfig, cap: int | None = None) -> None:
        self.name = name
        self.settings = settings
        self.cap = cap if cap is not None else settings.initial_cap
        self.in_flight = 0
        self.stats = AdmissionStats()
        self._heap: list[tuple[int, int, int, asyncio.Future[None]]] = []
        self._seq = 0
        self._last_preemptions: float | None = None
        self.last_sample: LoadSample | None = None

    @property
    def waiting(self) -> int:
        return len(self._heap)

    async def acquire(self, klass: int, episode_order: int) -> None:
        """Wait for a slot. `klass`: CONTINUING or NEW; `episode_order`: lower = older."""
        if self.in_flight < self.cap and not self._heap:
            self._grant()
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._seq += 1
        heapq.heappush(self._heap, (klass, episode_order, self._seq, fut))
        self.stats.queued += 1
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self.release()  # granted just as we were cancelled: hand the slot on
            raise

    def release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def _grant(self) -> None:
        self.in_flight += 1
        self.stats.granted += 1
        self.stats.peak_in_flight = max(self.stats.peak_in_flight, self.in_flight)

    def _wake(self) -> None:
        heap = self._heap
        while heap and self.in_flight < self.cap:
            fut = heapq.heappop(heap)[3]
            if fut.done():  # cancelled waiter
                continue
            self._grant()
            fut.set_result(None)

    # -- adaptation -----------------------------------------------------------------------
    def observe(self, sample: LoadSample) -> None:
        """Adapt the cap to one load sample (AIMD)."""
        s = self.settings
        self.last_sample = sample
        if not s.adaptive:
            return
        new_preemptions = False
        if sample.preemptions is not None:
            last = self._last_preemptions
            new_preemptions = last is not None and sample.preemptions > last
            self._last_preemptions = sample.preemptions
        running = sample.running or 0.0
        waiting = sample.waiting
        target = max(1.0, s.waiting_per_running * running)
        overloaded = new_preemptions or (
            sample.kv_usage is not None and sample.kv_usage > s.kv_high
        ) or (waiting is not None and waiting > 2 * target)
        if overloaded:
            cap = max(s.min_cap, int(self.cap * s.decrease))
            if cap < self.cap:
                self.cap = cap
                self.stats.decreases += 1
            return
        binding = self.in_flight >= self.cap or bool(self._heap)
        room = waiting is not None and waiting <= target and (
            sample.kv_usage is None or sample.kv_usage < s.kv_high * 0.9
        )
        if binding and room and self.cap < s.max_cap:
            self.cap = min(s.max_cap, self.cap + s.increase)
            self.stats.increases += 1
            self._wake()

    async def poll(self, scrape: Callable[[], Awaitable[Any]]) -> None:
        """Run forever: scrape the server's metrics and adapt. Cancel to stop."""
        interval = self.settings.poll_interval_s
        while True:
            try:
                m = await scrape()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - no metrics now: keep the cap, try again later
                self.stats.poll_errors += 1
            else:
                self.stats.polls += 1
                self.observe(to_load_sample(m))
            await asyncio.sleep(interval)


def to_load_sample(m: Any) -> LoadSample:
    """A LoadSample from a backends.vllm_metrics.VLLMMetrics (or a LoadSample)."""
    if isinstance(m, LoadSample):
        return m
    return LoadSample(
        running=m.requests_running,
        waiting=m.requests_waiting,
        kv_usage=m.kv_cache_usage,
        preemptions=m.preemptions,
    )
