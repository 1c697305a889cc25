"""GroupTravelBench's process-quality judge (five dimensions) and its meta-judge.

What the judge reads, as in the reference: the request, the background, the travellers'
names, their *original* (pre-compromise) preference tables, and the whole chat with the
agent's tool calls (arguments) and tool results (each result cut at 2,000 characters, errors
marked). The five dimensions and the score arithmetic are in `rubric.py`: each rating 1..5,
normalised (r - 1) / 4; the `gtb_judge` Judgement keeps the raw ratings in `scores` and the
normalised mean (0..1) in `score`. The meta-judge (`gtb_meta`, run when
`judge.meta_judge` is on, as in the paper) reviews that judgement and rates it 1..5; its
`score` is s / 5 and scoring multiplies: S = 100 x mean((r - 1) / 4) x s / 5. A failed
meta-judge leaves S uncalibrated; a judge that never parses leaves the unit without a judge
score (the reference drops it from the judge's statistics). A run that crashed before the
agent said anything is rated 1 on every dimension (S = 0) without a call, and kept.

Nothing else is cut, as in the reference, unless `judge.context_tokens` is set: then the
context guard (`evaluator.judges.transcript`) shortens the longest chat texts (messages,
tool-call arguments, tool results) until the prompt and `sampling.max_tokens` fit, counting
with the judge server when it can, and the judgement says so under `_context_guard`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path
from string import Template
from typing import Any

from bench_data.types import Task
from evaluator.benchmarks.base import JudgeInput
from evaluator.benchmarks.grouptravelbench.data import GroupTravelTask
from evaluator.judges.call import JudgeFailed, call_judge, fit_prompt
from evaluator.judges.parse import (
    META_SCHEMA,
    RATING_LABELS,
    RATING_NAMES,
    parse_meta,
    parse_rubric,
    rubric_schema,
)
from evaluator.judges.transcript import CONTEXT_GUARD_NOTE
from evaluator.records import EpisodeRecord, Judgement

from .chat import AGENT
from .rubric import DIMENSION_KEYS, DIMENSIONS, score_values

JUDGE_KIND = "gtb_judge"
META_KIND = "gtb_meta"
JUDGE_VERSION = "gtb-judge-v1"
META_VERSION = "gtb-meta-v1"
RESULT_CHARS = 2000
"""A tool result longer than this is cut in the judge's transcript (the reference's cut)."""
CRASHED_NOTE = "_crashed"
PROMPTS = Path(__file__).with_name("prompts")


@cache
def _template(name: str) -> Template:
    return Template((PROMPTS / name).read_text(encoding="utf-8"))


def judge_view(chat: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chat entries as the judge sees them: tool-call arguments as text, each tool result
    cut at RESULT_CHARS (copies; the record is not touched)."""
    view: list[dict[str, Any]] = []
    for entry in chat:
        kind = entry.get("type", "message")
        if kind == "tool_call":
            args = entry.get("arguments", "")
            if not isinstance(args, str):
                args = json.dumps(args, ensure_ascii=False)
            entry = {**entry, "arguments": args}
        elif kind == "tool_result":
            result = str(entry.get("result", ""))
            if len(result) > RESULT_CHARS:
                result = result[:RESULT_CHARS] + "\n  ... (result cut)"
            entry = {**entry, "result": result}
        view.append(entry)
    return view


_TEXT_FIELD = {"message": "content", "tool_call": "arguments", "tool_result": "result"}
"""The text of each kind of chat entry the context guard may shorten."""


def view_texts(view: list[dict[str, Any]]) -> list[str]:
    return [str(e.get(_TEXT_FIELD.get(e.get("type", "message"), ""), "") or "") for e in view]


def with_texts(view: list[dict[str, Any]], texts: list[str]) -> list[dict[str, Any]]:
    """`view` with its entries' texts replaced by `texts` (copies of the entries changed)."""
    out = []
    for entry, text in zip(view, texts, strict=True):
        key = _TEXT_FIELD.get(entry.get("type", "message"))
        out.append({**entry, key: text} if key and text != (entry.get(key) or "") else entry)
    return out


def render_view(view: list[dict[str, Any]]) -> str:
    """Messages as `[role]: text`; an agent step with tool calls but no text as a marker
    line; each tool call with its arguments and each result (errors marked) indented; one
    blank line after every entry."""
    lines: list[str] = []
    for entry in view:
        kind = entry.get("type", "message")
        if kind == "message":
            role, text = entry.get("role", "unknown"), entry.get("content") or ""
            if role == AGENT and not text and entry.get("has_tool_calls"):
                lines.append(f"[{AGENT}]: (calls tools, see below)")
            elif role != AGENT or text:
                lines.append(f"[{role}]: {text}")
        elif kind == "tool_call":
            lines.append(f"  [tool call] {entry.get('name', 'unknown')}")
            lines.append(f"  arguments: {entry.get('arguments', '')}")
        elif kind == "tool_result":
            name, result = entry.get("name", "unknown"), entry.get("result", "")
            if entry.get("error"):
                lines.append(f"  [tool result, error] {name}: {result}")
            else:
                lines.append(f"  [tool result] {name}:")
                lines.append(f"  {result}")
        lines.append("")
    return "\n".join(lines)


def render_chat_for_judge(chat: list[dict[str, Any]]) -> str:
    """The whole chat as the judge reads it (nothing cut but tool results past RESULT_CHARS)."""
    return render_view(judge_view(chat))


def crashed(record: EpisodeRecord) -> bool:
    """No agent message in the chat: the run failed before any dialogue."""
    return not any(e.get("role") == AGENT for e in record.extra.get("chat") or [])


def _fields(record: EpisodeRecord, task: Task | None,
            conversation: str | None = None) -> dict[str, str]:
    payload = task.payload if task is not None else None
    if isinstance(payload, GroupTravelTask):
        query, context = payload.query, payload.context
        original: Any = payload.user_preferences
    else:
        query, context, original = "", "", {}
    users = record.extra.get("users") or list(original)
    prefs = (json.dumps(original, ensure_ascii=False, indent=2) if original
             else "(no reference preferences)")
    return {"query": query or "(none)", "context": context or "(none)", "users": ", ".join(users),
            "preferences": prefs,
            "conversation": (render_chat_for_judge(record.extra.get("chat") or [])
                             if conversation is None else conversation)}


def judge_prompt(record: EpisodeRecord, task: Task | None, conversation: str | None = None) -> str:
    dims = "\n\n".join(f"### {d.key} ({d.title})\n" + "\n".join(f"- {c}" for c in d.criteria)
                       for d in DIMENSIONS)
    example = json.dumps({k: {"reasoning": f"<evidence from the chat on {k}>",
                              "rating": "<" + " | ".join(RATING_LABELS) + ">"}
                          for k in DIMENSION_KEYS}, ensure_ascii=False)
    return _template("judge.txt").safe_substitute(dimensions=dims, example=example,
                                                   **_fields(record, task, conversation))


def meta_prompt(record: EpisodeRecord, task: Task | None, judged: Judgement,
                conversation: str | None = None) -> str:
    ratings = "\n".join(f"- {k}: {RATING_NAMES.get(int(judged.scores[k]), judged.scores[k])}"
                        if k in judged.scores else f"- {k}: N/A (not rated)"
                        for k in DIMENSION_KEYS)
    reasoning = "\n".join(f"- {k}: {v}" for k, v in judged.reasoning.items()
                          if not k.startswith("_")) or "(none)"
    return _template("meta_judge.txt").safe_substitute(ratings=ratings, reasoning=reasoning,
                                                       **_fields(record, task, conversation))


async def fitted(inp: JudgeInput, build: Callable[[str], str]) -> tuple[str, str]:
    """`build(conversation)` with the chat shortened by the context guard when
    `judge.context_tokens` is set and the prompt would not fit: (prompt, guard note or "").
    Tokens are counted by the judge server when it can (vLLM's /tokenize), else estimated."""
    view = judge_view(inp.record.extra.get("chat") or [])
    return await fit_prompt((lambda texts: build(render_view(with_texts(view, texts))),
                             view_texts(view)), inp.settings, inp.client, inp.model)


JUDGE_SCHEMA = rubric_schema(DIMENSION_KEYS)


async def run_judge(inp: JudgeInput) -> Judgement:
    record = inp.record
    base = {"unit": record.unit, "trajectory_hash": inp.thash, "judge_model": inp.model,
            "prompt_version": JUDGE_VERSION, "kind": JUDGE_KIND}
    if crashed(record):
        ones = {k: 1.0 for k in DIMENSION_KEYS}
        return Judgement(**base, score=0.0, scores=ones,
                         reasoning={CRASHED_NOTE: "no agent message: rated 1 everywhere"},
                         created_at=time.time())
    prompt, guard = await fitted(inp, lambda chat: judge_prompt(record, inp.task, chat))
    notes = {CONTEXT_GUARD_NOTE: guard} if guard else {}
    try:
        verdict, attempts, raw = await call_judge(
            inp.client, inp.model, prompt, schema_name=JUDGE_KIND,
            schema=JUDGE_SCHEMA, parse=lambda text: parse_rubric(text, list(DIMENSION_KEYS)),
            settings=inp.settings)
    except JudgeFailed as exc:
        return Judgement(**base, score=None, error=exc.detail, attempts=exc.attempts,
                         raw=exc.raw, reasoning=notes, created_at=time.time())
    scores = {k: float(v) for k, v in verdict.ratings.items()}
    rated = score_values(scores)
    assert rated is not None  # parse_rubric returns at least one rating
    return Judgement(**base, score=rated.normalised_average / 100, scores=scores,
                     reasoning={**verdict.reasoning, **notes}, attempts=attempts, raw=raw,
                     created_at=time.time())


async def run_meta(inp: JudgeInput) -> Judgement:
    judged = inp.audited
    if judged is None or judged.score is None:
        raise ValueError("the meta-judge needs a successful judgement to review")
    record = inp.record
    base = {"unit": record.unit, "trajectory_hash": inp.thash, "judge_model": inp.model,
            "prompt_version": META_VERSION, "kind": META_KIND}
    prompt, guard = await fitted(inp, lambda chat: meta_prompt(record, inp.task, judged, chat))
    notes = {CONTEXT_GUARD_NOTE: guard} if guard else {}
    try:
        verdict, attempts, raw = await call_judge(
            inp.client, inp.model, prompt, schema_name=META_KIND, schema=META_SCHEMA,
            parse=parse_meta, settings=inp.settings)
    except JudgeFailed as exc:
        return Judgement(**base, score=None, error=exc.detail, attempts=exc.attempts,
                         raw=exc.raw, reasoning=notes, created_at=time.time())
    return Judgement(**base, score=verdict.rating / 5.0, scores={"meta": float(verdict.rating)},
                     reasoning={"meta": verdict.reasoning, **notes}, attempts=attempts, raw=raw,
                     created_at=time.time())
