"""Scrape and parse vLLM's Prometheus `/metrics` (served at the server root, not under /v1).

`scrape_vllm_metrics(client)` returns a `VLLMMetrics` snapshot for adaptive admission.
Metric names differ across vLLM versions; each field takes the first name that exists and
stays None when none does. Series of one name (several engines / models) are summed, except
KV-cache usage, which takes the maximum (the fullest engine limits admission).
"""

from __future__ import annotations

import time
from typing import Protocol

import msgspec


class TextGetter(Protocol):
    """What a scrape needs of a client (`ChatClient` is one; the client's progress watch
    parses pages with this module, so it is named here, not imported)."""

    async def get_text(self, path: str, *, timeout_s: float | None = ...) -> str: ...


RUNNING = ("vllm:num_requests_running",)
WAITING = ("vllm:num_requests_waiting",)
KV_CACHE_USAGE = ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc")
PREFIX_QUERIES = ("vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total")
PREFIX_HITS = ("vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total")
PREEMPTIONS = ("vllm:num_preemptions_total", "vllm:num_preemptions")
_WANTED = frozenset(RUNNING + WAITING + KV_CACHE_USAGE + PREFIX_QUERIES + PREFIX_HITS + PREEMPTIONS)


class VLLMMetrics(msgspec.Struct, frozen=True):
    """One snapshot. Counters (`*_total`) are cumulative since server start."""

    requests_running: float | None = None
    requests_waiting: float | None = None
    kv_cache_usage: float | None = None  # fraction 0..1
    prefix_cache_queries: float | None = None  # tokens queried
    prefix_cache_hits: float | None = None  # tokens hit
    preemptions: float | None = None
    scraped_at: float = 0.0  # time.monotonic()

    @property
    def prefix_cache_hit_rate(self) -> float | None:
        """Cumulative hit rate since server start."""
        q, h = self.prefix_cache_queries, self.prefix_cache_hits
        if q is None or h is None or q <= 0:
            return None
        return h / q

    def hit_rate_since(self, earlier: VLLMMetrics) -> float | None:
        """Prefix-cache hit rate over the interval between `earlier` and this snapshot."""
        if None in (
            self.prefix_cache_queries,
            self.prefix_cache_hits,
            earlier.prefix_cache_queries,
            earlier.prefix_cache_hits,
        ):
            return None
        dq = self.prefix_cache_queries - earlier.prefix_cache_queries  # type: ignore[operator]
        dh = self.prefix_cache_hits - earlier.prefix_cache_hits  # type: ignore[operator]
        if dq <= 0:
            return None
        return dh / dq


def parse_prometheus(text: str, wanted: frozenset[str] = _WANTED) -> dict[str, list[float]]:
    """Values per metric name for the names in `wanted` (all samples, any labels)."""
    out: dict[str, list[float]] = {}
    for line in text.splitlines():
        if not line or line[0] == "#":
            continue
        brace = line.find("{")
        if brace >= 0:
            name = line[:brace]
            close = line.rfind("}")
            if close < brace:
                continue
            rest = line[close + 1 :]
        else:
            name, _, rest = line.partition(" ")
        name = name.strip()
        if name not in wanted:
            continue
        parts = rest.split()
        if not parts:
            continue
        try:
            value = float(parts[0])
        except ValueError:
            continue
        out.setdefault(name, []).append(value)
    return out


def _first(samples: dict[str, list[float]], names: tuple[str, ...], agg=sum) -> float | None:
    for name in names:
        values = samples.get(name)
        if values:
            return float(agg(values))
    return None


def parse_vllm_metrics(text: str) -> VLLMMetrics:
    """Parse a /metrics page into a snapshot; missing metrics stay None."""
    s = parse_prometheus(text)
    return VLLMMetrics(
        requests_running=_first(s, RUNNING),
        requests_waiting=_first(s, WAITING),
        kv_cache_usage=_first(s, KV_CACHE_USAGE, max),
        prefix_cache_queries=_first(s, PREFIX_QUERIES),
        prefix_cache_hits=_first(s, PREFIX_HITS),
        preemptions=_first(s, PREEMPTIONS),
        scraped_at=time.monotonic(),
    )


async def scrape_vllm_metrics(client: TextGetter, *, timeout_s: float = 10.0) -> VLLMMetrics:
    """GET <server root>/metrics through `client` and parse it."""
    return parse_vllm_metrics(await client.get_text("/metrics", timeout_s=timeout_s))
