"""What GroupTravelBench's judges read, built as the reference builds it (its layout; the texts
come from the prompt set).

- The transcript (`transcript`): each chat entry followed by a blank line. A user's message as
  `[User2]: text`; the agent's message as `[Agent]: text` (a tool-calling step without text as
  the `judge_tools_only` line, an empty reply as nothing); each tool call as the
  `judge_tool_call` and `judge_tool_arguments` lines; each tool result cut at 2,000 characters
  (the `judge_result_cut` text appended), as the `judge_tool_error` line or as the
  `judge_tool_result` line followed by the indented result.
- The fields: the task's query and context as they are, the users joined by ", ", the
  *original* preference table of the task as indented JSON (`judge_no_preferences` when the
  task has none).
- The meta-judge's view of the first review: `- <dimension>: <rating 1..5>` lines and an
  `- average:` line, then per dimension a `### <dimension>` heading, the `meta_rating` and
  `meta_reasoning` lines and a blank line.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from bench_data.types import GroupTravelTask, Task
from evaluator.records import EpisodeRecord

from .chat import AGENT
from .prompting import Texts

RESULT_CHARS = 2000
"""A tool result longer than this is cut in the judge's transcript (the reference's cut)."""


def judge_view(chat: Sequence[Mapping[str, Any]], texts: Texts) -> list[dict[str, Any]]:
    """The chat entries as the judge reads them: tool-call arguments as text, each tool result
    cut at RESULT_CHARS (copies; the record is not touched)."""
    view: list[dict[str, Any]] = []
    for entry in chat:
        entry = dict(entry)
        kind = entry.get("type", "")
        if kind == "tool_call":
            args = entry.get("arguments", "")
            if isinstance(args, dict):
                args = json.dumps(args, ensure_ascii=False)
            entry["arguments"] = args
        elif kind == "tool_result":
            result = entry.get("result", "")
            if len(result) > RESULT_CHARS:
                result = result[:RESULT_CHARS] + texts.text("judge_result_cut")
            entry["result"] = result
        view.append(entry)
    return view


_TEXT_FIELD = {"message": "content", "tool_call": "arguments", "tool_result": "result"}
"""The text of each kind of chat entry the context guard may shorten."""


def view_texts(view: list[dict[str, Any]]) -> list[str]:
    return [str(e.get(_TEXT_FIELD.get(e.get("type", ""), ""), "") or "") for e in view]


def with_texts(view: list[dict[str, Any]], texts: list[str]) -> list[dict[str, Any]]:
    """`view` with its entries' texts replaced by `texts` (copies of the entries changed)."""
    out = []
    for entry, text in zip(view, texts, strict=True):
        key = _TEXT_FIELD.get(entry.get("type", ""))
        out.append({**entry, key: text} if key and text != (entry.get(key) or "") else entry)
    return out


def render_view(view: Sequence[Mapping[str, Any]], texts: Texts) -> str:
    lines: list[str] = []
    for entry in view:
        kind = entry.get("type", "")
        if kind == "message":
            role, content = entry.get("role", "unknown"), entry.get("content", "")
            if role == AGENT:
                if content:
                    lines.append(f"[{AGENT}]: {content}")
                if entry.get("has_tool_calls", False) and not content:
                    lines.append(texts.text("judge_tools_only"))
            else:
                lines.append(f"[{role}]: {content}")
        elif kind == "tool_call":
            name = entry.get("name", "unknown")
            lines.append(texts.render("judge_tool_call", name=name))
            lines.append(texts.render("judge_tool_arguments",
                                      arguments=str(entry.get("arguments", ""))))
        elif kind == "tool_result":
            name, result = entry.get("name", "unknown"), entry.get("result", "")
            if entry.get("error", False):
                lines.append(texts.render("judge_tool_error", name=name, result=result))
            else:
                lines.append(texts.render("judge_tool_result", name=name))
                lines.append(f"  {result}")
        lines.append("")
    return "\n".join(lines)


def transcript(chat: Sequence[Mapping[str, Any]], texts: Texts) -> str:
    """The whole chat as the judge reads it."""
    return render_view(judge_view(chat, texts), texts)


def judge_fields(record: EpisodeRecord, task: Task | None, texts: Texts) -> dict[str, str]:
    """The judge prompts' fields but the conversation."""
    payload = task.payload if task is not None else None
    if isinstance(payload, GroupTravelTask):
        query, context = payload.query, payload.context
        original: Any = payload.user_preferences
    else:
        query, context, original = "", "", {}
    users = record.extra.get("users") or list(original)
    prefs = (json.dumps(original, ensure_ascii=False, indent=2) if original
             else texts.text("judge_no_preferences"))
    return {"query": query, "context": context, "users": ", ".join(users),
            "preferences": prefs}


def meta_review(parsed: Mapping[str, Mapping[str, str]], scores: Mapping[str, int | None],
                dims: Sequence[str], texts: Texts) -> tuple[str, str]:
    """(ratings, reasoning) of the first review as the meta-judge reads them."""
    rated = [s for s in scores.values() if s is not None]
    average = sum(rated) / len(rated) if rated else "N/A"
    score_lines = [f"- {dim}: {scores.get(dim, 'N/A')}" for dim in dims]
    score_lines.append(f"- average: {average}")
    lines: list[str] = []
    for dim in dims:
        entry = parsed.get(dim, {})
        reasoning = entry.get("reasoning", texts.text("meta_no_reasoning"))
        rating = entry.get("rating", texts.text("meta_no_rating"))
        lines.extend([f"### {dim}", texts.render("meta_rating", rating=rating),
                      texts.render("meta_reasoning", reasoning=reasoning), ""])
    return "\n".join(score_lines), "\n".join(lines)
