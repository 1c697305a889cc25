"""The router's pure placement policy and per-replica admission, driven synchronously."""

from __future__ import annotations

import asyncio

import pytest

from backends.router_admission import (
    CONTINUING,
    NEW,
    AdmissionSettings,
    ReplicaAdmission,
    kv_capacity_tokens,
)
from backends.router_policy import PlacementPolicy
from backends.vllm_metrics import VLLMMetrics


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def policy(n: int = 2, name: str = "sticky_least_loaded", **kw) -> PlacementPolicy:
    kw.setdefault("tokens_per_unit", 1000)
    return PlacementPolicy(n, name, **kw)


def load_up(p: PlacementPolicy, r: int, units: int) -> None:
    """Put `units` load units of anonymous queued work on replica r."""
    p.requests[r] += 1
    p.tokens[r] += int(units * p.tokens_per_unit)


# -- placement -------------------------------------------------------------------------------
def test_new_episode_goes_to_least_loaded() -> None:
    p = policy(3)
    load_up(p, 0, 5)
    load_up(p, 2, 2)
    assert p.place("a", 100) == 1
    assert p.load(1) == 1.1  # a's active session and its queued request now count on 1
    assert p.place("b", 100) == 1  # still the least loaded (0 has 5, 2 has 2)
    assert p.place("c", 100) == 2  # 1 now has 2.2
    assert p.stats.new_sessions == 3


def test_sticky_within_bound_and_trials_co_located() -> None:
    p = policy(2)
    r = p.place("task", 500)
    other = 1 - r
    for trial in range(4):  # all trials of the task: new episodes of the same session
        assert p.place("task", 500, new_episode=True) == r, trial
    for _ in range(3):  # and their later turns
        assert p.place("task", 800, new_episode=False) == r
    assert p.stats.sticky == 7 and p.stats.spills == 0
    assert p.load(r) > p.load(other)  # imbalanced, but within abs 4 units


def test_spill_needs_absolute_and_relative_imbalance() -> None:
    p = policy(2, abs_threshold=4.0, rel_threshold=1.5)
    r = p.place("s", 0)
    other = 1 - r
    load_up(p, other, 10)
    load_up(p, r, 13)  # r: 14 (13 + its session), other: 10: diff 4, not > 4
    assert p.place("s", 0) == r
    load_up(p, r, 2)  # r: 16 vs 10: diff 6 > 4 but ratio 1.6 > 1.5 -> spill
    assert p.place("s", 0) == other
    assert p.stats.spills == 1 and p.pinned("s") == other
    # relative test alone blocks: 30 vs 21 is diff 9 but ratio 1.43
    q = policy(2, abs_threshold=4.0, rel_threshold=1.5)
    r = q.place("s", 0)
    load_up(q, 1 - r, 21)
    load_up(q, r, 29)
    assert q.place("s", 0) == r


def test_continuing_episodes_move_only_under_larger_imbalance() -> None:
    p = policy(2, abs_threshold=2.0, rel_threshold=1.5, continuing_slack=2.0)
    r = p.place("s", 0)
    load_up(p, r, 5)
    load_up(p, 1 - r, 2)  # r: 6 (5 + its session) vs 2
    # continuing: bound abs 4, rel 3: a difference of 4 is not over it
    assert p.place("s", 0, new_episode=False) == r
    # a new trial of the task: bound abs 2, rel 1.5: spills
    assert p.place("s", 0, new_episode=True) == 1 - r
    assert p.stats.spills == 1


def test_unhealthy_or_excluded_pin_moves_to_least_loaded() -> None:
    p = policy(3)
    r = p.place("s", 10)
    p.finished(r, "s", 10)
    p.set_healthy(r, False)
    r2 = p.place("s", 10, new_episode=False)
    assert r2 != r and p.pinned("s") == r2 and p.stats.repins == 1
    r3 = p.place("s", 10, new_episode=False, exclude={r2})
    assert r3 not in (r, r2)
    p.set_healthy(0, False)
    p.set_healthy(1, False)
    p.set_healthy(2, False)
    assert p.place("s", 10) is None


def test_active_sessions_expire_when_idle() -> None:
    clock = Clock()
    p = policy(2, session_idle_s=10.0, clock=clock)
    r = p.place("s", 100)
    p.finished(r, "s", 100)
    assert p.active[r] == 1 and p.load(r) == 1.0
    clock.t = 5.0
    p.place("t", 0)
    assert p.active[r] == 1
    clock.t = 11.0
    p.place("u", 0)  # placement runs the expiry
    assert sum(p.active) == 2  # s expired; t and u are active
    assert p.pinned("s") == r  # the pin stays for later trials
    p.finished(p.pinned("t"), "t", 0)
    p.end_session("t")
    assert sum(p.active) == 1


def test_hash_ignores_load_and_round_robin_alternates() -> None:
    h = policy(2, "hash")
    r = h.place("s", 0)
    load_up(h, r, 100)
    assert all(h.place("s", 0) == r for _ in range(5))
    rr = policy(2, "round_robin")
    got = [rr.place("s", 0) for _ in range(4)]
    assert got in ([0, 1, 0, 1], [1, 0, 1, 0])


def test_unknown_policy_rejected() -> None:
    with pytest.raises(ValueError, match="unknown placement policy"):
        PlacementPolicy(2, "random")


# -- admission -------------------------------------------------------------------------------
def metrics(waiting: float = 0.0, kv: float = 0.5, preemptions: float = 0.0) -> VLLMMetrics:
    return VLLMMetrics(requests_running=4.0, requests_waiting=waiting, kv_cache_usage=kv,
                       preemptions=preemptions)


async def fill(a: ReplicaAdmission, n: int) -> None:
    for _ in range(n):
        await a.acquire(CONTINUING, 0)


def test_kv_bound_from_settings_and_metrics_page() -> None:
    s = AdmissionSettings(kappa=2.0, tokens_per_episode=16384)
    assert s.kv_bound(65536) == 8
    assert s.kv_bound(10) == s.min_cap
    page = ('vllm:cache_config_info{block_size="16",engine="0",num_gpu_blocks="4096"} 1.0\n'
            'vllm:num_requests_running{engine="0"} 1.0\n')
    assert kv_capacity_tokens(page) == 65536
    assert kv_capacity_tokens("vllm:num_requests_running 1.0\n") is None


async def test_cap_grows_only_when_binding_quiet_and_kv_low() -> None:
    a = ReplicaAdmission(AdmissionSettings(initial_cap=4, increase=2))
    a.observe(metrics())
    assert a.limit == 4  # not binding: no growth
    await fill(a, 4)
    a.observe(metrics(waiting=3.0))
    a.observe(metrics(kv=0.95))
    assert a.limit == 4  # the server queues, or KV is near full
    a.observe(metrics())
    assert a.limit == 6 and a.mode == "metrics"


async def test_preemption_cuts_to_three_quarters_of_in_flight() -> None:
    a = ReplicaAdmission(AdmissionSettings(initial_cap=16))
    await fill(a, 8)
    a.observe(metrics(preemptions=3.0))  # first sample: the baseline, no cut
    assert a.limit == 16
    a.observe(metrics(preemptions=5.0))
    assert a.limit == 6 and a.stats.preemption_cuts == 1  # 0.75 x 8 in flight


async def test_waiters_depth_first_then_older_first() -> None:
    a = ReplicaAdmission(AdmissionSettings(initial_cap=1, min_cap=1))
    await a.acquire(NEW, 0)
    served: list[str] = []

    async def want(name: str, klass: int, order: int) -> None:
        await a.acquire(klass, order)
        served.append(name)
        a.release()

    tasks = [asyncio.create_task(want("new0", NEW, 0)),
             asyncio.create_task(want("cont5", CONTINUING, 5)),
             asyncio.create_task(want("cont2", CONTINUING, 2))]
    await asyncio.sleep(0)
    assert a.waiting == 3
    a.release()
    await asyncio.gather(*tasks)
    assert served == ["cont2", "cont5", "new0"]


async def test_no_metrics_aimd_from_latency_and_429() -> None:
    clock = Clock()
    a = ReplicaAdmission(AdmissionSettings(initial_cap=8, increase=2), clock=clock)
    a.on_latency(1.0)
    assert a.limit == 8  # latency is ignored until the router finds there are no metrics
    a.metrics_unavailable()
    await fill(a, 8)  # binding
    for _ in range(8):
        a.on_latency(0.1)
    assert a.limit == 10  # a window within tolerance of the baseline: additive increase
    for _ in range(8):
        a.on_latency(0.1)
    assert a.limit == 10  # 8 in flight under a cap of 10: not binding, no growth
    await fill(a, 2)
    for _ in range(8):
        a.on_latency(0.1)
    assert a.limit == 12
    for _ in range(8):
        a.on_latency(0.5)  # 5x the baseline: multiplicative decrease
    assert a.limit == 10  # int(12 * 0.9)
    clock.t = 100.0
    a.on_overload()
    assert a.limit == 8  # 0.75x on a 429
    a.on_overload()  # within the cooldown: no second cut
    assert a.limit == 8 and a.stats.overload_cuts == 1
