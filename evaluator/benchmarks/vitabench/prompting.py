"""VitaBench's prompts: the roles of its prompt sets and the agent's and user simulator's
system prompts, rendered per task.

Roles (`ROLES`; the built-in files are the project's own words, in `prompts/` and, for the
project-layout judge, `evaluator/judges/prompts/sliding_window.txt`):
- `agent_system` ($time; $stop may be used), `user_system` ($persona, $instructions);
- `judge_window_system` + `judge_window_user`: the judge's system and user message of one
  window under `options.rendering = "reference"` (the reference's two messages);
- `judge_window`: the judge's one message under the project rendering;
- `tool_descriptions` (data, JSON): what the agent is told about each tool; empty = the
  environment's own descriptions.

How a value is rendered into a template is the `rendering` option's (options.py): under
"reference" the persona is the Python repr of the task's profile and the instructions are the
task's text as given, as the reference fills them. `PROMPT_VERSION` changes whenever a built-in
text or the way templates are filled changes (records carry `prompt_version(settings)`).
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import cache
from pathlib import Path
from string import Template
from typing import Any

from bench_data.types import Task
from evaluator.prompt_sets import BUILTIN, PromptRoles, PromptSet, PromptSetError, RoleSpec

from .options import VitaOptions, options_of

PROMPT_VERSION = "vitabench-protocol-v2"
STOP = "###STOP###"
"""Ends the episode in an agent reply; the user simulator ends with it too."""
USER_STOPS = ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")
"""Markers that end the episode in a user-simulator reply (the reference's set)."""
GREETING = "Hello, how can I help you?"
"""The agent's fixed opening: shown to the user simulator, not in the agent's context."""
USER_STOP_RULE = ("When you may end the conversation, write {stop} alone as your message; "
                  "never write it before then.")
"""Appended to the user simulator's prompt with `options.user_stop_marker`."""
USER_ID_LINE = "The user's id: {user_id}"
"""Appended to the agent's prompt with `options.agent_user_id`."""

_DIR = Path(__file__).parent / "prompts"
_JUDGE_DIR = Path(__file__).resolve().parents[2] / "judges" / "prompts"
_WINDOW = frozenset({"window_turns", "window_overlap", "change_rule"})


def _check(ps: PromptSet) -> None:
    tool_descriptions(ps)


ROLES = PromptRoles(
    templates={
        "agent_system": RoleSpec(frozenset({"time"}), frozenset({"stop"}),
                                 _DIR / "agent_system.txt", strip_newlines=True),
        "user_system": RoleSpec(frozenset({"persona", "instructions"}), frozenset({"stop"}),
                                _DIR / "user_system.txt", strip_newlines=True),
        "judge_window_system": RoleSpec(
            frozenset({"environment", "instructions", "window_index", "window_count"}), _WINDOW,
            _DIR / "judge_window_system.txt", strip_newlines=True),
        "judge_window_user": RoleSpec(frozenset({"window", "status"}), frozenset(),
                                      _DIR / "judge_window_user.txt"),
        "judge_window": RoleSpec(
            frozenset({"window", "status"}),
            _WINDOW | {"environment", "instructions", "window_index", "window_count",
                       "first_turn", "last_turn", "rubrics", "final_state"},
            _JUDGE_DIR / "sliding_window.txt"),
    },
    data={"tool_descriptions": None},
    check=_check,
)


def prompt_set(ps: PromptSet | None) -> PromptSet:
    """`ps`, or the built-in set."""
    return ps if ps is not None else _builtin()


@cache
def _builtin() -> PromptSet:
    """The built-in set, read once per process (an immutable value)."""
    from evaluator.prompt_sets import load_prompt_set

    return load_prompt_set(BUILTIN, ROLES)


def tool_descriptions(ps: PromptSet | None) -> dict[str, dict[str, Any]] | None:
    """The set's description overrides for the environment (None: its own descriptions);
    PromptSetError naming the file when the JSON does not have the overrides' shape."""
    text = ps.texts.get("tool_descriptions", "") if ps is not None else ""
    if not text.strip():
        return None
    where = f"{ps.path / 'tool_descriptions.txt' if ps and ps.path else 'tool_descriptions'}"
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise PromptSetError(f"{where}: not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise PromptSetError(f"{where}: not a JSON object of tools")
    for name, entry in data.items():
        ok = (isinstance(entry, dict) and isinstance(entry.get("description", ""), str)
              and isinstance(entry.get("params", {}), dict)
              and all(isinstance(v, str | None) for v in entry.get("params", {}).values()))
        if not ok:
            raise PromptSetError(f"{where}: tool {name!r}: expected {{\"description\": text, "
                                 f"\"params\": {{name: text or null}}}}")
    return data


def prompt_version(settings: Any) -> str:
    """The records' `prompt_version`: the rules' version, the rendering when it is the
    reference's, and the prompt set when it is not the built-in one."""
    opts = options_of(getattr(settings, "options", None))
    base = PROMPT_VERSION + ("+ref" if opts.reference else "")
    ps = getattr(settings, "prompts", None)
    return ps.version(base) if ps is not None else base


def weekday(time: str) -> str:
    """The English weekday of a task time ("2025-06-21 11:20:00" -> "Saturday"); "" when the
    text is not in that format."""
    try:
        return datetime.strptime(time, "%Y-%m-%d %H:%M:%S").strftime("%A")
    except ValueError:
        return ""


def task_time(task: Task) -> str:
    env = task.extra.get("environment")
    time = task.extra.get("time") or (env.get("time", "") if isinstance(env, dict) else "")
    return str(time)


def _user_id(task: Task) -> str:
    env = task.extra.get("environment")
    user_id = env.get("user_id", "") if isinstance(env, dict) else ""
    return str(user_id) or "unknown"


def agent_time(task: Task, opts: VitaOptions) -> str:
    """The time the agent is told: with its weekday when `agent_weekday` (the reference:
    `time + " " + weekday`)."""
    time = task_time(task)
    if opts.agent_weekday:
        return f"{time} {weekday(time)}"
    return time or "unknown"


def agent_system_prompt(task: Task, settings: Any = None) -> str:
    opts = options_of(getattr(settings, "options", None))
    ps = prompt_set(getattr(settings, "prompts", None))
    text = _fill(ps, "agent_system", time=agent_time(task, opts), stop=STOP)
    if opts.agent_user_id:
        text += "\n\n" + USER_ID_LINE.format(user_id=_user_id(task))
    return text


def persona(task: Task, opts: VitaOptions) -> str:
    """The user profile: the reference's `str(user_profile)` (a Python dict repr) under the
    reference rendering, else one `- key: value` line per field."""
    profile = task.extra.get("user_profile") or {}
    if opts.reference:
        return str(profile)
    if not isinstance(profile, dict):
        return str(profile)
    lines = "\n".join(f"- {k}: {v}" for k, v in profile.items() if v not in ("", None))
    return lines or "(not given)"


def instructions(task: Task, opts: VitaOptions) -> str:
    """The user's instruction text (as given under the reference rendering, else stripped)."""
    text = str(task.extra.get("instruction_text") or task.instructions)
    return text if opts.reference else text.strip()


def user_system_prompt(task: Task, settings: Any = None) -> str:
    opts = options_of(getattr(settings, "options", None))
    ps = prompt_set(getattr(settings, "prompts", None))
    text = _fill(ps, "user_system", persona=persona(task, opts),
                 instructions=instructions(task, opts), stop=STOP)
    if opts.user_stop_marker:
        text += "\n\n" + USER_STOP_RULE.format(stop=STOP)
    return text


def _fill(ps: PromptSet, role: str, **values: str) -> str:
    template: Template = ps.templates[role]
    return template.substitute(values)
