"""A slow engine is not a failure: a model call past its deadline keeps waiting while the
server's token counters move or it holds requests (the stub's `--progress-tokens-per-s`), and
is timed out when neither, when the server has no counters, or at `max_wait_factor` times its
timeout."""

from __future__ import annotations

import asyncio
import time

import pytest

from backends.client import ChatClient
from backends.errors import RequestTimeout
from backends.progress_watch import ProgressWatch
from backends.types import ChatMessage, Endpoint
from perf.stub_server import start_stub

MSGS = [ChatMessage(role="user", content="hi")]


def client_for(url: str, **kw) -> ChatClient:
    return ChatClient(Endpoint(base_url=url, model="m", max_retries=3), backoff_base_s=0.001,
                      **kw)


async def test_a_slow_progressing_engine_is_waited_for() -> None:
    """3 s answers against a 1 s timeout: answered on the first attempt, nothing retried."""
    with start_stub("--progress-tokens-per-s", "40") as stub:
        async with client_for(stub.url) as c:
            rs = await asyncio.gather(*(c.chat(MSGS, extra_headers={"X-Stub-Sleep": "3"},
                                               timeout_s=1.0) for _ in range(4)))
        assert all(r.message.content == "stub answer" and r.attempts == 1 for r in rs)
        s = c.stats
        assert s.timeouts == 0 and s.retries == 0 and s.failed == 0 and s.succeeded == 4
        assert s.deadline_extensions >= 4
        assert 1 <= c.progress.probes <= 12  # shared by the four requests, not one each


async def test_a_stalled_engine_still_times_out() -> None:
    with start_stub("--progress-tokens-per-s", "0") as stub:
        async with client_for(stub.url) as c:
            t0 = time.monotonic()
            with pytest.raises(RequestTimeout):
                await c.chat(MSGS, extra_headers={"X-Stub-Sleep": "5"}, timeout_s=0.6)
            waited = time.monotonic() - t0
        # the deadline, then one window (as long as the timeout) watching the counter
        assert 1.1 <= waited < 4.0
        assert c.stats.timeouts == 1 and c.stats.attempts == 1 and c.stats.in_flight == 0


async def test_progress_is_followed_up_to_max_wait_factor() -> None:
    with start_stub("--progress-tokens-per-s", "40") as stub:
        async with client_for(stub.url, max_wait_factor=3.0) as c:
            t0 = time.monotonic()
            with pytest.raises(RequestTimeout):
                await c.chat(MSGS, extra_headers={"X-Stub-Sleep": "10"}, timeout_s=0.5)
            waited = time.monotonic() - t0
        assert 1.4 <= waited < 4.0 and c.stats.deadline_extensions >= 1


async def test_requests_other_than_model_calls_keep_a_fixed_deadline() -> None:
    """Health probes, /metrics, embeddings (`post`): a deadline is a deadline."""
    with start_stub("--progress-tokens-per-s", "40") as stub:
        ep = Endpoint(base_url=stub.url, model="m", max_retries=0,
                      extra_headers={"X-Stub-Sleep": "3"})
        async with ChatClient(ep) as c:
            t0 = time.monotonic()
            with pytest.raises(RequestTimeout):
                await c.post(c.chat_url, b'{"model": "m", "messages": []}', timeout_s=0.3)
            assert time.monotonic() - t0 < 1.5
        assert c.stats.deadline_extensions == 0 and c.progress.probes == 0


async def test_watch_rules() -> None:
    """None without counters; True once a counter moves within the window; False after a
    window without movement; an unreadable server is no evidence of progress, and one missed
    look does not end the watch."""
    pages = iter(["# nothing here\nvllm:num_requests_running 1\n"])
    w = ProgressWatch(lambda: _next(pages), probe_s=0.01)
    assert await w.progressing(0.05) is None

    counter = [0.0]

    async def moving() -> str:
        counter[0] += 1
        return f'vllm:generation_tokens_total{{model_name="m"}} {counter[0]}\n'

    w = ProgressWatch(moving, probe_s=0.01)
    assert await w.progressing(0.1) is True

    async def still() -> str:
        return 'vllm:prompt_tokens_total{model_name="m"} 7\nvllm:num_requests_running 0\n'

    w = ProgressWatch(still, probe_s=0.01)
    t0 = time.monotonic()
    assert await w.progressing(0.1) is False
    assert time.monotonic() - t0 >= 0.1

    async def one_long_step() -> str:  # counters move only when a step ends
        return ('vllm:prompt_tokens_total{model_name="m"} 7\n'
                'vllm:num_requests_running{model_name="m"} 1\n')

    assert await ProgressWatch(one_long_step, probe_s=0.01).progressing(0.1) is True

    async def down() -> str:
        raise ConnectionRefusedError("down")

    t0 = time.monotonic()
    assert await ProgressWatch(down, probe_s=0.01).progressing(0.1) is False
    assert time.monotonic() - t0 >= 0.1  # looked again for the whole window

    looks = [0]

    async def misses_one_look() -> str:  # an API server too busy to answer once
        looks[0] += 1
        if looks[0] == 1:
            raise TimeoutError
        return await one_long_step()

    assert await ProgressWatch(misses_one_look, probe_s=0.01).progressing(0.1) is True
    assert looks[0] >= 2


async def _next(pages) -> str | None:
    return next(pages, None)
