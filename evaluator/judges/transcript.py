"""What a judge sees of a trajectory, and the trajectory's identity.

`trajectory_hash` is the key judgements are stored under: a SHA-256 over the canonical
msgspec encoding of the record's messages and tool-call records without timings, so that the
same trajectory always gets the same key and any change to what the agent said or saw gets a
new one.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import msgspec

from backends.types import ChatMessage
from evaluator.records import EpisodeRecord

_ENCODER = msgspec.json.Encoder(order="deterministic")


def trajectory_hash(record: EpisodeRecord) -> str:
    """Stable hash of messages + tool calls (not timings, usage or wall-clock fields)."""
    calls = [
        (c.call_id, c.name, c.arguments, c.valid, c.source, c.content, c.error_category, c.step)
        for c in record.tool_calls
    ]
    payload = _ENCODER.encode({"messages": record.messages, "tool_calls": calls})
    return hashlib.sha256(payload).hexdigest()[:32]


def _cut(text: str, limit: int) -> str:
    if limit and len(text) > limit:
        return text[:limit] + f" ...[{len(text) - limit} more characters cut]"
    return text


def render_message(msg: ChatMessage, limit: int = 0) -> str:
    """One message as judge-readable text."""
    parts: list[str] = []
    if msg.role == "tool":
        head = f"[tool result{' ' + msg.name if msg.name else ''}"
        head += f" for call {msg.tool_call_id}]" if msg.tool_call_id else "]"
        parts.append(f"{head}\n{_cut(msg.content or '', limit)}")
        return "\n".join(parts)
    if msg.content:
        parts.append(f"[{msg.role}]\n{_cut(msg.content, limit)}")
    for call in msg.tool_calls or ():
        parts.append(
            f"[{msg.role} tool call {call.id}] {call.function.name}"
            f"({_cut(call.function.arguments, limit)})"
        )
    if not parts:
        parts.append(f"[{msg.role}]\n(empty)")
    return "\n".join(parts)


def conversation_turns(record: EpisodeRecord) -> list[ChatMessage]:
    """The turns a judge looks at: every message except system prompts."""
    return [m for m in record.messages if m.role != "system"]


def render_conversation(messages: list[ChatMessage], limit: int = 0, start: int = 0) -> str:
    """Numbered transcript; `start` is the number of the first message (windows keep the
    trajectory-wide numbering)."""
    return "\n\n".join(
        f"--- turn {i} ---\n{render_message(m, limit)}" for i, m in enumerate(messages, start)
    )


def render_tools(tools: list[dict[str, Any]] | None) -> str:
    """Tool list for the prompt: name, description and parameter schema per tool."""
    if not tools:
        return "(not provided; judge from the calls made and their results)"
    lines = []
    for t in tools:
        fn = t.get("function", t)
        params = json.dumps(fn.get("parameters", {}), ensure_ascii=False, sort_keys=True)
        lines.append(f"- {fn.get('name', '?')}: {fn.get('description', '')}\n  parameters: {params}")
    return "\n".join(lines)


def first_user_text(record: EpisodeRecord) -> str:
    for m in record.messages:
        if m.role == "user" and m.content:
            return m.content
    return ""
