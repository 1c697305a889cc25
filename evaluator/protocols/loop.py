"""The shared agent loop of episode protocols: agent calls, tool execution, bookkeeping.

`Episode` holds the mutable state of one running episode (the agent's message list, tool-call
records, usage and timings) and is turned into an `EpisodeRecord` at the end. The conversation
is only ever appended to; nothing is copied per step.

Rules applied here (documented in docs/protocols.md):
- a tool call with an empty or duplicate id gets the deterministic id `call_<step>_<index>`;
- a tool call without a function name is answered with an `unknown_tool` error message;
- reply text is stripped of surrounding whitespace (as the reference's client does);
- an assistant reply with neither text nor tool calls is kept as an empty reply (content "",
  counted in `extra["empty_replies"]`), as the reference does; with
  `settings.retry_empty_replies` it is dropped and the same request retried once instead, and
  a second empty reply in a row ends the episode: "agent_error";
- a user turn whose `max_steps` agent calls all called tools gets the protocol's fixed
  step-limit reply as the agent's reply, as the TravelBench reference does
  (`extra["step_limit_replies"]`);
- text that looks like an unparsed hermes `<tool_call>` stays text (counted in
  `extra["unparsed_tool_call_text"]`): it is the model's fault, not ours;
- a request the server rejects for exceeding the context window ends the episode:
  "context_overflow". Infrastructure errors (`backends.errors.InfrastructureError`, a
  malformed 200 body included: a server fault, never the model's) and other HTTP errors
  propagate to the scheduler, which retries the episode and never scores it.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

from backends.errors import HTTPStatusError
from backends.types import ChatMessage, ChatResponse, ToolCall, Usage
from cache_store.types import ToolOutcome
from evaluator.records import EpisodeRecord, ModelCall, ToolCallRecord

from .base import EpisodeContext, RoleClient

_CONTEXT_OVERFLOW = re.compile(
    r"context length|context window|maximum model length|longer than the maximum|"
    r"too many tokens|prompt is too long",
    re.IGNORECASE,
)
_VALIDATION_CATEGORIES = frozenset(
    {"malformed_json", "unknown_tool", "unknown_parameter", "missing_required", "wrong_type",
     "bad_enum", "out_of_range"}
)
_NO_NAME = ToolOutcome(
    content='{"error": "tool call has no function name"}',
    source="error",
    error_category="unknown_tool",
)


class EpisodeEnded(Exception):
    """Raised inside a protocol to stop the episode with a termination reason."""

    def __init__(self, termination: str, detail: str = "") -> None:
        super().__init__(termination)
        self.termination = termination
        self.detail = detail


def is_context_overflow(exc: HTTPStatusError) -> bool:
    return exc.status in (400, 413) and bool(_CONTEXT_OVERFLOW.search(exc.body))


class Episode:
    """Mutable state of one episode; `finish()` turns it into the EpisodeRecord.

    The protocol gives the agent's system prompt and first user message, the task's time
    (passed to every tool call), the fixed reply used when a user turn runs out of agent
    calls, and the record's first `extra` entries (its prompt version, say).
    """

    __slots__ = (
        "_t0",
        "_tools",
        "calls",
        "ctx",
        "extra",
        "final_answer",
        "messages",
        "n_agent_calls",
        "n_user_turns",
        "started_at",
        "step_limit_text",
        "step_limited",
        "task_time",
        "timings",
        "tool_calls",
        "usage",
        "user_messages",
    )

    def __init__(self, ctx: EpisodeContext, system_prompt: str, first_message: str, *,
                 task_time: str = "", step_limit_text: str = "",
                 extra: dict[str, Any] | None = None) -> None:
        self.ctx = ctx
        self.task_time = task_time
        self.step_limit_text = step_limit_text
        self.started_at = time.time()
        self._t0 = time.perf_counter()
        self.calls: list[ModelCall] = []  # each model call's timing (the viewer's timeline)
        self.messages: list[ChatMessage] = [
            ChatMessage(role="system", content=system_prompt),
            ChatMessage(role="user", content=first_message),
        ]
        self.tool_calls: list[ToolCallRecord] = []
        self.user_messages: list[ChatMessage] = []
        self.usage: dict[str, Usage] = {"agent": Usage()}
        self.timings: dict[str, float] = {"agent": 0.0, "tool": 0.0}
        self.n_agent_calls = 0
        self.n_user_turns = 1  # user messages in `messages`; the task query is the first
        self.step_limited = False  # the last agent turn ended with the step-limit reply
        self.extra: dict[str, Any] = dict(extra or {})
        self.final_answer = ""
        self._tools = ctx.sandbox.tools  # the same list object on every call

    # -- model calls ------------------------------------------------------------------------
    async def call_model(
        self, role: str, client: RoleClient, messages: list[ChatMessage], **kwargs: Any
    ) -> ChatMessage:
        """One completion; sums usage and time under `role`. Ends the episode on overflow."""
        t0 = time.perf_counter()
        try:
            response: ChatResponse = await client.complete(messages, **kwargs)
        except HTTPStatusError as exc:
            if is_context_overflow(exc):
                raise EpisodeEnded("context_overflow", f"{role}: {exc}") from None
            raise
        finally:
            self.timings[role] = self.timings.get(role, 0.0) + time.perf_counter() - t0
        u = response.usage
        self.calls.append(ModelCall(role, round(t0 - self._t0, 3),
                                    round(time.perf_counter() - t0, 3), u.prompt_tokens,
                                    u.completion_tokens, u.cached_tokens))
        usage = self.usage.get(role)
        if usage is None:
            usage = self.usage[role] = Usage()
        usage.add(u)
        return response.message

    def count(self, key: str) -> None:
        """One more of `key` in the record's `extra` (a per-episode tally)."""
        self.extra[key] = self.extra.get(key, 0) + 1

    async def agent_reply(self) -> ChatMessage:
        """Ask the agent for its next message and append it (empty replies: module doc)."""
        retry = self.ctx.settings.retry_empty_replies
        for attempt in (0, 1):
            self.n_agent_calls += 1
            msg = await self.call_model("agent", self.ctx.agent, self.messages, tools=self._tools)
            if msg.content:
                msg.content = msg.content.strip()
            if msg.tool_calls or msg.content:
                break
            self.count("empty_replies")
            if not retry:
                msg.content = ""
                break
            if attempt == 1:
                raise EpisodeEnded("agent_error", "two empty agent replies in a row")
        if msg.role != "assistant":
            msg.role = "assistant"
        if msg.tool_calls:
            self._fix_ids(msg.tool_calls)
        elif msg.content and "<tool_call>" in msg.content:
            self.count("unparsed_tool_call_text")
        self.messages.append(msg)
        return msg

    def _fix_ids(self, calls: list[ToolCall]) -> None:
        step = self.n_agent_calls - 1
        seen: set[str] = set()
        for i, call in enumerate(calls):
            if not call.id or call.id in seen:
                call.id = f"call_{step}_{i}"
                self.count("tool_call_ids_assigned")
            seen.add(call.id)

    # -- tools ------------------------------------------------------------------------------
    async def _execute(self, call: ToolCall, step: int) -> ToolCallRecord:
        name = call.function.name if call.function is not None else ""
        arguments = call.function.arguments if call.function is not None else ""
        if arguments is None:
            arguments = ""
        t0 = time.perf_counter()
        if name:
            outcome = await self.ctx.sandbox.call(name, arguments, task_time=self.task_time)
        else:
            outcome = _NO_NAME
        return ToolCallRecord(
            call_id=call.id,
            name=name,
            arguments=arguments,
            valid=outcome.error_category not in _VALIDATION_CATEGORIES,
            source=outcome.source,
            content=outcome.content,
            error_category=outcome.error_category,
            latency_s=time.perf_counter() - t0,
            step=step,
        )

    async def run_tools(self, calls: list[ToolCall]) -> None:
        """Execute every call of one assistant message; append one tool message per call."""
        step = self.n_agent_calls - 1
        t0 = time.perf_counter()
        if len(calls) == 1:
            records = [await self._execute(calls[0], step)]
        else:
            records = await asyncio.gather(*(self._execute(c, step) for c in calls))
        self.timings["tool"] += time.perf_counter() - t0
        for record in records:
            self.tool_calls.append(record)
            self.messages.append(
                ChatMessage(role="tool", content=record.content, tool_call_id=record.call_id)
            )

    async def agent_turn(self, max_steps: int, stop_tags: tuple[str, ...] = (),
                         stop_reason: str = "stop_tag") -> str:
        """Let the agent call tools until it replies without tool calls; return its text.

        After `max_steps` agent calls that all called tools (each call's tools executed), the
        fixed step-limit text is appended as the agent's reply and returned, and
        `step_limited` is set: the episode goes on, as in the reference. Raises
        EpisodeEnded(stop_reason) when the text of a reply contains one of `stop_tags`
        (pending tool calls of that reply are then not executed).
        """
        self.step_limited = False
        start = self.n_agent_calls
        while self.n_agent_calls - start < max_steps:
            msg = await self.agent_reply()
            content = msg.content or ""
            if stop_tags and content and any(tag in content for tag in stop_tags):
                self.final_answer = content
                raise EpisodeEnded(stop_reason)
            if not msg.tool_calls:
                self.final_answer = content
                return content
            if content.strip():
                self.count("mixed_turns")  # text next to tool calls: never shown to the user
            await self.run_tools(msg.tool_calls)
        text = self.step_limit_text
        self.messages.append(ChatMessage(role="assistant", content=text))
        self.count("step_limit_replies")
        self.step_limited = True
        self.final_answer = text
        return text

    # -- the result -------------------------------------------------------------------------
    def finish(self, termination: str, detail: str = "") -> EpisodeRecord:
        ctx = self.ctx
        finished = time.time()
        self.timings["total"] = finished - self.started_at
        if detail:
            self.extra["error"] = detail
        task = ctx.task
        return EpisodeRecord(
            unit=ctx.unit,
            benchmark=task.benchmark,
            subset=task.subset,
            task_id=task.task_id,
            messages=self.messages,
            tool_calls=self.tool_calls,
            user_messages=self.user_messages,
            termination=termination,
            final_answer=self.final_answer,
            n_agent_calls=self.n_agent_calls,
            n_user_turns=self.n_user_turns,
            usage=self.usage,
            timings=self.timings,
            started_at=self.started_at,
            finished_at=finished,
            extra=self.extra,
            calls=self.calls,
        )
