"""The episode scheduler: work units in, records out, bounded concurrency, clean stops.

Units `(run, task, trial, seed)` are ordered by task with all trials of a task adjacent, so
the trials of a task start together and (sharing one session id) hit the same prefix cache.
Each episode is a coroutine; at most `concurrency` are in flight. A unit whose episode raises
`InfrastructureError`, or runs out of file descriptors (EMFILE), is run again (bounded,
exponential backoff with jitter; the run's journal replays what the failed attempt received);
when
retries are exhausted it goes to failures.jsonl, never into the episodes as an agent failure.

Stopping: `request_stop()` (Ctrl-C) stops starting episodes and lets the running ones finish
within `shutdown_grace_s`; after that (or on a second request) they are cancelled. Cancelled
episodes are not recorded, so `--resume` runs them again.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import time
from collections.abc import Awaitable, Callable, Sequence

import msgspec

from backends.errors import InfrastructureError
from backends.fdlimit import is_fd_exhaustion
from bench_data.types import Task
from evaluator.config import RetryConfig
from evaluator.records import EpisodeRecord, UnitId
from evaluator.run.progress import Counters
from evaluator.run.results import FailureRecord, ResultWriter
from evaluator.run.roles import EpisodeTicket

EpisodeFn = Callable[[UnitId, Task, EpisodeTicket], Awaitable[EpisodeRecord]]


class WorkUnit(msgspec.Struct, frozen=True):
    unit: UnitId
    task: Task


class RunOutcome(msgspec.Struct):
    finished: int = 0  # episodes recorded by this scheduler
    failed: int = 0  # units sent to failures.jsonl
    cancelled: int = 0  # episodes cancelled by a stop (not recorded)
    not_started: int = 0  # units never started because of a stop
    interrupted: bool = False


def derive_seed(base_seed: int, task_key: str, trial: int) -> int:
    """The unit seed: a stable 31-bit hash of (run seed, task, trial)."""
    h = hashlib.blake2b(f"{base_seed}\x1f{task_key}\x1f{trial}".encode(), digest_size=8)
    return int.from_bytes(h.digest(), "big") & 0x7FFFFFFF


def session_id(run: str, task_key: str) -> str:
    """One id for all trials and roles of a task: routes them to the same prefix cache."""
    return hashlib.blake2b(f"{run}\x1f{task_key}".encode(), digest_size=8).hexdigest()


def make_units(
    run: str, tasks: Sequence[Task], trials: int, base_seed: int, skip: set[str] | None = None
) -> list[WorkUnit]:
    """Units ordered by task, trials adjacent; keys in `skip` (already finished) left out."""
    units = []
    for task in tasks:
        key = task.key
        for trial in range(trials):
            unit = UnitId(run=run, task=key, trial=trial, seed=derive_seed(base_seed, key, trial))
            if skip and unit.key in skip:
                continue
            units.append(WorkUnit(unit, task))
    return units


class Scheduler:
    """Runs units through `episode_fn` with bounded concurrency and episode-level retries."""

    def __init__(
        self,
        units: Sequence[WorkUnit],
        episode_fn: EpisodeFn,
        *,
        writer: ResultWriter,
        failures: ResultWriter,
        counters: Counters,
        concurrency: int,
        retry: RetryConfig | None = None,
        shutdown_grace_s: float = 30.0,
        on_record: Callable[[EpisodeRecord], None] | None = None,
    ) -> None:
        self.units = units
        self.episode_fn = episode_fn
        self.writer = writer
        self.failures = failures
        self.counters = counters
        self.concurrency = concurrency
        self.retry = retry or RetryConfig()
        self.shutdown_grace_s = shutdown_grace_s
        self.on_record = on_record
        self.outcome = RunOutcome()
        self._stop = asyncio.Event()
        self._force = asyncio.Event()
        self._slots = asyncio.Semaphore(concurrency)
        self._running: set[asyncio.Task[None]] = set()
        self._idle = asyncio.Event()
        self._idle.set()
        self._started = 0

    # -- control --------------------------------------------------------------------------
    def request_stop(self) -> None:
        """First call: stop starting episodes, drain. Second call: cancel running ones now."""
        if self._stop.is_set():
            self._force.set()
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    # -- running --------------------------------------------------------------------------
    async def run(self) -> RunOutcome:
        feeder = asyncio.create_task(self._feed(), name="scheduler-feed")
        stop_wait = asyncio.create_task(self._stop.wait())
        try:
            await asyncio.wait({feeder, stop_wait}, return_when=asyncio.FIRST_COMPLETED)
            if not feeder.done():  # stop requested while units remain
                feeder.cancel()
                await asyncio.gather(feeder, return_exceptions=True)
            else:
                feeder.result()
            if not self._stop.is_set():
                idle = asyncio.create_task(self._idle.wait())
                await asyncio.wait({idle, stop_wait}, return_when=asyncio.FIRST_COMPLETED)
                idle.cancel()
            if self._stop.is_set():
                await self._drain()
        finally:
            stop_wait.cancel()
            if not feeder.done():
                feeder.cancel()
            await self._cancel_running()
        self.outcome.not_started = len(self.units) - self._started
        return self.outcome

    async def _feed(self) -> None:
        slots = self._slots
        running = self._running
        for order, wu in enumerate(self.units):
            await slots.acquire()
            if self._stop.is_set():
                slots.release()
                return
            self._started += 1
            task = asyncio.create_task(self._episode(order, wu))
            running.add(task)
            self._idle.clear()

    async def _drain(self) -> None:
        """After a stop: give running episodes the grace period, then cancel them."""
        self.outcome.interrupted = True
        if self._running and self.shutdown_grace_s > 0:
            idle = asyncio.create_task(self._idle.wait())
            force = asyncio.create_task(self._force.wait())
            await asyncio.wait({idle, force}, timeout=self.shutdown_grace_s,
                               return_when=asyncio.FIRST_COMPLETED)
            idle.cancel()
            force.cancel()
        await self._cancel_running()

    async def _cancel_running(self) -> None:
        pending = [t for t in self._running if not t.done()]
        for t in pending:
            t.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        self.outcome.cancelled += sum(1 for t in pending if t.cancelled())

    async def _episode(self, order: int, wu: WorkUnit) -> None:
        counters = self.counters
        counters.episodes_in_flight += 1
        unit, task = wu.unit, wu.task
        sid = session_id(unit.run, unit.task)
        retry = self.retry
        try:
            attempt = 0
            while True:
                attempt += 1
                ticket = EpisodeTicket(order, sid)
                try:
                    record = await self.episode_fn(unit, task, ticket)
                except Exception as exc:  # noqa: BLE001 - never scored, see below
                    if not (isinstance(exc, InfrastructureError) or is_fd_exhaustion(exc)):
                        # a bug or a rejected request: the unit fails, not retried
                        counters.errors += 1
                        self._fail(unit, "error", exc, attempt)
                        return
                    # infrastructure (or too many open files): retry the episode
                    counters.infra_retries += 1
                    if is_fd_exhaustion(exc):
                        counters.fd_retries += 1
                    if attempt >= retry.max_attempts:
                        counters.infra_failures += 1
                        self._fail(unit, "infrastructure", exc, attempt)
                        return
                    cap = min(retry.backoff_cap_s, retry.backoff_s * 2 ** (attempt - 1))
                    await asyncio.sleep(random.uniform(cap / 2, cap))
                    continue
                record.infra_retries = attempt - 1
                record.timings["queue"] = ticket.queue_s
                for role, waited in (ticket.role_queue_s or {}).items():
                    record.timings[f"queue_{role}"] = waited  # inside timings[role]
                self.writer.put(record)
                counters.add_record(record)
                self.outcome.finished += 1
                if self.on_record is not None:
                    self.on_record(record)
                return
        finally:
            counters.episodes_in_flight -= 1
            self._slots.release()
            current = asyncio.current_task()
            self._running.discard(current)  # type: ignore[arg-type]
            if not self._running:
                self._idle.set()

    def _fail(self, unit: UnitId, kind: str, exc: BaseException, attempts: int) -> None:
        self.outcome.failed += 1
        self.failures.put(FailureRecord(unit=unit, kind=kind, attempts=attempts,
                                        error=f"{type(exc).__name__}: {exc}", at=time.time()))
