"""Episode protocols: pure async functions from (task, context) to an EpisodeRecord.

`PROMPT_VERSION` / `PROMPT_DIGEST` identify the prompt texts; every record carries both in
`extra`. The scheduler looks a protocol up by the task's subset with `get_protocol`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from evaluator.records import EpisodeRecord

from .base import EpisodeContext, ProtocolSettings, RoleClient, ToolSandbox
from .prompting import (
    PROMPT_DIGEST,
    PROMPT_VERSION,
    agent_first_message,
    agent_system_prompt,
    user_system_prompt,
)
from .travel import run_multi_turn, run_single_turn, run_unsolvable

ProtocolFn = Callable[[EpisodeContext], Awaitable[EpisodeRecord]]

PROTOCOLS: dict[str, ProtocolFn] = {
    "single_turn": run_single_turn,
    "multi_turn": run_multi_turn,
    "unsolvable": run_unsolvable,
}


def get_protocol(subset: str) -> ProtocolFn:
    """The protocol of a subset; raises KeyError naming the known subsets."""
    try:
        return PROTOCOLS[subset]
    except KeyError:
        raise KeyError(
            f"no episode protocol for subset {subset!r}; known subsets: {sorted(PROTOCOLS)}"
        ) from None


__all__ = [
    "PROMPT_DIGEST",
    "PROMPT_VERSION",
    "PROTOCOLS",
    "EpisodeContext",
    "ProtocolFn",
    "ProtocolSettings",
    "RoleClient",
    "ToolSandbox",
    "agent_first_message",
    "agent_system_prompt",
    "get_protocol",
    "run_multi_turn",
    "run_single_turn",
    "run_unsolvable",
    "user_system_prompt",
]
