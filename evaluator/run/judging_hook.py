"""Judging during a sweep: finished episodes go to a JudgePool while rollouts continue.

Judge requests go through the run's admission controllers, queued behind every episode's
requests (rollouts stay depth-first); failures here never touch the saved episodes.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from backends.types import Endpoint
from evaluator.config import RunConfig
from evaluator.judges.pool import JudgePool, context_hint
from evaluator.records import EpisodeRecord
from evaluator.run.admission import NEW, AdmissionController
from evaluator.run.progress import Counters
from evaluator.run.roles import AdmittedChat, RoleEndpoint


class JudgeHook:
    """Hands finished records to the JudgePool while rollouts continue; at a start, also every
    recorded episode that still lacks judgements (`evaluator.judges.owed`), however it came to
    lack them (a run without `--judge`, a signal or a kill while judging, a judge that was down).
    """

    def __init__(self, pool: Any) -> None:
        self.pool = pool
        self.stopped = False   # judging was stopped before everything submitted was judged
        self.error = ""        # judging failed (a judge worker's bug): what happened
        self.closed = False    # finished or aborted: the pool's workers and writer are stopped
        self.owed: Any = None  # evaluator.judges.owed.Owed, counted by `summary`
        self._pending: set[asyncio.Task[None]] = set()
        self._stop = asyncio.Event()
        self._backfill: asyncio.Task[None] | None = None

    def submit(self, record: EpisodeRecord) -> None:
        t = asyncio.get_running_loop().create_task(self.pool.submit(record))
        self._pending.add(t)
        t.add_done_callback(self._pending.discard)

    def start_backfill(self) -> None:
        """In the background (rollouts start meanwhile): submit every recorded episode that
        lacks a judgement, read from the run directory's files. `finish` waits for it."""
        self._backfill = asyncio.get_running_loop().create_task(self._scan(), name="backfill")

    async def _scan(self) -> None:
        from evaluator.judges.owed import OwingScan
        from evaluator.run.results import iter_records

        p = self.pool
        scan = OwingScan(p.run_dir, p.settings, p.model, p.prompts, p.tasks, p.options)
        for i, rec in enumerate(iter_records(p.run_dir)):
            scan.add(rec)
            if i % 64 == 63:
                await asyncio.sleep(0)  # a big run's records: the event loop stays responsive
        owing = scan.result()
        if owing:
            print(f"judging {len(owing)} recorded episodes that lack judgements",
                  file=sys.stderr)
        for record, _ in owing:
            self.submit(record)

    def request_stop(self) -> None:
        """Stop judging (a signal): `finish` writes what is judged and leaves the rest owed."""
        self._stop.set()

    async def finish(self) -> None:
        """Judge everything submitted and write it; stopped early by `request_stop`."""
        try:
            if self._backfill is not None and not self._backfill.done():
                stopped = asyncio.ensure_future(self._stop.wait())
                await asyncio.wait({self._backfill, stopped},
                                   return_when=asyncio.FIRST_COMPLETED)
                stopped.cancel()
                if self._stop.is_set():
                    await self.abort()
                    return
            if self._backfill is not None:
                self._backfill.result()  # its error, if it failed
            await asyncio.gather(*self._pending)
            if not await self.pool.drain(self._stop):
                self.stopped = True
        except Exception as exc:  # noqa: BLE001 - episodes are safe; judging can be redone
            self.error = f"{type(exc).__name__}: {exc}"
            await self.pool.abort()
        self.closed = True

    async def abort(self) -> None:
        """Stop now: what is judged is written, what is in flight stays owed."""
        self.stopped = True
        if self._backfill is not None:
            self._backfill.cancel()
            await asyncio.gather(self._backfill, return_exceptions=True)
        await asyncio.gather(*self._pending, return_exceptions=True)
        await self.pool.abort()
        self.closed = True

    def summary(self, run_dir: Path) -> str:
        """The run summary's judging lines; what is still owed is counted from the files."""
        from evaluator.judges.owed import pool_owed

        st = self.pool.stats
        owed = self.owed = pool_owed(self.pool)
        lines = [f"  judged: {st.judged} judgements this session ({st.judge_errors} judge "
                 f"errors)" + ("" if owed.episodes else "; none owed")]
        if self.error:
            lines.append(f"  judging failed: {self.error}; the episodes are saved")
        if owed.episodes:
            lines.append(f"  still owed: {owed.judgements} judgements of {owed.episodes} "
                         f"episodes; `agentsweep run --resume {run_dir} --judge` or "
                         f"`agentsweep judge {run_dir}` judges them")
        hint = context_hint(st, self.pool.settings, run_dir)
        return "\n".join(lines + ([f"  {hint}"] if hint else []))


async def start_judging(config: RunConfig, run_dir: Path, endpoints: list[Endpoint], res: Any,
                        counters: Counters, taskset: Any, prompts: Any = None) -> JudgeHook:
    """A started JudgePool on `endpoints` (already resolved), behind the run's admission;
    `prompts`: the run's prompt set (None = built-in)."""
    clients = []
    router = judge_router(config, endpoints, res)
    if router is not None:  # several endpoints, or managed replicas: routed
        model = endpoints[0].model or await router.resolve_model()
        adm = AdmissionController("judge:router", config.admission, cap=1 << 30)
        role = RoleEndpoint("judge", router, model, config.judge.sampling, adm, counters,
                            routed=True)
        res.roles["judge"] = role
        res.role_routers["judge"] = router  # shared with the roles: sampled once with them
        clients.append(AdmittedChat(role, klass=NEW, order=sys.maxsize))
        endpoints = []
    for ep in endpoints:
        client = res.client(ep, max_connections=max(64, config.judge.concurrency * 2))
        adm = res.admission_for(ep.base_url, config.admission)
        model = ep.model or await client.resolve_model()
        role = RoleEndpoint("judge", client, model, config.judge.sampling, adm, counters)
        res.roles["judge"] = role
        # judge calls queue behind every episode's requests: rollouts stay depth-first
        clients.append(AdmittedChat(role, klass=NEW, order=sys.maxsize))
    pool = JudgePool(run_dir, config.judge, client=clients, prompts=prompts,
                     options=config.options,
                     tasks={t.key: t for t in taskset.tasks},
                     tool_schemas={taskset.benchmark: taskset.tool_schemas})
    await pool.start()
    return JudgeHook(pool)


def judge_router(config: RunConfig, endpoints: list[Endpoint], res: Any) -> Any:
    """The judge's router: the managed replicas' one when the judge is "embedded" on them, a
    new one over `[[judge.endpoints]]` when there are several, else None (one endpoint)."""
    import msgspec

    from backends.router import Router
    from backends.router_replica import ReplicaSpec, RouterSettings

    if getattr(res, "servers", None) and all(
            ep.base_url == "embedded" for ep in config.judge.endpoints):
        from evaluator.config import RoleConfig
        from evaluator.run.resources import open_router

        return open_router(endpoints[0], RoleConfig(routing=config.agent.routing), res)
    if len(endpoints) < 2:
        return None
    settings = msgspec.convert(config.judge.routing, RouterSettings)
    router = Router([ReplicaSpec(ep) for ep in endpoints], model=endpoints[0].model or None,
                    settings=settings, template=endpoints[0])
    res.routers.append(router)
    return router
