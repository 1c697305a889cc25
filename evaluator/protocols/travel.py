"""The three TravelBench protocols: single-turn, unsolvable and multi-turn episodes."""

from __future__ import annotations

from backends.types import ChatMessage, Usage
from evaluator.records import EpisodeRecord

from .base import EpisodeContext
from .loop import Episode, EpisodeEnded
from .prompting import agent_first_message, agent_system_prompt, user_system_prompt


async def run_single_turn(ctx: EpisodeContext) -> EpisodeRecord:
    """The agent answers the query alone, calling tools over up to `max_steps` agent calls."""
    episode = Episode(ctx, agent_system_prompt("single_turn", ctx.settings),
                      agent_first_message(ctx.task, ctx.settings))
    try:
        await episode.agent_turn(ctx.settings.max_steps)
    except EpisodeEnded as end:
        return episode.finish(end.termination, end.detail)
    return episode.finish("answer")


async def run_unsolvable(ctx: EpisodeContext) -> EpisodeRecord:
    """Single-turn with an abstain rule: any of `settings.unsolvable_tags` ends the episode."""
    episode = Episode(ctx, agent_system_prompt("unsolvable", ctx.settings),
                      agent_first_message(ctx.task, ctx.settings))
    try:
        await episode.agent_turn(ctx.settings.max_steps, ctx.settings.unsolvable_tags)
    except EpisodeEnded as end:
        return episode.finish(end.termination, end.detail)
    return episode.finish("answer")


async def run_multi_turn(ctx: EpisodeContext) -> EpisodeRecord:
    """Agent and user simulator alternate until the user writes the finish marker.

    The simulator sees only the agent's text replies (tool calls, tool results and any text
    written next to tool calls stay hidden); its conversation is `user_messages`, with roles
    flipped: agent replies are "user" messages to it, its own replies "assistant" messages.
    """
    if ctx.user is None:
        raise ValueError(
            f"task {ctx.task.key}: the multi_turn protocol needs a user-simulator RoleClient "
            "(EpisodeContext.user is None)"
        )
    settings = ctx.settings
    episode = Episode(ctx, agent_system_prompt("multi_turn", settings),
                      agent_first_message(ctx.task, settings))
    user_messages = episode.user_messages
    user_messages.append(ChatMessage(role="system", content=user_system_prompt(ctx.task, settings)))
    episode.usage["user"] = Usage()
    episode.timings["user"] = 0.0
    marker = settings.finish_marker
    try:
        while True:
            reply = await episode.agent_turn(settings.max_steps)
            if episode.n_user_turns >= settings.max_turns:
                return episode.finish("max_turns")
            user_messages.append(ChatMessage(role="user", content=reply))
            text = await _user_reply(episode)
            user_messages.append(ChatMessage(role="assistant", content=text))
            if marker in text:
                return episode.finish("user_finished")
            episode.messages.append(ChatMessage(role="user", content=text))
            episode.n_user_turns += 1
    except EpisodeEnded as end:
        return episode.finish(end.termination, end.detail)


async def _user_reply(episode: Episode) -> str:
    """The simulator's next utterance; one empty reply is retried, two end the episode."""
    user = episode.ctx.user
    assert user is not None
    for _ in (0, 1):
        msg = await episode.call_model("user", user, episode.user_messages)
        text = (msg.content or "").strip()
        if text:
            return text
        episode.extra["empty_user_replies"] = episode.extra.get("empty_user_replies", 0) + 1
    raise EpisodeEnded("user_error", "two empty user-simulator replies in a row")
