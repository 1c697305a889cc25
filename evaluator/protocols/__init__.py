"""The generic episode machinery: the contract between a protocol and the run around it
(`base`: EpisodeContext, RoleClient, ToolSandbox, ProtocolSettings) and the shared agent loop
(`loop`: Episode, EpisodeEnded).

A protocol is a pure async function from an `EpisodeContext` to an `EpisodeRecord`; each
benchmark's package holds its own (TravelBench: its package's `protocols.py`),
and the run looks one up through the benchmark registry (`Benchmark.protocol(subset)`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from evaluator.records import EpisodeRecord

from .base import LAYOUTS, EpisodeContext, ProtocolSettings, RoleClient, ToolSandbox
from .loop import Episode, EpisodeEnded

ProtocolFn = Callable[[EpisodeContext], Awaitable[EpisodeRecord]]

__all__ = [
    "LAYOUTS",
    "Episode",
    "EpisodeContext",
    "EpisodeEnded",
    "ProtocolFn",
    "ProtocolSettings",
    "RoleClient",
    "ToolSandbox",
]
