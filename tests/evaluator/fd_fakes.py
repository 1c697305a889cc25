"""A protocol that runs the process out of file descriptors for a moment (fault tests).

Selected with `--set protocol.entry=tests.evaluator.fd_fakes:starved_episode`. The first
`FD_HOG_EPISODES` episodes (env, default 3) each open /dev/null until the process gets EMFILE,
hold those descriptors for `FD_HOG_S` seconds (default 0.3) while the episode goes on with the
benchmark's own protocol, then close them: connections and files opened meanwhile, anywhere in
the process, fail with EMFILE, which the run must absorb (client and episode retries).
"""

from __future__ import annotations

import asyncio
import errno
import os

from evaluator import benchmarks
from evaluator.protocols.base import EpisodeContext
from evaluator.records import EpisodeRecord

_hogs = 0


def _exhaust() -> list[int]:
    held: list[int] = []
    while True:
        try:
            held.append(os.open(os.devnull, os.O_RDONLY))
        except OSError as exc:
            if exc.errno != errno.EMFILE:
                raise
            return held


def _release(held: list[int]) -> None:
    for fd in held:
        os.close(fd)


async def starved_episode(ctx: EpisodeContext) -> EpisodeRecord:
    global _hogs
    if _hogs < int(os.environ.get("FD_HOG_EPISODES", "3")):
        _hogs += 1
        held = _exhaust()
        asyncio.get_running_loop().call_later(float(os.environ.get("FD_HOG_S", "0.3")),
                                              _release, held)
    protocol = benchmarks.get(ctx.task.benchmark).protocol(ctx.task.subset)
    return await protocol(ctx)
