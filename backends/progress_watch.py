"""Is a server making progress? vLLM's token counters on `/metrics`, watched on demand.

`ChatClient` asks this when a request's deadline has passed while the request is still in
flight: a slow engine (a CPU engine on a busy machine, a long queue) is not a dead one, so
while the server's prompt or generation token counters keep moving, the request keeps waiting
instead of being timed out and retried as an infrastructure error (docs/client.md, "Slow
engines"). Nothing is probed while requests finish in time: the first deadline that passes
starts the watch.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

# cumulative counters that move while an engine works (vLLM v0 and v1 names)
PROGRESS_COUNTERS = frozenset((
    "vllm:generation_tokens_total",
    "vllm:prompt_tokens_total",
    "vllm:request_success_total",
))
# gauges of the requests an engine holds
BUSY_GAUGES = frozenset(("vllm:num_requests_running", "vllm:num_requests_waiting"))


class ProgressWatch:
    """`await progressing(window)`: True when a token counter moved within the last `window`
    seconds (at most `window_s`) or the server holds requests (running or waiting); False when
    neither for that long (a look that fails is no evidence either way: a busy server is read
    again); None when the server exports no token counters (then a deadline is a deadline). Probes are shared by all callers, at
    most one every `probe_s`."""

    def __init__(self, fetch: Callable[[], Awaitable[str | None]], *, window_s: float = 60.0,
                 probe_s: float = 5.0, clock: Callable[[], float] = time.monotonic) -> None:
        self._fetch = fetch  # the /metrics text; None = no such page; raises when unreachable
        self.window_s = window_s
        self.probe_s = probe_s
        self._clock = clock
        self._lock: asyncio.Lock | None = None
        self._values: tuple[float, ...] | None = None
        self._probed_at = -1e18
        self._since = 0.0  # start of the current uninterrupted watch
        self._changed_at: float | None = None
        self._busy = False  # requests running or waiting at the last probe
        self.supported: bool | None = None
        self.probes = 0

    async def progressing(self, window: float | None = None) -> bool | None:
        if self.supported is False:
            return None
        window = self.window_s if window is None else max(1e-3, min(window, self.window_s))
        step = min(self.probe_s, window / 3)
        await self._refresh(window, step)
        while True:
            if self.supported is False:
                return None
            now = self._clock()
            if self._busy or (self._changed_at is not None and now - self._changed_at <= window):
                return True
            if now - self._since >= window:
                return False  # watched a whole window without a change (or without a reading)
            await asyncio.sleep(step)
            await self._refresh(window, step)

    async def _refresh(self, window: float, step: float) -> None:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            now = self._clock()
            if now - self._probed_at < step:
                return
            try:
                text = await self._fetch()
            except (OSError, TimeoutError):
                # no evidence of progress this time; a busy API server can miss one look, so
                # the watch goes on for its window (the counters read last are kept: a change
                # seen at the next reading still counts)
                self._busy = False
                if now - self._probed_at > window:  # a new watch: a window from now
                    self._values = None
                    self._changed_at = None
                    self._since = now
                self._probed_at = now
                return
            self.probes += 1
            if text is None:
                self.supported = False
                return
            values, busy = _counters(text)
            if not values:
                self.supported = False
                return
            self._busy = busy
            self.supported = True
            stale = now - self._probed_at > window  # too long since the last look
            if self._values is None or stale or len(values) != len(self._values):
                self._since = now
                self._changed_at = None
            elif values != self._values:
                self._changed_at = now
            self._values = values
            self._probed_at = now


def _counters(text: str) -> tuple[tuple[float, ...], bool]:
    """The progress counters of a /metrics page (summed per name, in a fixed order), and
    whether the server holds requests."""
    from .vllm_metrics import parse_prometheus

    samples = parse_prometheus(text, PROGRESS_COUNTERS | BUSY_GAUGES)
    counters = tuple(sum(samples[name]) for name in sorted(samples) if name in PROGRESS_COUNTERS)
    busy = any(sum(samples.get(name, ())) > 0 for name in BUSY_GAUGES)
    return counters, busy
