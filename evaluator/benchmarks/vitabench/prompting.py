"""VitaBench's prompts: the agent's and the user simulator's system prompts (project wording,
files in `prompts/`), filled from the task. `PROMPT_VERSION` changes whenever their text or
how they are filled changes (it is recorded in every episode's `extra`)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from bench_data.types import Task

PROMPT_VERSION = "vitabench-protocol-v1"
STOP = "###STOP###"
"""Ends the episode in an agent reply; the user simulator ends with it too."""
USER_STOPS = ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")
"""Markers that end the episode in a user-simulator reply (the reference's set)."""
GREETING = "Hello, how can I help you?"
"""The agent's fixed opening: shown to the user simulator, not in the agent's context."""
_DIR = Path(__file__).parent / "prompts"


@cache
def _template(name: str) -> str:
    return (_DIR / name).read_text(encoding="utf-8").strip()


def _time(task: Task) -> str:
    env = task.extra.get("environment")
    time = task.extra.get("time") or (env.get("time", "") if isinstance(env, dict) else "")
    return str(time) or "unknown"


def _user_id(task: Task) -> str:
    env = task.extra.get("environment")
    user_id = env.get("user_id", "") if isinstance(env, dict) else ""
    return str(user_id) or "unknown"


def agent_system_prompt(task: Task) -> str:
    return (_template("agent_system.txt").replace("{time}", _time(task))
            .replace("{user_id}", _user_id(task)).replace("{stop}", STOP))


def user_system_prompt(task: Task) -> str:
    profile = task.extra.get("user_profile") or {}
    persona = "\n".join(f"- {k}: {v}" for k, v in profile.items() if v not in ("", None)) \
        if isinstance(profile, dict) else str(profile)
    instructions = str(task.extra.get("instruction_text") or task.instructions).strip()
    return (_template("user_system.txt").replace("{persona}", persona or "(not given)")
            .replace("{instructions}", instructions).replace("{stop}", STOP))
