"""Scheduler: unit order and seeds, concurrency bound, episode-level retries, stops."""

from __future__ import annotations

import asyncio

from backends.errors import ConnectionFailed, HTTPStatusError, RetriesExhausted
from backends.types import ChatMessage
from bench_data.types import Task
from evaluator.config import RetryConfig
from evaluator.records import EpisodeRecord, UnitId
from evaluator.run.progress import Counters
from evaluator.run.results import (
    EPISODES_FILE,
    FAILURES_FILE,
    ResultWriter,
    iter_failures,
    iter_records,
)
from evaluator.run.roles import EpisodeTicket
from evaluator.run.scheduler import Scheduler, derive_seed, make_units, session_id

TASKS = [Task(benchmark="b", subset="s", task_id=f"t{i}") for i in range(5)]
FAST_RETRY = RetryConfig(max_attempts=3, backoff_s=0.001, backoff_cap_s=0.002)


def test_seeds_are_deterministic_and_distinct():
    a = make_units("run-a", TASKS, 3, base_seed=7)
    b = make_units("run-b", TASKS, 3, base_seed=7)
    assert [u.unit.seed for u in a] == [u.unit.seed for u in b]  # same config seed: same seeds
    assert len({u.unit.seed for u in a}) == len(a)
    assert derive_seed(7, "b/s/t0", 0) != derive_seed(8, "b/s/t0", 0)
    assert all(0 <= u.unit.seed < 2**31 for u in a)


def test_units_keep_trials_of_a_task_adjacent_and_skip_finished():
    units = make_units("r", TASKS, 3, 0)
    assert [(u.unit.task, u.unit.trial) for u in units[:4]] == [
        ("b/s/t0", 0), ("b/s/t0", 1), ("b/s/t0", 2), ("b/s/t1", 0)]
    rest = make_units("r", TASKS, 3, 0, skip={"b/s/t0#1", "b/s/t4#2"})
    assert len(rest) == 13 and "b/s/t0#1" not in {u.unit.key for u in rest}
    assert session_id("r", "b/s/t0") == session_id("r", "b/s/t0") != session_id("r", "b/s/t1")


def _record(unit: UnitId, task: Task) -> EpisodeRecord:
    return EpisodeRecord(unit=unit, benchmark=task.benchmark, subset=task.subset,
                         task_id=task.task_id, messages=[ChatMessage(role="user", content="x")])


async def _run(tmp_path, units, fn, **kw):
    writer = ResultWriter(tmp_path / EPISODES_FILE).start()
    failures = ResultWriter(tmp_path / FAILURES_FILE).start()
    counters = Counters()
    sched = Scheduler(units, fn, writer=writer, failures=failures, counters=counters,
                      retry=kw.pop("retry", FAST_RETRY), **kw)
    try:
        outcome = await sched.run()
    finally:
        await writer.close()
        await failures.close()
    return outcome, counters, sched


async def test_concurrency_is_bounded_and_every_unit_recorded_once(tmp_path):
    units = make_units("r", TASKS, 4, 0)
    live = peak = 0
    tickets: list[EpisodeTicket] = []

    async def fn(unit, task, ticket):
        nonlocal live, peak
        tickets.append(ticket)
        live += 1
        peak = max(peak, live)
        await asyncio.sleep(0.002)
        live -= 1
        return _record(unit, task)

    outcome, counters, _ = await _run(tmp_path, units, fn, concurrency=3)
    assert peak == 3
    assert outcome.finished == 20 and counters.episodes_done == 20
    keys = [r.unit.key for r in iter_records(tmp_path)]
    assert sorted(keys) == sorted(u.unit.key for u in units)
    assert [t.order for t in tickets] == list(range(20))  # started in unit order
    assert tickets[0].session_id == tickets[3].session_id != tickets[4].session_id


async def test_infra_errors_retry_the_episode_and_are_never_recorded_as_agent_failures(tmp_path):
    units = make_units("r", TASKS[:3], 1, 0)
    attempts: dict[str, int] = {}

    async def fn(unit, task, ticket):
        n = attempts[unit.key] = attempts.get(unit.key, 0) + 1
        if task.task_id == "t0" and n < 3:
            raise ConnectionFailed("connection reset")
        if task.task_id == "t1":
            raise RetriesExhausted("http://x/v1/chat/completions", 7, "HTTP 503")
        return _record(unit, task)

    outcome, counters, _ = await _run(tmp_path, units, fn, concurrency=8)
    recs = {r.unit.key: r for r in iter_records(tmp_path)}
    assert set(recs) == {"b/s/t0#0", "b/s/t2#0"}
    assert recs["b/s/t0#0"].infra_retries == 2 and attempts["b/s/t0#0"] == 3
    assert attempts["b/s/t1#0"] == FAST_RETRY.max_attempts
    fails = list(iter_failures(tmp_path))
    assert [(f.unit.key, f.kind, f.attempts) for f in fails] == [("b/s/t1#0", "infrastructure", 3)]
    assert "503" in fails[0].error
    assert outcome.failed == 1 and counters.infra_failures == 1 and counters.infra_retries == 5


async def test_other_errors_are_failures_without_retry(tmp_path):
    units = make_units("r", TASKS[:1], 1, 0)
    calls = 0

    async def fn(unit, task, ticket):
        nonlocal calls
        calls += 1
        raise HTTPStatusError("http://x", 400, "bad request")

    outcome, counters, _ = await _run(tmp_path, units, fn, concurrency=1)
    assert calls == 1 and outcome.failed == 1 and counters.errors == 1
    assert [f.kind for f in iter_failures(tmp_path)] == ["error"]
    assert list(iter_records(tmp_path)) == []


async def test_stop_drains_running_episodes_and_starts_no_new_ones(tmp_path):
    units = make_units("r", TASKS, 2, 0)  # 10 units
    gate = asyncio.Event()
    started: list[str] = []

    async def fn(unit, task, ticket):
        started.append(unit.key)
        await gate.wait()
        return _record(unit, task)

    async def stopper(sched):
        while len(started) < 3:
            await asyncio.sleep(0.001)
        sched.request_stop()
        await asyncio.sleep(0.01)
        gate.set()  # the running ones finish within the grace period

    writer = ResultWriter(tmp_path / EPISODES_FILE).start()
    failures = ResultWriter(tmp_path / FAILURES_FILE).start()
    sched = Scheduler(units, fn, writer=writer, failures=failures, counters=Counters(),
                      concurrency=3, shutdown_grace_s=5.0)
    stop_task = asyncio.create_task(stopper(sched))
    outcome = await sched.run()
    await stop_task
    await writer.close()
    await failures.close()
    assert outcome.interrupted and outcome.finished == 3 and outcome.cancelled == 0
    assert outcome.not_started == 7
    assert len(list(iter_records(tmp_path))) == 3


async def test_second_stop_cancels_running_episodes_unrecorded(tmp_path):
    units = make_units("r", TASKS, 1, 0)

    async def fn(unit, task, ticket):
        await asyncio.sleep(3600)

    writer = ResultWriter(tmp_path / EPISODES_FILE).start()
    failures = ResultWriter(tmp_path / FAILURES_FILE).start()
    sched = Scheduler(units, fn, writer=writer, failures=failures, counters=Counters(),
                      concurrency=2, shutdown_grace_s=3600)

    async def stopper():
        await asyncio.sleep(0.01)
        sched.request_stop()
        await asyncio.sleep(0.01)
        sched.request_stop()

    stop_task = asyncio.create_task(stopper())
    outcome = await asyncio.wait_for(sched.run(), 10)
    await stop_task
    await writer.close()
    await failures.close()
    assert outcome.interrupted and outcome.cancelled == 2 and outcome.finished == 0
    assert list(iter_records(tmp_path)) == [] and list(iter_failures(tmp_path)) == []
