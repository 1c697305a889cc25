"""The agent's side of an episode as the TravelBench reference builds it
(`options.rendering = "reference"`; `core/messages.py`, `core/openai_client.py`,
`agents/assistant.py` at commit 445a29d).

What changes against the generic `Episode`:
- an assistant message whose text is empty (after the strip) carries no `content`;
- every tool message names its tool (`name`);
- once its calls ran, an assistant message's tool-call arguments are what the reference sends
  back: the JSON of the parsed arguments in Python's default form (ASCII escapes, ", " and ": "
  separators), or of {"raw_arguments": text} when they do not parse; the record's tool-call
  records keep the model's own text;
- the request's messages are encoded in the reference's shape: a tool call always with
  `"type": "function"` and its `arguments` (even "{}"), keys in the reference's order
  (`WireAssistant`, `WireTool`); the record keeps `ChatMessage`s, whose JSON says the same.
The conversions happen once per message, when it is first sent.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from backends.types import ChatMessage, ToolCall
from evaluator.protocols.base import RoleClient
from evaluator.protocols.loop import Episode


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


class WireTool(msgspec.Struct, omit_defaults=True):
    role: str
    tool_call_id: str
    name: str
    content: str
    tool_calls: None = None  # what readers of a request look at on every message


def resent_arguments(raw: str | None) -> str:
    """A call's arguments as the reference sends them back: `json.dumps` of what it parsed."""
    try:
        value = json.loads(raw or "")
    except ValueError:
        value = {"raw_arguments": raw}
    return json.dumps(value)


def wire(m: ChatMessage) -> Any:
    """One message in the reference's request shape."""
    if m.role == "assistant":
        calls = [WireCall(c.id, "function", WireFunction(c.function.name, c.function.arguments))
                 for c in m.tool_calls or ()]
        return WireAssistant("assistant", m.content, calls or None)
    if m.role == "tool":
        return WireTool("tool", m.tool_call_id or "", m.name or "", m.content or "")
    return m


class ReferenceEpisode(Episode):
    """An `Episode` whose agent requests and messages take the reference's shape."""

    __slots__ = ("_sent", "_wire")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._wire: list[Any] = []
        self._sent = 0  # messages of `self.messages` converted into `self._wire`

    async def call_model(self, role: str, client: RoleClient, messages: list[ChatMessage],
                         **kwargs: Any) -> ChatMessage:
        if messages is self.messages:
            self._wire += [wire(m) for m in self.messages[self._sent:]]
            self._sent = len(self.messages)
            messages = self._wire
        return await super().call_model(role, client, messages, **kwargs)

    async def agent_reply(self) -> ChatMessage:
        msg = await super().agent_reply()
        if not (msg.content and msg.content.strip()):
            msg.content = None
        return msg

    async def run_tools(self, calls: list[ToolCall]) -> None:
        await super().run_tools(calls)
        n = len(calls)
        for message, record in zip(self.messages[-n:], self.tool_calls[-n:], strict=True):
            message.name = record.name
        for call in calls:
            call.function.arguments = resent_arguments(call.function.arguments)
