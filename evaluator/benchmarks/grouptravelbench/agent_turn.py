"""One agent turn of the group chat: tool iterations, the repetition guard, the forced reply.

As in the reference, an agent turn is up to `max_iterations` model calls (the run's
`max_steps`, 20 in the paper profile). Every call that carries tool calls is recorded in the
chat as an agent message with `has_tool_calls` (users never see it) followed by one
`tool_call` and one `tool_result` entry per call; the reply without tool calls is the turn's
outward message. Two guards stop a tool loop:

- consecutive: a (tool name, canonical arguments) pair of this iteration was also called in
  the previous iteration of the same turn;
- multiple: a pair has been called more than `MAX_SAME_CALL` times in the whole episode.

Either guard, or running out of iterations, ends the loop with one more call *without tools*
whose system prompt asks for a reply from what was gathered (the forced reply); the guard that
fired is the turn's `RepetitionGuard.reason`. After a polled or @-mentioned agent turn the
protocol ends the chat at once on "multiple" (`multiple_repeated_tool_calls`) and on the
`MAX_REPETITIVE_TURNS`-th "consecutive" turn in a row (`consecutive_repeated_tool_calls`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from backends.types import ChatMessage
from evaluator.protocols.loop import Episode
from evaluator.records import ToolCallRecord

from .chat import AGENT, message

MAX_SAME_CALL = 2
"""A (tool, arguments) pair may be called this many times per episode; one more stops."""
MAX_REPETITIVE_TURNS = 2
FORCED_REPLY = ("\n\n[moderator] Tool use for this turn is over. Do not call any tool; reply "
                "to the group now with what you have already found.")


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



def tool_entries(records: list[ToolCallRecord]) -> list[dict[str, Any]]:
    """The chat entries of executed calls, in the reference's shape."""
    out: list[dict[str, Any]] = []
    for r in records:
        out.append({"type": "tool_call", "name": r.name, "arguments": r.arguments})
        out.append({"type": "tool_result", "name": r.name, "result": r.content,
                    "error": r.error_category is not None})
    return out


async def run_agent_turn(episode: Episode, history: list[dict[str, Any]],
                         guard: RepetitionGuard, max_iterations: int) -> str:
    """Run one agent turn on `episode` (whose last message is the news for the agent),
    appending its chat entries to `history` (the caller commits them to the chat or not);
    returns the outward reply."""
    previous: frozenset[tuple[str, str]] | None = None
    reason = ""
    for _ in range(max(1, max_iterations)):
        msg = await episode.agent_reply()
        text = (msg.content or "").strip()
        if not msg.tool_calls:
            history.append(message(AGENT, text))
            episode.final_answer = text
            guard.reason = ""
            return text
        history.append(message(AGENT, text, has_tool_calls=True))
        n_before = len(episode.tool_calls)
        await episode.run_tools(msg.tool_calls)
        records = episode.tool_calls[n_before:]
        history.extend(tool_entries(records))
        previous, reason = guard.check(previous, records)
        if reason:
            break
    return await _forced_reply(episode, history, guard, reason)


async def _forced_reply(episode: Episode, history: list[dict[str, Any]],
                        guard: RepetitionGuard, reason: str) -> str:
    """One call without tools, its system prompt extended by the forced-reply instruction."""
    msgs = list(episode.messages)
    msgs[0] = ChatMessage(role="system", content=(msgs[0].content or "") + FORCED_REPLY)
    episode.n_agent_calls += 1
    reply = await episode.call_model("agent", episode.ctx.agent, msgs)
    text = (reply.content or "").strip()
    episode.messages.append(ChatMessage(role="assistant", content=text))
    episode.count("forced_replies")
    history.append(message(AGENT, text))
    episode.final_answer = text
    guard.reason = reason
    return text
