"""Parsing vLLM's Prometheus /metrics into a snapshot."""

from __future__ import annotations

import pytest

from backends.client import ChatClient
from backends.types import Endpoint
from backends.vllm_metrics import VLLMMetrics, parse_vllm_metrics, scrape_vllm_metrics
from perf.stub_server import start_stub

V1 = """\
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="M"} 3.0
vllm:num_requests_running{engine="1",model_name="M"} 4.0
vllm:num_requests_waiting{engine="0",model_name="M"} 1.0
vllm:num_requests_waiting_by_reason{engine="0",model_name="M",reason="capacity"} 9.0
vllm:kv_cache_usage_perc{engine="0",model_name="M"} 0.2
vllm:kv_cache_usage_perc{engine="1",model_name="M"} 0.6
vllm:prefix_cache_queries_total{engine="0",model_name="M"} 200.0
vllm:prefix_cache_queries_created{engine="0",model_name="M"} 1.7e+09
vllm:prefix_cache_hits_total{engine="0",model_name="M"} 50.0
vllm:num_preemptions_total{engine="0",model_name="M"} 2.0
"""

V0 = """\
vllm:gpu_cache_usage_perc{model_name="a b"} 0.75 1700000000000
vllm:num_requests_running{model_name="a b"} 1
"""


def test_parse_v1_names_sums_engines_and_takes_max_kv() -> None:
    m = parse_vllm_metrics(V1)
    assert (m.requests_running, m.requests_waiting) == (7.0, 1.0)
    assert m.kv_cache_usage == 0.6
    assert (m.prefix_cache_queries, m.prefix_cache_hits, m.preemptions) == (200.0, 50.0, 2.0)
    assert m.prefix_cache_hit_rate == 0.25


def test_parse_old_names_and_missing_metrics() -> None:
    m = parse_vllm_metrics(V0)
    assert m.kv_cache_usage == 0.75 and m.requests_running == 1.0
    assert m.requests_waiting is None and m.prefix_cache_hit_rate is None and m.preemptions is None


def test_garbage_is_tolerated() -> None:
    m = parse_vllm_metrics(
        "not prometheus\nvllm:num_requests_running{oops 1\nvllm:num_requests_waiting x\n"
    )
    assert m == VLLMMetrics(scraped_at=m.scraped_at)


def test_hit_rate_since() -> None:
    a = VLLMMetrics(prefix_cache_queries=100, prefix_cache_hits=10)
    b = VLLMMetrics(prefix_cache_queries=300, prefix_cache_hits=160)
    assert b.hit_rate_since(a) == 0.75
    assert a.hit_rate_since(a) is None


async def test_scrape_from_stub_root() -> None:
    with start_stub() as stub:
        async with ChatClient(Endpoint(base_url=stub.url)) as c:
            m = await scrape_vllm_metrics(c)
    assert (
        m.requests_running == 5.0 and m.kv_cache_usage == 0.25 and m.prefix_cache_hit_rate == 0.75
    )


@pytest.mark.integration
async def test_scrape_real_engine(engine) -> None:
    async with ChatClient(engine.endpoint()) as c:
        m = await scrape_vllm_metrics(c)
    assert m.requests_running is not None and m.requests_waiting is not None
    assert m.kv_cache_usage is not None and 0.0 <= m.kv_cache_usage <= 1.0
    assert m.prefix_cache_queries is not None and m.prefix_cache_hits is not None
    assert m.preemptions is not None
