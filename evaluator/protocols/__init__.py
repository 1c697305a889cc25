"""Episode protocols: pure async functions from (task, context) to an EpisodeRecord.

`PROMPT_DIGEST` identifies the prompt texts and `prompt_version(settings)` (`PROMPT_VERSION` +
the layout) the prompt rules; every record carries both, and the layout, in `extra`. The scheduler looks a protocol up by the task's subset with `get_protocol`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from evaluator.records import EpisodeRecord

from .base import LAYOUTS, EpisodeContext, ProtocolSettings, RoleClient, ToolSandbox
from .prompting import (
    PROMPT_DIGEST,
    PROMPT_VERSION,
    agent_first_message,
    agent_system_prompt,
    prompt_version,
    step_limit_reply,
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
    "LAYOUTS",
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
    "prompt_version",
    "run_multi_turn",
    "run_single_turn",
    "run_unsolvable",
    "step_limit_reply",
    "user_system_prompt",
]
