"""The agent of the group chat: its system prompt and preference table, one turn's tool loop
with the repetition guard and the forced reply, and the internal table refresh.

As the reference's agent does it:
- every call is sent the system prompt (the task's participants, request, background and the
  agent's current preference table; plus the reminder when @-mentioned, and the turn's
  instruction: the summary or the final-plan one) and the chat rebuilt from the record
  (`render.agent_messages`), then this turn's own steps;
- a turn is up to `max_iterations` calls (the run's `max_steps`, 20 in the paper profile);
  every call that carries tool calls is recorded as an agent message with `has_tool_calls`
  followed by one `tool_call` and one `tool_result` entry per call (the arguments re-written
  as JSON text, as the reference keeps them); arguments that are not a JSON object are
  answered with the `agent_bad_arguments` text, without calling the tool;
- two guards stop the loop: a (tool, arguments) pair of this call also called by the previous
  call of the turn ("consecutive"), or a pair called more than `MAX_SAME_CALL` times in the
  episode ("multiple"); then, or after the last iteration, one more call *without tools*
  whose system prompt ends with the forced-reply instruction;
- the table refresh is one tool-less call: the system prompt, then the outward chat and the
  table instruction in one user message; a reply that is a preference table replaces the
  agent's table (a complete snapshot), shown as indented JSON from then on;
- an empty reply (no text, no tool call) is asked again, up to `EMPTY_REPLY_ATTEMPTS` in all
  (the reference's client), and reply text loses a leading `<think>` block.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from backends.types import ChatMessage, FunctionCall, ToolCall
from cache_store.types import ToolOutcome
from evaluator.protocols.loop import Episode
from evaluator.records import ToolCallRecord

from .chat import AGENT, message
from .plan import parse_agent_table
from .prompting import Texts
from .render import CallIds, agent_messages, arguments_object, outward_text, wire_arguments

MAX_SAME_CALL = 2
"""A (tool, arguments) pair may be called this many times per episode; one more stops."""
MAX_REPETITIVE_TURNS = 2
EMPTY_REPLY_ATTEMPTS = 15
BAD_ARGUMENTS_SHOWN = 500
"""Characters of unparseable arguments quoted back to the agent (then "...")."""
_NO_NAME = ToolOutcome(content='{"error": "tool call has no function name"}', source="error",
                       error_category="unknown_tool")


def reply_text(content: str | None) -> str | None:
    """Reply text as the reference's client reads it: stripped; of a `<think>...</think>`
    reply the part after it (or, when nothing follows, the part before it)."""
    if content is None:
        return None
    text = content.strip()
    if "</think>" in text:
        after = text.split("</think>", 1)[-1].strip()
        if after:
            return after
        text = text.split("</think>", 1)[0].strip()
        if text.startswith("<think>"):
            text = text[7:].strip()
    return text


async def ask(episode: Episode, role: str, client: Any, messages: list[ChatMessage],
              tools: list[dict[str, Any]] | None = None) -> ChatMessage:
    """One model reply, asked again while it is empty (EMPTY_REPLY_ATTEMPTS in all)."""
    for attempt in range(EMPTY_REPLY_ATTEMPTS):
        if role == "agent":
            episode.n_agent_calls += 1
        kwargs = {"tools": tools} if tools else {}
        msg = await episode.call_model(role, client, messages, **kwargs)
        msg.content = reply_text(msg.content)
        if msg.content or msg.tool_calls:
            return msg
        if attempt + 1 < EMPTY_REPLY_ATTEMPTS:
            episode.count(f"{role}_empty_replies")
    return msg


def call_signature(record: ToolCallRecord) -> tuple[str, str]:
    """(name, arguments as canonical JSON) — the raw text when it is not a JSON object."""
    try:
        args = json.loads(record.arguments or "{}")
    except ValueError:
        return record.name, record.arguments
    return record.name, json.dumps(args, sort_keys=True, ensure_ascii=False)


@dataclass
class RepetitionGuard:
    """The episode-wide call counts and the outcome of the latest turn."""

    counts: dict[tuple[str, str], int] = field(default_factory=dict)
    reason: str = ""                  # "", "consecutive" or "multiple" (the latest turn)

    def check(self, previous: frozenset[tuple[str, str]] | None,
              calls: list[ToolCallRecord]) -> tuple[frozenset[tuple[str, str]], str]:
        """Register one iteration's calls; (its signature set, the guard that fired or "")."""
        current = frozenset(call_signature(r) for r in calls)
        if previous is not None and current & previous:
            return current, "consecutive"
        for record in calls:
            sig = call_signature(record)
            self.counts[sig] = self.counts.get(sig, 0) + 1
            if self.counts[sig] > MAX_SAME_CALL:
                return current, "multiple"
        return current, ""


@dataclass
class Situation:
    """The task's fields of the agent's system prompt."""

    users: str
    query: str
    context: str
    time: str


class AgentSide:
    """The agent of one chat: its table, its call ids, its repetition guard."""

    def __init__(self, episode: Episode, texts: Texts, situation: Situation,
                 max_iterations: int) -> None:
        self.episode = episode
        self.texts = texts
        self.situation = situation
        self.max_iterations = max(1, max_iterations)
        self.table = "{}"          # the table as shown in the system prompt
        self.table_data: dict[str, Any] | None = None
        self.ids = CallIds()
        self.guard = RepetitionGuard()
        self.last_request: list[ChatMessage] = []

    def system(self) -> str:
        s = self.situation
        block = self.texts.render("agent_table_block", table=self.table)
        return self.texts.render("agent_system", users=s.users, query=s.query,
                                 context=s.context, time=s.time, table_block=block)

    def take_table(self, text: str) -> bool:
        """Replace the table when `text` carries one that differs; whether it did."""
        table = parse_agent_table(text)
        if table is None:
            return False
        shown = json.dumps(table, ensure_ascii=False, indent=2)
        if shown == self.table:
            return False
        self.table, self.table_data = shown, table
        return True

    async def refresh(self, history: Sequence[Mapping[str, Any]]) -> None:
        """The internal table refresh (never in the chat)."""
        ep = self.episode
        request = self.texts.render("agent_table_request", chat=outward_text(history),
                                    ask=self.texts.text("agent_table_ask"))
        msgs = [ChatMessage(role="system", content=self.system()),
                ChatMessage(role="user", content=request)]
        reply = await ask(ep, "agent", ep.ctx.agent, msgs)
        ep.count("table_refreshes")
        self.take_table(reply.content or "")

    async def turn(self, history: Sequence[Mapping[str, Any]], *, mentioned: bool = False,
                   instruction: str = "") -> tuple[str, list[dict[str, Any]]]:
        """One agent turn on the chat `history`: (its reply, its chat entries), not committed
        (the caller decides what enters the chat)."""
        ep = self.episode
        system = self.system()
        if mentioned:
            system += self.texts.text("agent_mentioned")
        if instruction:
            system += f"\n\n{instruction}"
        messages = [ChatMessage(role="system", content=system),
                    *agent_messages(history, self.texts, self.ids)]
        self.last_request = messages
        entries: list[dict[str, Any]] = []
        previous: frozenset[tuple[str, str]] | None = None
        self.guard.reason = reason = ""
        for _ in range(self.max_iterations):
            msg = await ask(ep, "agent", ep.ctx.agent, messages, tools=ep.ctx.sandbox.tools)
            text = msg.content or ""
            entries.append(message(AGENT, text, has_tool_calls=bool(msg.tool_calls)))
            if not msg.tool_calls:
                ep.final_answer = text
                return text, entries
            records = await self._run_tools(msg.tool_calls)
            messages.append(ChatMessage(role="assistant", content=msg.content or "",
                                        tool_calls=[_wire_call(c) for c in msg.tool_calls]))
            for record in records:
                messages.append(ChatMessage(role="tool", content=record.content,
                                            tool_call_id=record.call_id, name=record.name))
                entries.append({"type": "tool_call", "name": record.name,
                                "arguments": json.dumps(arguments_object(record.arguments),
                                                        ensure_ascii=False)})
                entries.append({"type": "tool_result", "name": record.name,
                                "result": record.content,
                                "error": record.error_category is not None})
            previous, reason = self.guard.check(previous, records)
            if reason:
                break
        forced = [ChatMessage(role="system", content=system + self.texts.text(
            "agent_force_finish")), *messages[1:]]
        reply = await ask(ep, "agent", ep.ctx.agent, forced)
        text = reply.content or ""
        ep.count("forced_replies")
        entries.append(message(AGENT, text))
        ep.final_answer = text
        self.guard.reason = reason
        return text, entries

    async def _run_tools(self, calls: list[ToolCall]) -> list[ToolCallRecord]:
        ep = self.episode
        step = ep.n_agent_calls - 1
        records = []
        for call in calls:
            t0 = time.perf_counter()
            name = call.function.name if call.function is not None else ""
            raw = (call.function.arguments if call.function is not None else "") or ""
            args = arguments_object(raw)
            if not name:
                outcome = _NO_NAME
            elif "raw_arguments" in args:
                outcome = ToolOutcome(content=self._bad_arguments(str(args["raw_arguments"])),
                                      source="error", error_category="malformed_json")
            else:
                outcome = await ep.ctx.sandbox.call(name, raw, task_time=ep.task_time)
            record = ToolCallRecord(
                call_id=call.id, name=name, arguments=raw,
                valid=outcome.error_category not in _INVALID, source=outcome.source,
                content=outcome.content, error_category=outcome.error_category,
                latency_s=time.perf_counter() - t0, step=step)
            ep.tool_calls.append(record)
            records.append(record)
        ep.timings["tool"] = ep.timings.get("tool", 0.0) + sum(r.latency_s for r in records)
        return records

    def _bad_arguments(self, raw: str) -> str:
        shown = raw[:BAD_ARGUMENTS_SHOWN] + "..." if len(raw) > BAD_ARGUMENTS_SHOWN else raw
        return json.dumps({"error": self.texts.render("agent_bad_arguments", raw=shown)},
                          ensure_ascii=False)


_INVALID = frozenset({"malformed_json", "unknown_tool", "unknown_parameter", "missing_required",
                      "wrong_type", "bad_enum", "out_of_range"})


def _wire_call(call: ToolCall) -> ToolCall:
    """A call of this turn as the reference sends it back: the model's id, the arguments
    re-serialised (`json.dumps` defaults; not-JSON text as {"raw_arguments": ...})."""
    name = call.function.name if call.function is not None else ""
    raw = (call.function.arguments if call.function is not None else "") or ""
    return ToolCall(id=call.id, function=FunctionCall(
        name=name, arguments=wire_arguments(arguments_object(raw))))
