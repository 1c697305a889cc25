"""The group chat's pure helpers: entries, outward messages, @-mentions, `[pass]`.

A chat history is a list of entries shaped as the reference records them:
`{"type": "message", "role": "User2" | "Agent", "content": str, "has_tool_calls": bool}`
plus the agent's `{"type": "tool_call" | "tool_result", ...}` entries. An entry without a
`type` counts as a message (the broadcast opening statements). A message is *outward* when it
is not an agent step that carries tool calls: users see outward messages only, and only the
last outward message can @-mention someone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

AGENT = "Agent"
"""The agent's role name in the chat (users are the task's member keys, e.g. "User1")."""

PASS_TOKEN = "[pass]"

_TRAILING_PASS = re.compile(r"(?:\s*\[pass\]\s*)+\Z", re.IGNORECASE)


def is_message(entry: Mapping[str, Any]) -> bool:
    return entry.get("type", "message") == "message"


def is_outward(entry: Mapping[str, Any]) -> bool:
    """A message users can see: any message except an agent step with tool calls."""
    return is_message(entry) and not entry.get("has_tool_calls")


def last_outward(history: Sequence[Mapping[str, Any]]) -> tuple[int, Mapping[str, Any]] | None:
    """(index, entry) of the latest outward message, or None."""
    for index in range(len(history) - 1, -1, -1):
        if is_outward(history[index]):
            return index, history[index]
    return None


def outward_messages(history: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """What a user sees of the chat: the outward messages, in order."""
    return [entry for entry in history if is_outward(entry)]


def has_news_since_last_spoke(speaker: str, history: Sequence[Mapping[str, Any]]) -> bool:
    """Whether someone else posted an outward message after `speaker`'s latest message (True
    when the speaker has not spoken yet). The scheduler skips a polled user without news."""
    last = -1
    for index in range(len(history) - 1, -1, -1):
        entry = history[index]
        if is_message(entry) and entry.get("role") == speaker:
            last = index
            break
    if last < 0:
        return True
    return any(is_outward(entry) and entry.get("role") != speaker
               for entry in history[last + 1:])


def detect_mention(text: str, role_names: Iterable[str]) -> str | None:
    """The role @-mentioned last in `text` (the question's addressee), or None.

    Longer names are tried first (so "@User10" is not read as "@User1"); a name must not be
    followed by an ASCII letter, digit or underscore, so "@User1你" counts but "@User1x" does
    not."""
    names = sorted({name for name in role_names if name}, key=len, reverse=True)
    if not names or not isinstance(text, str):
        return None
    pattern = "@(" + "|".join(re.escape(name) for name in names) + ")(?![A-Za-z0-9_])"
    found = None
    for match in re.finditer(pattern, text):
        found = match.group(1)
    return found


def is_pass(text: str) -> bool:
    """A user's reply that is exactly `[pass]` (after trimming): the user stays silent."""
    return isinstance(text, str) and text.strip() == PASS_TOKEN


def strip_trailing_pass(text: str) -> str:
    """Drop `[pass]` tokens (any case) trailing a substantive reply; a reply that is only
    `[pass]` tokens is returned unchanged so that it still reads as a pass."""
    stripped = _TRAILING_PASS.sub("", text)
    if not stripped.strip():
        return text
    return stripped.rstrip()


def message(role: str, content: str, *, has_tool_calls: bool = False) -> dict[str, Any]:
    """A chat message entry in the recorded shape."""
    return {"type": "message", "role": role, "content": content,
            "has_tool_calls": has_tool_calls}
