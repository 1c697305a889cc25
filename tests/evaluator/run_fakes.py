"""A tiny episode protocol for scheduler / CLI tests: one agent call, then a record.

Selected with `--set protocol.entry=tests.evaluator.run_fakes:one_call_episode`. The sleep
(env FAKE_EPISODE_SLEEP, seconds) keeps episodes in flight long enough to kill the process.
"""

from __future__ import annotations

import asyncio
import os
import time

from backends.types import ChatMessage
from evaluator.protocols.base import EpisodeContext
from evaluator.records import EpisodeRecord


async def one_call_episode(ctx: EpisodeContext) -> EpisodeRecord:
    started = time.time()
    messages = [ChatMessage(role="system", content="test"),
                ChatMessage(role="user", content=ctx.task.key)]
    response = await ctx.agent.complete(messages)
    await asyncio.sleep(float(os.environ.get("FAKE_EPISODE_SLEEP", "0")))
    messages.append(response.message)
    task = ctx.task
    return EpisodeRecord(
        unit=ctx.unit, benchmark=task.benchmark, subset=task.subset, task_id=task.task_id,
        messages=messages, final_answer=response.message.content or "", n_agent_calls=1,
        usage={"agent": response.usage}, started_at=started, finished_at=time.time(),
    )


_ATTEMPTED: set[str] = set()


def _first_attempt(ctx: EpisodeContext) -> bool:
    first = ctx.unit.key not in _ATTEMPTED
    _ATTEMPTED.add(ctx.unit.key)
    return first


async def three_call_episode(ctx: EpisodeContext) -> EpisodeRecord:
    """Three agent calls, each on the conversation so far. With FAKE_CRASH_AFTER=N in the
    environment the episode raises after N calls (a bug: the unit goes to failures.jsonl);
    with FAKE_INFRA_ONCE_AFTER=N its first attempt in this process raises an infrastructure
    error after N calls (the scheduler retries it)."""
    started = time.time()
    messages = [ChatMessage(role="system", content="test"),
                ChatMessage(role="user", content=ctx.task.key)]
    crash_after = int(os.environ.get("FAKE_CRASH_AFTER", "0"))
    infra_after = int(os.environ.get("FAKE_INFRA_ONCE_AFTER", "0"))
    usage = None
    for n in range(3):
        if crash_after and n == crash_after:
            raise RuntimeError(f"crash after {n} calls")
        if infra_after and n == infra_after and _first_attempt(ctx):
            from backends.errors import InfrastructureError

            raise InfrastructureError(f"engine lost after {n} calls")
        response = await ctx.agent.complete(messages)
        messages += [response.message, ChatMessage(role="user", content=f"and then? {n}")]
        if usage is None:
            usage = response.usage
        else:
            usage.add(response.usage)
    task = ctx.task
    return EpisodeRecord(
        unit=ctx.unit, benchmark=task.benchmark, subset=task.subset, task_id=task.task_id,
        messages=messages, final_answer=messages[-2].content or "", n_agent_calls=3,
        usage={"agent": usage} if usage else {}, started_at=started, finished_at=time.time(),
    )
