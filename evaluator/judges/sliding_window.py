"""Rubric-based sliding-window evaluator (VitaBench, paper section 3.3 and appendix E).

The trajectory's turns (every non-system message) are cut into windows of `w` turns, adjacent
windows sharing `delta` turns. A boolean state per atomic rubric starts false; a window may set
a rubric true, and may set a true rubric back to false only when the agent overturned that
earlier correct result in the window (anything else leaves a true rubric true). The task
succeeds when every rubric ends true; the per-rubric states give rubric-level accuracy.

The per-window judge is a callable, so the state machine runs the same with the LLM judge
(`llm_window_judge`) and with a scripted judge in tests.

With `judge.window_final_state` the benchmark's rendering of the episode's final state (a
text, e.g. the database records it changed) is shown in every window's Environment section,
and the prompt version says so ("+state"); off (the default), prompts are unchanged.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from functools import cache
from pathlib import Path
from string import Template
from typing import Any

import msgspec

from backends.types import ChatMessage
from bench_data.types import Task
from evaluator.records import EpisodeRecord, Judgement

from .call import JudgeClient, JudgeFailed, call_judge
from .parse import WindowItem, parse_window
from .settings import JudgeSettings
from .transcript import conversation_turns, render_conversation, trajectory_hash

SLIDING_WINDOW_KIND = "sliding_window"
PROMPT_FILE = Path(__file__).with_name("prompts") / "sliding_window.txt"
_PROMPT_VERSION = "sliding-window-v1"


def prompt_version(w: int, delta: int, final_state: bool = False) -> str:
    """Window geometry and the final state shown change verdicts, so they are part of the
    judgement key."""
    return f"{_PROMPT_VERSION}+w{w}d{delta}" + ("+state" if final_state else "")


def settings_version(settings: JudgeSettings) -> str:
    """The prompt version of a judgement made with `settings`."""
    return prompt_version(settings.window_turns, settings.window_overlap,
                          settings.window_final_state)


FINAL_STATE_HEADING = "Final state after the conversation"


@cache
def _prompt() -> str:
    return PROMPT_FILE.read_text(encoding="utf-8")


def rubric_keys(rubrics: list[str]) -> list[str]:
    return [f"rubric_{i}" for i in range(len(rubrics))]


def make_windows(n_turns: int, w: int, delta: int) -> list[tuple[int, int]]:
    """[start, end) turn ranges: length w (the last may be shorter), neighbours share delta
    turns, together covering every turn. No turns, no windows."""
    if w < 1 or not 0 <= delta < w:
        raise ValueError(f"need w >= 1 and 0 <= delta < w, got w={w}, delta={delta}")
    windows: list[tuple[int, int]] = []
    start = 0
    while start < n_turns:
        end = min(start + w, n_turns)
        windows.append((start, end))
        if end == n_turns:
            break
        start = end - delta
    return windows


class RubricState(msgspec.Struct):
    """Persistent per-rubric state and the latest note explaining it."""

    satisfied: dict[str, bool]
    notes: dict[str, str]

    @classmethod
    def initial(cls, keys: list[str]) -> RubricState:
        return cls({k: False for k in keys}, {k: "" for k in keys})


def apply_window(state: RubricState, verdict: dict[str, WindowItem]) -> RubricState:
    """The state after one window. False -> true when the window satisfies the rubric;
    true -> false only when the window says the agent overturned it; otherwise unchanged."""
    satisfied = dict(state.satisfied)
    notes = dict(state.notes)
    for key, was in state.satisfied.items():
        item = verdict.get(key)
        if item is None:
            continue
        if not was and item.satisfied:
            satisfied[key] = True
            notes[key] = item.justification
        elif was and item.overturned:
            satisfied[key] = False
            notes[key] = item.justification
    return RubricState(satisfied, notes)


class WindowRequest(msgspec.Struct):
    """Everything one window's judge call needs."""

    index: int              # 1-based
    count: int
    first_turn: int         # 0-based, inclusive
    last_turn: int          # 0-based, inclusive
    turns: list[ChatMessage]
    rubrics: dict[str, str]  # key -> rubric text
    state: RubricState


# returns (verdict per rubric key, attempts, raw output); raises JudgeFailed
WindowJudge = Callable[[WindowRequest], Awaitable[tuple[dict[str, WindowItem], int, str]]]


def window_schema(keys: list[str]) -> dict[str, Any]:
    item = {
        "type": "object",
        "properties": {
            "rubric_key": {"type": "string", "enum": keys},
            "justification": {"type": "string"},
            "satisfied": {"type": "boolean"},
            "overturned": {"type": "boolean"},
        },
        "required": ["rubric_key", "justification", "satisfied", "overturned"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "rubrics": {"type": "array", "items": item, "minItems": len(keys),
                        "maxItems": len(keys)},
        },
        "required": ["rubrics"],
        "additionalProperties": False,
    }


def _environment(task: Task, final_state: str | None = None) -> str:
    lines = []
    if task.extra.get("time"):
        lines.append(f"Current time: {task.extra['time']}")
    env = task.extra.get("environment")
    if isinstance(env, dict):
        for loc in env.get("location", [])[:3] if isinstance(env.get("location"), list) else []:
            if isinstance(loc, dict) and loc.get("address"):
                lines.append(f"User location: {loc['address']}")
    text = "\n".join(lines) or "(none)"
    if final_state is not None:
        text += f"\n{FINAL_STATE_HEADING} (for checking what really happened):\n{final_state}"
    return text


def build_window_prompt(req: WindowRequest, task: Task, settings: JudgeSettings,
                        final_state: str | None = None) -> str:
    """One window's prompt; `final_state` is shown only when the settings ask for it."""
    rubrics = json.dumps(
        [
            {"rubric_key": k, "rubric": text, "satisfied": req.state.satisfied[k],
             "note": req.state.notes[k]}
            for k, text in req.rubrics.items()
        ],
        ensure_ascii=False,
        indent=1,
    )
    return Template(_prompt()).safe_substitute(
        window_turns=settings.window_turns,
        window_overlap=settings.window_overlap,
        window_index=req.index,
        window_count=req.count,
        first_turn=req.first_turn,
        last_turn=req.last_turn,
        environment=_environment(task, (final_state or "(none supplied)")
                                 if settings.window_final_state else None),
        instructions=task.instructions or "(not given)",
        rubrics=rubrics,
        window=render_conversation(req.turns, settings.max_transcript_chars, req.first_turn),
    )


def llm_window_judge(
    task: Task, client: JudgeClient, model: str, settings: JudgeSettings,
    final_state: str | None = None,
) -> WindowJudge:
    """`final_state`: the benchmark's text of the episode's final state (shown when
    `settings.window_final_state`; an empty state should be a text that says so)."""
    async def judge(req: WindowRequest) -> tuple[dict[str, WindowItem], int, str]:
        keys = list(req.rubrics)
        return await call_judge(
            client, model, build_window_prompt(req, task, settings, final_state),
            schema_name="rubric_window", schema=window_schema(keys),
            parse=lambda text: parse_window(text, keys), settings=settings,
        )

    return judge


async def evaluate_windows(
    record: EpisodeRecord, task: Task, judge: WindowJudge, w: int, delta: int
) -> tuple[RubricState, int, str]:
    """Run every window through `judge`; returns (final state, total attempts, raw outputs).
    Raises JudgeFailed when a window cannot be judged."""
    if not task.rubrics:
        raise ValueError(f"task {task.key} has no rubrics")
    keys = rubric_keys(task.rubrics)
    rubrics = dict(zip(keys, task.rubrics, strict=True))
    turns = conversation_turns(record)
    windows = make_windows(len(turns), w, delta)
    state = RubricState.initial(keys)
    attempts = 0
    raws: list[str] = []
    for i, (start, end) in enumerate(windows, 1):
        req = WindowRequest(i, len(windows), start, end - 1, turns[start:end], rubrics, state)
        try:
            verdict, n, raw = await judge(req)
        except JudgeFailed as exc:
            raise JudgeFailed(f"window {i}/{len(windows)}: {exc.detail}",
                              attempts + exc.attempts, exc.raw) from None
        attempts += n
        raws.append(raw)
        state = apply_window(state, verdict)
    return state, attempts, "\n\n".join(f"[window {i}]\n{r}" for i, r in enumerate(raws, 1))


async def judge_sliding_window(
    record: EpisodeRecord,
    task: Task,
    judge: WindowJudge,
    model: str,
    settings: JudgeSettings,
    thash: str | None = None,
) -> Judgement:
    """Judgement: scores = rubric key -> 0/1, score = 1 when all rubrics are satisfied."""
    base = {
        "unit": record.unit,
        "trajectory_hash": thash or trajectory_hash(record),
        "judge_model": model,
        "prompt_version": settings_version(settings),
        "kind": SLIDING_WINDOW_KIND,
    }
    try:
        state, attempts, raw = await evaluate_windows(
            record, task, judge, settings.window_turns, settings.window_overlap
        )
    except JudgeFailed as exc:
        return Judgement(**base, score=None, error=exc.detail, attempts=exc.attempts,
                         raw=exc.raw, created_at=time.time())
    scores = {k: 1.0 if v else 0.0 for k, v in state.satisfied.items()}
    return Judgement(**base, score=1.0 if all(state.satisfied.values()) else 0.0,
                     scores=scores, reasoning=state.notes, attempts=max(attempts, 1),
                     raw=raw, created_at=time.time())
