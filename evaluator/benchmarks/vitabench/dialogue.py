"""One attempt of a VitaBench dialogue (protocol.py runs the attempts).

What each model receives follows `options.rendering`: under "reference" every text is passed
on as the model wrote it (the reference strips nothing), an assistant's tool-call arguments
are re-serialised as the reference sends them back (`json.dumps(json.loads(arguments))`),
and tool messages carry the tool's name; under "project" text is stripped and arguments are
echoed as written. The other options decide the edges: empty agent replies
(`empty_agent_attempts`), a stop on the last step (`limit_on_last_step`) and the failures the
reference cannot go on from (`trial_failures`), raised here as TrialFailed.
"""

from __future__ import annotations

import json

from backends.errors import HTTPStatusError
from backends.types import ChatMessage, ToolCall, Usage
from evaluator.protocols.base import EpisodeContext, RoleClient
from evaluator.protocols.loop import Episode, EpisodeEnded

from .options import VitaOptions, options_of
from .prompting import (
    GREETING,
    STOP,
    USER_STOPS,
    agent_system_prompt,
    prompt_version,
    user_system_prompt,
)


class TrialFailed(Exception):
    """Something the reference cannot go on from: the trial is played again (or dropped)."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.detail = detail


class StepLimit(Exception):
    pass


class Steps:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.n = 0

    def take(self) -> None:
        if self.n >= self.limit:
            raise StepLimit
        self.n += 1


def new_episode(ctx: EpisodeContext) -> tuple[Episode, Steps]:
    """A fresh attempt: the agent's context starts with its system prompt; the simulator's
    with its own and the greeting, roles flipped."""
    episode = Episode(ctx, agent_system_prompt(ctx.task, ctx.settings), "",
                      extra={"prompt_version": prompt_version(ctx.settings),
                             "greeting": GREETING})
    episode.messages.pop()  # the agent's context starts with the user's first message
    episode.n_user_turns = 0
    episode.usage["user"] = Usage()
    episode.timings["user"] = 0.0
    # the simulator's view, roles flipped: the agent's text is "user", its own "assistant"
    episode.user_messages.extend([
        ChatMessage(role="system", content=user_system_prompt(ctx.task, ctx.settings)),
        ChatMessage(role="user", content=GREETING)])
    return episode, Steps(ctx.settings.max_steps)


async def dialogue(episode: Episode, steps: Steps) -> str:
    """Play until a stop marker (the termination) or the step limit (StepLimit)."""
    opts = options_of(episode.ctx.settings.options)
    while True:
        steps.take()
        text = await _user_reply(episode, opts)
        episode.user_messages.append(ChatMessage(role="assistant", content=text))
        episode.messages.append(ChatMessage(role="user", content=text))
        episode.n_user_turns += 1
        if any(marker in text for marker in USER_STOPS):
            return _stopped("user_stop", steps, opts)
        while True:
            steps.take()
            msg = await _agent_reply(episode, steps, opts)
            content = msg.content or ""
            if STOP in content:
                episode.final_answer = content
                return _stopped("agent_stop", steps, opts)
            if not msg.tool_calls:
                episode.final_answer = content
                episode.user_messages.append(ChatMessage(role="user", content=msg.content))
                break
            steps.take()
            await episode.run_tools(msg.tool_calls)
            if opts.reference:  # the reference's tool messages carry the tool's name
                for tool_msg, call in zip(episode.messages[-len(msg.tool_calls):],
                                          msg.tool_calls, strict=True):
                    tool_msg.name = call.function.name if call.function is not None else ""


def _stopped(termination: str, steps: Steps, opts: VitaOptions) -> str:
    """A stop on the step that reaches the limit is the limit (the reference checks the
    limit after every step)."""
    if opts.limit_on_last_step and steps.n >= steps.limit:
        return "max_steps"
    return termination


async def _call(episode: Episode, role: str, client: RoleClient, messages: list[ChatMessage],
                opts: VitaOptions, **kwargs: object) -> ChatMessage:
    """One model call; with trial reruns, a rejected request fails the trial."""
    try:
        return await episode.call_model(role, client, messages, **kwargs)
    except EpisodeEnded as end:
        if opts.trial_failures == "rerun":
            raise TrialFailed(end.termination, end.detail) from None
        raise
    except HTTPStatusError as exc:
        if opts.trial_failures == "rerun":
            raise TrialFailed("request_rejected", f"{role}: {exc}") from None
        raise


async def _user_reply(episode: Episode, opts: VitaOptions) -> str:
    user = episode.ctx.user
    assert user is not None
    msg = await _call(episode, "user", user, episode.user_messages, opts)
    text = msg.content
    if text is None or not text.strip():
        episode.count("empty_user_replies")
        if opts.trial_failures == "rerun":
            raise TrialFailed("empty_user_reply", "the user simulator wrote nothing")
        return "" if opts.reference else (text or "").strip()
    return text if opts.reference else text.strip()


async def _agent_reply(episode: Episode, steps: Steps, opts: VitaOptions) -> ChatMessage:
    """The agent's next message, appended to its context."""
    if not opts.empty_agent_attempts and not opts.reference:
        return await episode.agent_reply()  # the loop's rules (protocol.retry_empty_replies)
    ctx = episode.ctx
    tries = max(opts.empty_agent_attempts, 1)
    for _ in range(tries):
        episode.n_agent_calls += 1
        msg = await _call(episode, "agent", ctx.agent, episode.messages, opts,
                          tools=ctx.sandbox.tools)
        if msg.tool_calls or (msg.content is not None and msg.content.strip()):
            break
        episode.count("empty_replies")
        if not opts.empty_agent_attempts:  # the loop's rule: kept as an empty reply
            msg.content = ""
            break
    else:
        steps.n -= 1  # the reference counts no step for it
        raise EpisodeEnded("invalid_agent_message",
                           f"{tries} agent replies with neither text nor tool calls")
    msg.role = "assistant"
    if not opts.reference and msg.content:
        msg.content = msg.content.strip()
    if msg.tool_calls:
        _fix_ids(episode, msg.tool_calls, opts)
        if opts.reference:
            _reserialise(msg.tool_calls, opts)
    episode.messages.append(msg)
    return msg


def _fix_ids(episode: Episode, calls: list[ToolCall], opts: VitaOptions) -> None:
    """A call without an id gets `call_<step>_<i>` (the reference would fail on it), and so,
    under the project rendering, does one with an id used before in the message (as the agent
    loop does; the reference keeps such ids)."""
    step = episode.n_agent_calls - 1
    seen: set[str] = set()
    for i, call in enumerate(calls):
        if not call.id or (call.id in seen and not opts.reference):
            call.id = f"call_{step}_{i}"
            episode.count("tool_call_ids_assigned")
        seen.add(call.id)


def _reserialise(calls: list[ToolCall], opts: VitaOptions) -> None:
    """Arguments as the reference sends them back: parsed into a dict and dumped again
    (an empty text is `{}`). Arguments that are no JSON object fail the trial under reruns
    (the reference's message model refuses them); kept as written otherwise."""
    for call in calls:
        fn = call.function
        raw = fn.arguments if fn is not None else None
        try:
            value = json.loads(raw) if raw else {}
        except ValueError:
            value = None
        if fn is None or not fn.name or not isinstance(value, dict):
            if opts.trial_failures == "rerun":
                name = fn.name if fn is not None else ""
                raise TrialFailed("malformed_tool_call",
                                  f"tool call {name or '(no name)'}: arguments {raw!r} are "
                                  "not a JSON object")
            continue
        fn.arguments = json.dumps(value)
