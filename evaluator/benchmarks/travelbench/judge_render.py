"""What the TravelBench judges are shown under `options.rendering = "reference"`: the
conversation, the tool list and the meta-judge's view of the first evaluation, laid out as the
reference lays them out (`utils/eval_util.py`, `evaluation/evaluate.py` at commit 445a29d), in
this project's code.

- conversation: one line per item, system messages left out: `user: <text>`; per tool call of an
  assistant message `assistant tool_calls: <name> (<arguments as indented JSON, non-ASCII
  kept>)`, then `assistant: <text>` when it has text; `tool_response: <tool name> <result>`.
  The arguments are the ones the reference stored: the call's JSON, or {"raw_arguments": text}
  when it does not parse;
- tool list: the rubric judge sees the JSON of the list (indent 2, non-ASCII kept), the
  meta-judge Python's rendering of it (the reference formats the list object into its prompt);
- the meta-judge's first evaluation: per dimension `- <dim>: <score 1..5 or None>` and
  `- average: <mean of the scores>`; per dimension `### <dim>`, `**Rating**: <rating text>`,
  `**Reasoning**: <reasoning text>` and an empty line.
"""

from __future__ import annotations

import json
from typing import Any

from backends.types import ChatMessage
from evaluator.records import EpisodeRecord

from .judge_answers import Dimension


def stored_arguments(raw: str | None) -> Any:
    """The arguments of a tool call as the reference keeps them."""
    try:
        return json.loads(raw or "")
    except ValueError:
        return {"raw_arguments": raw}


def tool_names(record: EpisodeRecord) -> dict[str, str]:
    """call id -> tool name, from the record's tool-call records."""
    return {c.call_id: c.name for c in record.tool_calls}


def conversation(turns: list[ChatMessage], names: dict[str, str]) -> str:
    lines: list[str] = []
    for m in turns:
        if m.role == "system":
            continue
        if m.role == "user":
            lines.append(f"user: {m.content or ''}")
        elif m.role == "assistant":
            for call in m.tool_calls or ():
                args = json.dumps(stored_arguments(call.function.arguments), ensure_ascii=False,
                                  indent=2)
                lines.append(f"assistant tool_calls: {call.function.name} ({args})")
            if m.content:
                lines.append(f"assistant: {m.content}")
        elif m.role == "tool":
            name = m.name or names.get(m.tool_call_id or "", "unknown")
            lines.append(f"tool_response: {name} {m.content or ''}")
    return "\n".join(lines)


def tools_json(tools: list[dict[str, Any]] | None) -> str:
    return json.dumps(tools or [], ensure_ascii=False, indent=2)


def tools_python(tools: list[dict[str, Any]] | None) -> str:
    return str(tools or [])


def meta_scores(dimensions: list[str], scores: dict[str, int | None],
                average: float | None) -> str:
    lines = [f"- {d}: {scores.get(d)}" for d in dimensions]
    lines.append(f"- average: {average}")
    return "\n".join(lines)


def meta_reasoning(dimensions: list[str], parsed: dict[str, Dimension]) -> str:
    lines: list[str] = []
    for d in dimensions:
        item = parsed.get(d, Dimension("", ""))
        lines += [f"### {d}", f"**Rating**: {item.rating}", f"**Reasoning**: {item.reasoning}",
                  ""]
    return "\n".join(lines)
