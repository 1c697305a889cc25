"""VitaBench's episode protocol: the reference orchestrator's dialogue as a pure episode
function over the generic agent loop (`evaluator/protocols/loop.py`).

The agent opens with a fixed greeting, which the user simulator sees and the agent's own
context does not (as in the reference). Then the user simulator and the agent alternate: a
user message, then agent replies, each with tool calls run by the episode's environment (in
order, one tool message per call), until a reply without tool calls goes to the user.

Steps are counted as the reference counts them: one per user message, per agent message and
per batch of tool results (the greeting is not one); at `settings.max_steps` steps (the paper
profile: 300) the episode ends "max_steps", which scores 0. `###STOP###` in an agent reply
ends it ("agent_stop"; tool calls of that reply do not run), a stop marker in a user reply
ends it ("user_stop"). The database records the episode created or changed are kept in
`extra["db_changes"]`.
"""

from __future__ import annotations

from typing import Any

import msgspec

from backends.types import ChatMessage, Usage
from evaluator.protocols.base import EpisodeContext
from evaluator.protocols.loop import Episode, EpisodeEnded
from evaluator.records import EpisodeRecord

from .env import VitaEnvironment
from .prompting import (
    GREETING,
    PROMPT_VERSION,
    STOP,
    USER_STOPS,
    agent_system_prompt,
    user_system_prompt,
)

TERMINATIONS = ("agent_stop", "user_stop")
"""How an episode ends normally."""


class _StepLimit(Exception):
    pass


class _Steps:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.n = 0

    def take(self) -> None:
        if self.n >= self.limit:
            raise _StepLimit
        self.n += 1


async def run_episode(ctx: EpisodeContext) -> EpisodeRecord:
    """One VitaBench dialogue (module doc)."""
    if ctx.user is None:
        raise ValueError(f"task {ctx.task.key}: the vitabench protocol needs a user-simulator "
                         "RoleClient (EpisodeContext.user is None)")
    episode = Episode(ctx, agent_system_prompt(ctx.task), "",
                      extra={"prompt_version": PROMPT_VERSION, "greeting": GREETING})
    episode.messages.pop()  # the agent's context starts with the user's first message
    episode.n_user_turns = 0
    episode.usage["user"] = Usage()
    episode.timings["user"] = 0.0
    # the simulator's view, roles flipped: the agent's text is "user", its own "assistant"
    episode.user_messages.extend([
        ChatMessage(role="system", content=user_system_prompt(ctx.task)),
        ChatMessage(role="user", content=GREETING)])
    steps = _Steps(ctx.settings.max_steps)
    try:
        termination = await _dialogue(episode, steps)
    except _StepLimit:
        termination = "max_steps"
    except EpisodeEnded as end:
        return _finish(episode, steps, end.termination, end.detail)
    return _finish(episode, steps, termination)


async def _dialogue(episode: Episode, steps: _Steps) -> str:
    while True:
        steps.take()
        text = await _user_reply(episode)
        episode.user_messages.append(ChatMessage(role="assistant", content=text))
        episode.messages.append(ChatMessage(role="user", content=text))
        episode.n_user_turns += 1
        if any(marker in text for marker in USER_STOPS):
            return "user_stop"
        while True:
            steps.take()
            msg = await episode.agent_reply()
            content = msg.content or ""
            if STOP in content:
                episode.final_answer = content
                return "agent_stop"
            if not msg.tool_calls:
                episode.final_answer = content
                episode.user_messages.append(ChatMessage(role="user", content=content))
                break
            steps.take()
            await episode.run_tools(msg.tool_calls)


async def _user_reply(episode: Episode) -> str:
    user = episode.ctx.user
    assert user is not None
    msg = await episode.call_model("user", user, episode.user_messages)
    text = (msg.content or "").strip()
    if not text:
        episode.count("empty_user_replies")
    return text


def _finish(episode: Episode, steps: _Steps, termination: str, detail: str = ""
            ) -> EpisodeRecord:
    episode.extra["steps"] = steps.n
    sandbox = episode.ctx.sandbox
    if isinstance(sandbox, VitaEnvironment):
        episode.extra["db_changes"] = _builtins(sandbox.changes())
    return episode.finish(termination, detail)


def _builtins(value: Any) -> Any:
    return msgspec.to_builtins(value, str_keys=True)
