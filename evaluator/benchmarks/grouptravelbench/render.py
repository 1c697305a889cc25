"""What each model of the group chat is sent, built from the chat record as the reference
builds it (its message layout; the texts come from the prompt set, `prompting.Texts`).

- The agent's view (`agent_messages`): its own messages as assistant messages (a step with
  tool calls as an assistant message with those calls, re-serialised from the recorded
  arguments, then one tool message per result, named after the tool), everyone else's
  messages between two agent messages merged into one user message of `Role: text` lines.
  Recorded calls get the ids `call_hist_<n>`, numbered across the episode.
- A user's view (`user_messages`): the user's own messages as assistant messages, the other
  outward messages merged as above; tool steps and the agent's tool-calling steps unseen.
- Both views keep user and assistant turns alternating: a chat that starts with an assistant
  message gets the `chat_opening` text before it, two assistant messages in a row the
  `chat_gap` text between them.
- The table refresh reads the outward chat as `Role: text` lines (`outward_text`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from backends.types import ChatMessage, FunctionCall, ToolCall

from .chat import AGENT
from .prompting import Texts


@dataclass
class CallIds:
    """The ids of recorded tool calls in the agent's rebuilt view: `call_hist_<n>`, counting
    across every rebuild of one episode (as one reference process running one chat)."""

    n: int = 0

    def next(self) -> str:
        self.n += 1
        return f"call_hist_{self.n}"


def arguments_object(raw: str) -> dict[str, Any]:
    """A tool call's arguments as the reference keeps them: the parsed JSON object, or
    {"raw_arguments": text} when the text is not a JSON object."""
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        return {"raw_arguments": raw}
    return value if isinstance(value, dict) else {"raw_arguments": raw}


def wire_arguments(arguments: Mapping[str, Any]) -> str:
    """Arguments as the reference sends them back to the model (`json.dumps` defaults)."""
    return json.dumps(arguments)


def _is_msg(entry: Mapping[str, Any]) -> bool:
    return entry.get("type") == "message"


def _alternate(messages: list[ChatMessage], texts: Texts) -> list[ChatMessage]:
    out: list[ChatMessage] = []
    for msg in messages:
        if msg.role == "assistant":
            if not out:
                out.append(ChatMessage(role="user", content=texts.text("chat_opening")))
            elif out[-1].role == "assistant":
                out.append(ChatMessage(role="user", content=texts.text("chat_gap")))
        out.append(msg)
    return out


def agent_messages(history: Sequence[Mapping[str, Any]], texts: Texts,
                   ids: CallIds) -> list[ChatMessage]:
    """The agent's view of the chat (without the system message)."""
    out: list[ChatMessage] = []
    buffer: list[str] = []
    i = 0
    while i < len(history):
        entry = history[i]
        if _is_msg(entry) and entry.get("role") == AGENT:
            if buffer:
                out.append(ChatMessage(role="user", content="\n".join(buffer)))
                buffer = []
            content = entry.get("content", "") or ""
            if not entry.get("has_tool_calls", False):
                out.append(ChatMessage(role="assistant", content=content))
                i += 1
                continue
            calls: list[ToolCall] = []
            results: list[ChatMessage] = []
            i += 1
            while i < len(history) and history[i].get("type") in ("tool_call", "tool_result"):
                tool = history[i]
                if tool["type"] == "tool_call":
                    raw = tool.get("arguments", "{}")
                    args = arguments_object(raw) if isinstance(raw, str) else raw
                    calls.append(ToolCall(id=ids.next(), function=FunctionCall(
                        name=tool["name"], arguments=wire_arguments(args))))
                else:
                    call_id = calls[-1].id if calls else ids.next()
                    results.append(ChatMessage(role="tool", content=tool.get("result", ""),
                                               tool_call_id=call_id,
                                               name=tool.get("name", "unknown")))
                i += 1
            out.append(ChatMessage(role="assistant", content=content,
                                   tool_calls=calls or None))
            out.extend(results)
        elif _is_msg(entry):
            buffer.append(f"{entry['role']}: {entry['content']}")
            i += 1
        else:
            i += 1
    if buffer:
        out.append(ChatMessage(role="user", content="\n".join(buffer)))
    return _alternate(out, texts)


def user_messages(history: Sequence[Mapping[str, Any]], user: str,
                  texts: Texts) -> list[ChatMessage]:
    """One user's view of the chat (without the system message)."""
    out: list[ChatMessage] = []
    others: list[str] = []
    for entry in history:
        if not _is_msg(entry) or entry.get("has_tool_calls"):
            continue
        role, content = entry["role"], entry.get("content", "") or ""
        if role == user:
            if others:
                out.append(ChatMessage(role="user", content="\n".join(others)))
                others = []
            out.append(ChatMessage(role="assistant", content=content))
        else:
            others.append(f"{role}: {content}")
    if others:
        out.append(ChatMessage(role="user", content="\n".join(others)))
    return _alternate(out, texts)


def outward_text(history: Sequence[Mapping[str, Any]]) -> str:
    """The outward chat as `Role: text` lines (what the table refresh reads)."""
    return "\n".join(f"{e['role']}: {e['content']}" for e in history
                     if _is_msg(e) and not e.get("has_tool_calls"))


def history_before_last_message(history: Sequence[Mapping[str, Any]]
                                ) -> list[Mapping[str, Any]]:
    """The chat without its last message and anything after it (the post-plan refresh)."""
    for index in range(len(history) - 1, -1, -1):
        if _is_msg(history[index]):
            return list(history[:index])
    return list(history)
