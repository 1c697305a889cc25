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
    """Hands finished records to the JudgePool while rollouts continue."""

    def __init__(self, pool: Any) -> None:
        self.pool = pool
        self._pending: set[asyncio.Task[None]] = set()

    def submit(self, record: EpisodeRecord) -> None:
        t = asyncio.get_running_loop().create_task(self.pool.submit(record))
        self._pending.add(t)
        t.add_done_callback(self._pending.discard)

    async def finish(self) -> str:
        try:
            await asyncio.gather(*self._pending)
            await self.pool.close()
        except Exception as exc:  # noqa: BLE001 - episodes are safe; judging can be redone
            return (f"  judging failed: {type(exc).__name__}: {exc}; the episodes are saved, "
                    "run `agentsweep judge RUN_DIR` to judge them")
        st = self.pool.stats
        hint = context_hint(st, self.pool.settings, self.pool.run_dir)
        return (f"  judged: {st.judged} judgements ({st.judge_errors} judge errors, "
                f"{st.skipped_done} already judged, {st.infra_failed} left for `agentsweep judge`)"
                + (f"\n  {hint}" if hint else ""))


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
