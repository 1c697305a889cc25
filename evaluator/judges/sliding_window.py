"""Rubric-based sliding-window evaluator (VitaBench, paper section 3.3 and appendix E), with
the semantics of the paper's public reference evaluator (`evaluator_traj.py` in the
Meituan LongCat repository; see docs/judges.md).

The trajectory's messages are cut into windows of `w` messages, adjacent windows sharing
`delta`. Every rubric starts false with an empty justification. One judge call per window, in
order, sees the rubrics with their status and justification after the previous window; for
every rubric it answers, the answer *is* the new state (status and justification both
replaced; the prompt tells the judge to keep a met rubric met unless the assistant undid it,
and to carry the evidence forward in the justification). A rubric it leaves out keeps its
state. A window that cannot be judged after its retries keeps the states as they were and
the next window goes on (recorded in the judgement's `warnings`); only when no window could
be judged is the judgement a judge error. The task succeeds when every rubric ends true.

The judge is told the task's time with its weekday (the reference's `system_time`) and
nothing of the database (the reference's `database` is always empty). With
`judge.window_final_state` the benchmark's rendering of the episode's final state (a text,
e.g. the database records it changed) is shown as well, and the prompt version says so
("+state").

Prompt layout: everything that depends only on the task (instructions, environment, rubric
texts, rules) comes first, so the windows of one trajectory, the trials of one task and any
re-judging share one cached prefix on the server; the window's number, the carried states
and the window's messages come last.

The per-window judge is a callable, so the state machine runs the same with the LLM judge
(`llm_window_judge`) and with a scripted judge in tests.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
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
_PROMPT_VERSION = "sliding-window-v3"


def prompt_version(w: int, delta: int, final_state: bool = False, rubric_set: str = "") -> str:
    """Window geometry, the final state shown and the rubric set judged change verdicts, so
    they are part of the judgement key."""
    return (f"{_PROMPT_VERSION}+w{w}d{delta}" + ("+state" if final_state else "")
            + (f"+rubrics-{rubric_set}" if rubric_set else ""))


def settings_version(settings: JudgeSettings) -> str:
    """The prompt version of a judgement made with `settings`."""
    return prompt_version(settings.window_turns, settings.window_overlap,
                          settings.window_final_state, settings.rubric_set)


FINAL_STATE_HEADING = "Final state after the conversation"
CHANGE_RULES = {
    "overturns": ("This includes cancelling an order that met the rubric, even when the user "
                  "asked for the cancellation."),
    "keeps": ("But when the user's own needs changed (for example the user cancels an order "
              "after it was placed), that is a change of need, not a mistake: a rubric met "
              "before stays met."),
}
"""What the judge is told about a user who deliberately changes a need (`$change_rule`):
"overturns" (the project's rule) or "keeps" (the VitaBench reference's)."""


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
    """The state after one window: each rubric the window answers takes the answer's status
    and justification (the reference overwrites both); the others keep theirs."""
    satisfied = dict(state.satisfied)
    notes = dict(state.notes)
    for key in state.satisfied:
        item = verdict.get(key)
        if item is not None:
            satisfied[key] = item.satisfied
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
        },
        "required": ["rubric_key", "justification", "satisfied"],
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


def task_time(task: Task) -> str:
    """The task's time with its weekday, as the reference's judge gets it ("2025-06-21
    11:20:00 Saturday"); the time alone when it is not in the task files' format."""
    raw = str(task.extra.get("time") or "").strip()
    if not raw:
        return ""
    try:
        return f"{raw} {datetime.strptime(raw, '%Y-%m-%d %H:%M:%S').strftime('%A')}"
    except ValueError:
        return raw


def _environment(task: Task) -> str:
    when = task_time(task)
    return f"Current time: {when}" if when else "(none)"


def _final_state_block(final_state: str | None) -> str:
    if final_state is None:
        return ""
    return (f"\n# {FINAL_STATE_HEADING} (for checking what really happened)\n"
            f"{final_state}\n")


def build_window_prompt(req: WindowRequest, task: Task, settings: JudgeSettings,
                        final_state: str | None = None, template: Template | None = None,
                        change_rule: str = "overturns") -> str:
    """One window's prompt; `final_state` is shown only when the settings ask for it.
    `template`: the prompt set's (default: the built-in file); `change_rule`: a key of
    CHANGE_RULES."""
    rubrics = "\n".join(f"- {k}: {text}" for k, text in req.rubrics.items())
    status = json.dumps(
        [{"rubric_key": k, "satisfied": req.state.satisfied[k],
          "justification": req.state.notes[k]} for k in req.rubrics],
        ensure_ascii=False, indent=1)
    shown = (final_state or "(none supplied)") if settings.window_final_state else None
    return (template or Template(_prompt())).safe_substitute(
        change_rule=CHANGE_RULES[change_rule],
        window_turns=settings.window_turns,
        window_overlap=settings.window_overlap,
        window_index=req.index,
        window_count=req.count,
        first_turn=req.first_turn,
        last_turn=req.last_turn,
        environment=_environment(task),
        instructions=task.instructions or "(not given)",
        rubrics=rubrics,
        final_state=_final_state_block(shown),
        status=status,
        window=render_conversation(req.turns, settings.max_transcript_chars, req.first_turn),
    )


def llm_window_judge(
    task: Task, client: JudgeClient, model: str, settings: JudgeSettings,
    final_state: str | None = None, template: Template | None = None,
    change_rule: str = "overturns",
) -> WindowJudge:
    """`final_state`: the benchmark's text of the episode's final state (shown when
    `settings.window_final_state`; an empty state should be a text that says so);
    `template`, `change_rule`: as `build_window_prompt` takes them."""
    async def judge(req: WindowRequest) -> tuple[dict[str, WindowItem], int, str]:
        keys = list(req.rubrics)
        prompt = build_window_prompt(req, task, settings, final_state, template, change_rule)
        return await call_judge(
            client, model, prompt,
            schema_name="rubric_window", schema=window_schema(keys),
            parse=lambda text: parse_window(text, keys), settings=settings,
        )

    return judge


class WindowsResult(msgspec.Struct):
    state: RubricState
    attempts: int
    raw: str
    failed: list[str]   # "window i/n: why" for each window that kept the states


async def evaluate_windows(
    record: EpisodeRecord, task: Task, judge: WindowJudge, w: int, delta: int,
    turns: list[ChatMessage] | None = None,
) -> WindowsResult:
    """Run every window through `judge` (module doc). `turns`: the messages to judge
    (default: the record's non-system messages). Raises JudgeFailed only when no window
    could be judged."""
    if not task.rubrics:
        raise ValueError(f"task {task.key} has no rubrics")
    keys = rubric_keys(task.rubrics)
    rubrics = dict(zip(keys, task.rubrics, strict=True))
    turns = conversation_turns(record) if turns is None else turns
    windows = make_windows(len(turns), w, delta)
    state = RubricState.initial(keys)
    attempts = 0
    raws: list[str] = []
    failed: list[str] = []
    first_failure: JudgeFailed | None = None
    for i, (start, end) in enumerate(windows, 1):
        req = WindowRequest(i, len(windows), start, end - 1, turns[start:end], rubrics, state)
        try:
            verdict, n, raw = await judge(req)
        except JudgeFailed as exc:
            attempts += exc.attempts
            failed.append(f"window {i}/{len(windows)}: {exc.detail}")
            raws.append(f"[window {i}: failed, states kept]\n{exc.raw}")
            first_failure = first_failure or exc
            continue
        attempts += n
        raws.append(f"[window {i}]\n{raw}")
        state = apply_window(state, verdict)
    if windows and len(failed) == len(windows):
        assert first_failure is not None
        raise JudgeFailed(f"every window failed; {failed[0]}", attempts, first_failure.raw)
    return WindowsResult(state, attempts, "\n\n".join(raws), failed)


async def judge_sliding_window(
    record: EpisodeRecord,
    task: Task,
    judge: WindowJudge,
    model: str,
    settings: JudgeSettings,
    thash: str | None = None,
    turns: list[ChatMessage] | None = None,
) -> Judgement:
    """Judgement: scores = rubric key -> 0/1, score = 1 when all rubrics are satisfied;
    `warnings` lists the windows that failed and kept the states."""
    base = {
        "unit": record.unit,
        "trajectory_hash": thash or trajectory_hash(record),
        "judge_model": model,
        "prompt_version": settings_version(settings),
        "kind": SLIDING_WINDOW_KIND,
    }
    try:
        result = await evaluate_windows(
            record, task, judge, settings.window_turns, settings.window_overlap, turns
        )
    except JudgeFailed as exc:
        return Judgement(**base, score=None, error=exc.detail, attempts=exc.attempts,
                         raw=exc.raw, created_at=time.time())
    state = result.state
    scores = {k: 1.0 if v else 0.0 for k, v in state.satisfied.items()}
    return Judgement(**base, score=1.0 if all(state.satisfied.values()) else 0.0,
                     scores=scores, reasoning=state.notes, attempts=max(result.attempts, 1),
                     raw=result.raw, warnings=result.failed, created_at=time.time())
