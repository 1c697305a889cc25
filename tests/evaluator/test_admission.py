"""Admission control: depth-first priority ordering and the adaptive cap."""

from __future__ import annotations

import asyncio

from evaluator.config import AdmissionConfig
from evaluator.run.admission import CONTINUING, NEW, AdmissionController, LoadSample


def _ctl(cap: int = 1, **kw) -> AdmissionController:
    settings = AdmissionConfig(initial_cap=cap, min_cap=1, max_cap=64, increase=4, **kw)
    return AdmissionController("test", settings)


async def test_continuing_episodes_go_before_new_ones_and_older_first():
    ctl = _ctl(cap=1)
    await ctl.acquire(NEW, 0)  # occupies the only slot
    order: list[str] = []

    async def want(name: str, klass: int, episode: int) -> None:
        await ctl.acquire(klass, episode)
        order.append(name)
        ctl.release()

    tasks = [
        asyncio.create_task(want("new-5", NEW, 5)),
        asyncio.create_task(want("cont-9", CONTINUING, 9)),
        asyncio.create_task(want("new-1", NEW, 1)),
        asyncio.create_task(want("cont-2", CONTINUING, 2)),
    ]
    await asyncio.sleep(0)
    assert ctl.waiting == 4 and order == []
    ctl.release()
    await asyncio.gather(*tasks)
    assert order == ["cont-2", "cont-9", "new-1", "new-5"]
    assert ctl.in_flight == 0


async def test_cap_bounds_in_flight():
    ctl = _ctl(cap=3)
    live = 0
    peak = 0

    async def call() -> None:
        nonlocal live, peak
        await ctl.acquire(NEW, 0)
        live += 1
        peak = max(peak, live)
        await asyncio.sleep(0.001)
        live -= 1
        ctl.release()

    await asyncio.gather(*(call() for _ in range(20)))
    assert peak == 3
    assert ctl.stats.peak_in_flight == 3 and ctl.stats.granted == 20


async def test_cancelled_waiter_does_not_leak_a_slot():
    ctl = _ctl(cap=1)
    await ctl.acquire(NEW, 0)
    waiter = asyncio.create_task(ctl.acquire(NEW, 1))
    await asyncio.sleep(0)
    waiter.cancel()
    await asyncio.gather(waiter, return_exceptions=True)
    ctl.release()
    assert ctl.in_flight == 0
    await asyncio.wait_for(ctl.acquire(NEW, 2), 30.0)
    assert ctl.in_flight == 1


def test_cap_shrinks_on_queue_kv_pressure_and_preemptions():
    ctl = _ctl(cap=40)
    ctl.observe(LoadSample(running=20, waiting=30, kv_usage=0.5, preemptions=0))
    assert ctl.cap == 28  # 40 * 0.7
    ctl.observe(LoadSample(running=20, waiting=0, kv_usage=0.99, preemptions=0))
    assert ctl.cap == 19
    ctl.observe(LoadSample(running=20, waiting=0, kv_usage=0.5, preemptions=3))  # new ones
    assert ctl.cap == 13
    for _ in range(20):
        ctl.observe(LoadSample(running=1, waiting=100, kv_usage=0.5, preemptions=3))
    assert ctl.cap == 1  # never below min_cap


async def test_cap_grows_only_while_binding_and_server_has_room():
    ctl = _ctl(cap=2)
    idle = LoadSample(running=2, waiting=0, kv_usage=0.2, preemptions=0)
    ctl.observe(idle)
    assert ctl.cap == 2  # not binding: nothing in flight
    await ctl.acquire(NEW, 0)
    await ctl.acquire(NEW, 1)
    waiter = asyncio.create_task(ctl.acquire(NEW, 2))
    await asyncio.sleep(0)
    ctl.observe(idle)
    assert ctl.cap == 6
    await asyncio.wait_for(waiter, 30.0)  # the raise admitted the waiter
    assert ctl.in_flight == 3


def test_without_adaptation_the_cap_stays():
    ctl = _ctl(cap=8, adaptive=False)
    ctl.observe(LoadSample(running=1, waiting=1000, kv_usage=1.0))
    assert ctl.cap == 8


async def test_poll_feeds_metrics_and_survives_scrape_errors():
    ctl = _ctl(cap=40, poll_interval_s=0.001)
    calls = 0

    async def scrape() -> LoadSample:
        nonlocal calls
        calls += 1
        if calls % 2:
            raise OSError("metrics down")
        return LoadSample(running=10, waiting=50, kv_usage=0.3)

    task = asyncio.create_task(ctl.poll(scrape))
    while calls < 6:
        await asyncio.sleep(0.001)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert ctl.stats.poll_errors >= 3 and ctl.stats.polls >= 2
    assert ctl.cap < 40
