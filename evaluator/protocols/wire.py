"""Request messages in a reference's wire shape: what a benchmark's reference client puts in the
`messages` of its request body, for the benchmarks whose reference mode must send exactly that.

The generic request encoder writes `ChatMessage`s as they are, with msgspec's `omit_defaults`: a
tool call's default `"type": "function"` and an `"arguments"` of `"{}"` are left out, and a tool
message's keys come in the struct's order (role, content, tool_call_id, name). Records keep
`ChatMessage`s (their encoding is what trajectory hashes are made of), so a reference mode does
not change them: it converts each message of a request with `wire` just before sending.

`wire` writes what the reference clients of TravelBench and GroupTravelBench send (their
`core/messages.py`, `to_openai_format`): an assistant message with `role`, `content` (left out
when None), `tool_calls` (each with its `id`, `"type": "function"` and `function` with `name`
and `arguments`, always), then, with `empty_reasoning`, `"reasoning_content": ""` and
`"reasoning": ""` on a message that carries tool calls (GroupTravelBench's client adds them for
DashScope's thinking mode); a tool message as `role`, `tool_call_id`, `name`, `content`; system
and user messages as they are.
"""

from __future__ import annotations

from typing import Any

import msgspec

from backends.types import ChatMessage


class WireFunction(msgspec.Struct):
    name: str
    arguments: str


class WireCall(msgspec.Struct):
    id: str
    type: str
    function: WireFunction


class WireAssistant(msgspec.Struct, omit_defaults=True):
    role: str
    content: str | None = None
    tool_calls: list[WireCall] | None = None
    reasoning_content: str | None = None
    reasoning: str | None = None


class WireTool(msgspec.Struct, omit_defaults=True):
    role: str
    tool_call_id: str
    name: str
    content: str
    tool_calls: None = None  # what readers of a request look at on every message


def wire(m: ChatMessage, *, empty_reasoning: bool = False) -> Any:
    """One message in the reference's request shape (module doc)."""
    if m.role == "assistant":
        calls = [WireCall(c.id, "function", WireFunction(c.function.name, c.function.arguments))
                 for c in m.tool_calls or ()]
        empty = "" if empty_reasoning and calls else None
        return WireAssistant("assistant", m.content, calls or None, empty, empty)
    if m.role == "tool":
        return WireTool("tool", m.tool_call_id or "", m.name or "", m.content or "")
    return m
