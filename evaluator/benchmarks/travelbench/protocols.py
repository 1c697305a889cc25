"""The three TravelBench protocols: single-turn, unsolvable and multi-turn episodes.

Their message sequences follow the reference implementation (small-xiangcheng/TravelBench,
commit 445a29d: `agents/assistant.py`, `core/conversation.py`, `simulators/user_simulator.py`);
docs/protocols.md lists the rules and the few deliberate differences.
"""

from __future__ import annotations

from backends.types import ChatMessage, Usage
from evaluator.protocols.base import EpisodeContext
from evaluator.protocols.loop import Episode, EpisodeEnded
from evaluator.records import EpisodeRecord

from .options import reference_rendering
from .prompting import (
    agent_first_message,
    agent_system_prompt,
    prompt_digest,
    prompt_version,
    step_limit_reply,
    travel_of,
    user_system_prompt,
)
from .reference_episode import ReferenceEpisode

TAG_TERMINATION = "unsolvable_tag"
"""How an unsolvable episode ends at a tagged reply (with `stop_at_abstain_tag`)."""


def _episode(ctx: EpisodeContext, kind: str) -> Episode:
    s = ctx.settings
    extra = {"prompt_version": prompt_version(s), "prompt_digest": prompt_digest(s),
             "layout": s.layout}
    make = ReferenceEpisode if reference_rendering(s.options) else Episode
    return make(ctx, agent_system_prompt(kind, ctx.task, s), agent_first_message(ctx.task, s),
                task_time=travel_of(ctx.task).time, step_limit_text=step_limit_reply(s),
                extra=extra)


async def _one_turn(ctx: EpisodeContext, kind: str, stop_tags: tuple[str, ...]) -> EpisodeRecord:
    episode = _episode(ctx, kind)
    try:
        await episode.agent_turn(ctx.settings.max_steps, stop_tags, TAG_TERMINATION)
    except EpisodeEnded as end:
        return episode.finish(end.termination, end.detail)
    return episode.finish("max_steps" if episode.step_limited else "answer")


async def run_single_turn(ctx: EpisodeContext) -> EpisodeRecord:
    """The agent answers the query alone, calling tools over up to `max_steps` agent calls; if
    every call called tools, the step-limit reply is its answer ("max_steps")."""
    return await _one_turn(ctx, "single_turn", ())


async def run_unsolvable(ctx: EpisodeContext) -> EpisodeRecord:
    """Single-turn with the abstain prompt (it asks for the first of `abstain_tags`).

    As in the reference, a tagged reply does not end the loop (its tool calls still run); it is
    scored from the first assistant message by the rule judge. `stop_at_abstain_tag` ends
    the episode at the first reply whose text has a tag instead ("unsolvable_tag").
    """
    settings = ctx.settings
    tags = settings.abstain_tags if settings.stop_at_abstain_tag else ()
    return await _one_turn(ctx, "unsolvable", tags)


async def run_multi_turn(ctx: EpisodeContext) -> EpisodeRecord:
    """Agent and user simulator alternate for up to `max_turns` rounds.

    A round: the agent answers the last user message (the query first) with its tool loop,
    then the simulator answers the agent's text. A simulator reply with the finish marker
    ends the dialogue ("user_finished") and is appended to `messages` as the last user
    message; after round `max_turns` the dialogue ends ("max_turns") and the simulator's last
    reply is not appended, even when it has the marker (both as in the reference).

    The simulator sees only the agent's text replies (tool calls, tool results and any text
    written next to tool calls stay hidden); its conversation is `user_messages`, with roles
    flipped: agent replies are "user" messages to it, its own replies "assistant" messages.
    With layout "reference" it starts, as in the reference, with the query as its own first
    ("assistant") message.
    """
    if ctx.user is None:
        raise ValueError(
            f"task {ctx.task.key}: the multi_turn protocol needs a user-simulator RoleClient "
            "(EpisodeContext.user is None)"
        )
    settings = ctx.settings
    episode = _episode(ctx, "multi_turn")
    user_messages = episode.user_messages
    user_messages.append(ChatMessage(role="system", content=user_system_prompt(ctx.task, settings)))
    if settings.layout == "reference":
        user_messages.append(ChatMessage(role="assistant", content=travel_of(ctx.task).query))
    episode.usage["user"] = Usage()
    episode.timings["user"] = 0.0
    marker = settings.finish_marker
    rounds = 0
    try:
        while True:
            rounds += 1
            episode.extra["rounds"] = rounds
            reply = await episode.agent_turn(settings.max_steps)
            user_messages.append(ChatMessage(role="user", content=reply))
            text = await _user_reply(episode)
            # the reference sends an empty reply of its own back without content
            user_messages.append(ChatMessage(role="assistant", content=text or (
                None if reference_rendering(settings.options) else text)))
            finished = marker in text
            if rounds >= settings.max_turns:
                if finished:
                    episode.extra["finished_in_last_round"] = True
                return episode.finish("max_turns")
            episode.messages.append(ChatMessage(role="user", content=text))
            episode.n_user_turns += 1
            if finished:
                return episode.finish("user_finished")
    except EpisodeEnded as end:
        return episode.finish(end.termination, end.detail)


async def _user_reply(episode: Episode) -> str:
    """The simulator's next utterance (stripped). An empty one is kept, as in the reference;
    with `retry_empty_replies` it is retried once and a second one ends the episode."""
    user = episode.ctx.user
    assert user is not None
    retry = episode.ctx.settings.retry_empty_replies
    for _ in (0, 1):
        msg = await episode.call_model("user", user, episode.user_messages)
        text = (msg.content or "").strip()
        if text:
            return text
        episode.count("empty_user_replies")
        if not retry:
            return text
    raise EpisodeEnded("user_error", "two empty user-simulator replies in a row")
