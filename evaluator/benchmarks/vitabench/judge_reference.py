"""The sliding-window judge as the VitaBench reference runs it (`options.rendering =
"reference"`; reference `evaluator_traj.py`, `TrajectoryEvaluator.calculate_reward`).

Per window one request of two messages: the system message (`judge_window_system`: the
environment as the reference's `env_info` dict, the user's instruction text, the window's
number and count) and the user message (`judge_window_user`: the window's messages as
`[i] role: text` lines, numbered from 1 over the whole trajectory with the agent's greeting
first, an assistant's tool calls appended as `name(arg=repr, ...)` joined by "."; and the
rubric states as the reference's JSON list). Every rubric starts "Not evaluated yet", false.

The answer is read by `options.judge_reader`: "reference" (judge_read.py: one call per
window; an answer the reference cannot use fails the trial, recorded as a judgement error
starting with TRIAL_RERUN, which the run reruns, see docs/vitabench.md) or "tolerant" (the
project's parser with its retries; a window that fails keeps the states).
"""

from __future__ import annotations

import json
import time
from functools import partial
from typing import Any

import msgspec

from backends.types import ChatMessage
from bench_data.types import Task
from evaluator.benchmarks.base import JudgeInput
from evaluator.judges.call import JudgeFailed, call_judge
from evaluator.judges.parse import parse_window
from evaluator.judges.sliding_window import CHANGE_RULES, SLIDING_WINDOW_KIND, make_windows
from evaluator.records import Judgement

from .judge_read import NOT_EVALUATED, Unreadable, apply_answer, final_verdicts, repair_loads
from .options import VitaOptions
from .prompting import prompt_set, task_time, weekday

TRIAL_RERUN = "trial rerun"
"""Prefix of a judgement error after which the reference reruns the whole trial."""


def reference_rubrics(task: Task, rubric_set: str) -> list[str]:
    """The rubric list judged: for "union" the reference's own (every expected state's
    `state_rubrics`, then `overall_rubrics`, exact-string de-duplicated, texts as given),
    else the loader's list of that name."""
    if rubric_set == "union":
        seen: dict[str, None] = {}
        for state in task.extra.get("expected_states") or []:
            rubrics = state.get("state_rubrics") if isinstance(state, dict) else None
            for rubric in rubrics or []:
                seen.setdefault(rubric, None)
        for rubric in task.extra.get("overall_rubrics") or []:
            seen.setdefault(rubric, None)
        return list(seen)
    return list((task.extra.get("rubric_sets") or {}).get(rubric_set) or task.rubrics)


def trajectory(greeting: str, messages: list[ChatMessage]) -> list[ChatMessage]:
    """What the reference judges: its greeting, then every message after the system prompt."""
    turns = [m for m in messages if m.role != "system"]
    return ([ChatMessage(role="assistant", content=greeting)] if greeting else []) + turns


def _arguments(raw: str | None) -> Any:
    """A call's arguments as the reference holds them (a dict); the text when it is not one."""
    try:
        value = json.loads(raw or "{}")
    except ValueError:
        return raw or ""
    return value if isinstance(value, dict) else raw


def window_lines(window: list[ChatMessage], start: int) -> str:
    """The reference's `_format_window_content`: `[global index] role: text` per message with
    text, the index counted from 1 over the trajectory."""
    lines = []
    for i, msg in enumerate(window):
        content = msg.content
        if msg.role == "assistant" and msg.tool_calls:
            calls = []
            for call in msg.tool_calls:
                fn = call.function
                args = _arguments(fn.arguments if fn is not None else "")
                shown = (", ".join(f"{k}={v!r}" for k, v in args.items())
                         if isinstance(args, dict) else str(args))
                calls.append(f"{fn.name if fn is not None else 'unknown_tool'}({shown})")
            content = f"{content} {'.'.join(calls)}" if content else ".".join(calls)
        if content:
            lines.append(f"[{start + i + 1}] {msg.role}: {content}")
    return "\n".join(lines)


def status_json(states: dict[str, dict[str, Any]]) -> str:
    """The reference's `_format_current_rubrics`."""
    return json.dumps([{"rubric_idx": k, "rubric": s["rubric"],
                        "justification": s["justification"],
                        "meetExpectation": s["meetExpectation"]} for k, s in states.items()],
                      ensure_ascii=False, indent=2)


def env_info(task: Task, database: list[Any]) -> str:
    """The reference's `env_info`, printed as a Python dict: the time with its weekday and
    the database, which the reference always leaves empty (`judge.window_final_state` puts
    the records the episode created or changed there)."""
    time_str = task_time(task)
    system_time = f"{time_str} {weekday(time_str)}" if time_str else ""
    return str({"system_time": system_time, "database": database})


def changed_records(record_extra: dict[str, Any]) -> list[Any]:
    changes = record_extra.get("db_changes") or {}
    out: list[Any] = []
    for table in changes.values():
        out.extend(table.values() if isinstance(table, dict) else table)
    return out


def window_messages(inp: JudgeInput, opts: VitaOptions, states: dict[str, dict[str, Any]],
                    turns: list[ChatMessage], index: int, count: int, start: int, end: int
                    ) -> tuple[str, str]:
    """(system text, user text) of one window."""
    assert inp.task is not None
    ps = prompt_set(inp.prompts)
    s = inp.settings
    database = changed_records(inp.record.extra) if s.window_final_state else []
    system = ps.templates["judge_window_system"].substitute(
        environment=env_info(inp.task, database),
        instructions=str(inp.task.extra.get("instruction_text") or inp.task.instructions),
        window_index=str(index), window_count=str(count), window_turns=str(s.window_turns),
        window_overlap=str(s.window_overlap),
        change_rule=CHANGE_RULES["keeps" if opts.user_change_keeps_met else "overturns"])
    user = ps.templates["judge_window_user"].substitute(
        window=window_lines(turns[start:end], start), status=status_json(states))
    return system, user


async def judge_reference_layout(inp: JudgeInput, opts: VitaOptions, version: str
                                 ) -> Judgement:
    """The judgement of one trajectory in the reference's layout (module doc)."""
    assert inp.task is not None
    s = inp.settings
    rubrics = reference_rubrics(inp.task, s.rubric_set)
    states = {f"rubric_{i}": {"rubric": r, "justification": NOT_EVALUATED,
                              "meetExpectation": False} for i, r in enumerate(rubrics)}
    turns = trajectory(str(inp.record.extra.get("greeting") or ""), inp.record.messages)
    windows = make_windows(len(turns), s.window_turns, s.window_overlap)
    base = {"unit": inp.record.unit, "trajectory_hash": inp.thash, "judge_model": inp.model,
            "prompt_version": version, "kind": SLIDING_WINDOW_KIND}
    attempts, raws, failed = 0, [], []
    reference = opts.judge_reader == "reference"
    one_try = msgspec.structs.replace(s, max_attempts=1)
    for i, (start, end) in enumerate(windows, 1):
        system, user = window_messages(inp, opts, states, turns, i, len(windows), start, end)
        where = f"window {i}/{len(windows)}"
        try:
            if reference:
                raw, n, _ = await call_judge(
                    inp.client, inp.model, user, schema_name="rubric_window",
                    schema=_schema(states), parse=lambda t: t, settings=one_try, system=system)
                attempts += n
                raws.append(f"[{where}]\n{raw}")
                states = apply_answer(states, repair_loads(raw))
            else:
                items, n, raw = await call_judge(
                    inp.client, inp.model, user, schema_name="rubric_window",
                    schema=_schema(states), parse=partial(parse_window, rubric_keys=list(states)),
                    settings=s, system=system)
                attempts += n
                raws.append(f"[{where}]\n{raw}")
                for key, item in items.items():
                    states[key] = {**states[key], "justification": item.justification,
                                   "meetExpectation": item.satisfied}
        except JudgeFailed as exc:
            attempts += exc.attempts
            raws.append(f"[{where}: failed]\n{exc.raw}")
            if reference:
                return _error(base, f"{TRIAL_RERUN}: {where}: {exc.detail}", attempts, raws)
            failed.append(f"{where}: {exc.detail}")
        except Unreadable as exc:
            return _error(base, f"{TRIAL_RERUN}: {where}: {exc}", attempts, raws)
    if windows and len(failed) == len(windows):
        return _error(base, f"every window failed; {failed[0]}", attempts, raws)
    try:
        verdicts = final_verdicts(states) if reference else {
            k: bool(v["meetExpectation"]) for k, v in states.items()}
    except Unreadable as exc:
        return _error(base, f"{TRIAL_RERUN}: final states: {exc}", attempts, raws)
    scores = {k: 1.0 if v else 0.0 for k, v in verdicts.items()}
    notes = {k: str(v["justification"]) for k, v in states.items()}
    score = 1.0 if verdicts and all(verdicts.values()) else 0.0
    return Judgement(**base, score=score, scores=scores, reasoning=notes,
                     attempts=max(attempts, 1), raw="\n\n".join(raws), warnings=failed,
                     created_at=time.time())


def _schema(states: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Guided JSON (judge.structured_output) for the reference's answer: a list of items."""
    keys = list(states)
    item = {"type": "object", "properties": {
        "rubric_idx": {"type": "string", "enum": keys}, "rubric": {"type": "string"},
        "justification": {"type": "string"}, "meetExpectation": {"type": "boolean"}},
        "required": ["rubric_idx", "rubric", "justification", "meetExpectation"],
        "additionalProperties": False}
    return {"type": "array", "items": item, "minItems": len(keys), "maxItems": len(keys)}


def _error(base: dict[str, Any], error: str, attempts: int, raws: list[str]) -> Judgement:
    return Judgement(**base, score=None, error=error, attempts=attempts, raw="\n\n".join(raws),
                     created_at=time.time())
