"""Prompt files of the TravelBench protocols, loaded once at import and rendered per task.

Every prompt is a pure function of the task (and the protocol settings): no timestamps, trial
numbers or seeds. The agent's system prompt depends on the protocol settings only, and the task
(situation, language, request) comes in the first user message: system prompt and tool schemas,
the longest part of a request, are then byte-identical across every task of a protocol, so the
serving engine's prefix cache reuses them across tasks as well as across calls and trials. Templates use `string.Template` syntax
(`$name`); literal dollars are written `$$`.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from string import Template

from bench_data.types import Task, TravelBenchTask

from .base import ProtocolSettings

PROMPT_DIR = Path(__file__).with_name("prompts")
PROMPT_VERSION = "travelbench-protocols/2"

# template name -> the placeholders it must use (checked at load time)
_PLACEHOLDERS: dict[str, frozenset[str]] = {
    "agent_single_turn": frozenset(),
    "agent_multi_turn": frozenset(),
    "agent_unsolvable": frozenset({"tag"}),
    "agent_situation": frozenset({"time", "context", "language", "query"}),
    "user_simulator": frozenset(
        {"time", "context", "intent", "profile", "query", "finish_marker", "language"}
    ),
}


def _placeholders(template: Template, path: Path) -> frozenset[str]:
    names: set[str] = set()
    for match in template.pattern.finditer(template.template):
        if match.group("invalid") is not None:
            line = template.template.count("\n", 0, match.start("invalid")) + 1
            raise ValueError(f"{path}:{line}: invalid `$` placeholder (write `$$` for a dollar)")
        name = match.group("named") or match.group("braced")
        if name:
            names.add(name)
    return frozenset(names)


def load_templates(directory: Path = PROMPT_DIR) -> dict[str, Template]:
    """Read and check every prompt file; raise naming the file when one is missing or wrong."""
    templates: dict[str, Template] = {}
    for name, expected in _PLACEHOLDERS.items():
        path = directory / f"{name}.txt"
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise FileNotFoundError(f"prompt file {path} cannot be read: {exc}") from exc
        template = Template(text.rstrip("\n"))
        found = _placeholders(template, path)
        if found != expected:
            raise ValueError(
                f"{path}: placeholders {sorted(found)} differ from the expected {sorted(expected)}"
            )
        templates[name] = template
    return templates


TEMPLATES = load_templates()
PROMPT_DIGEST = hashlib.sha256(
    b"\0".join(TEMPLATES[n].template.encode() for n in sorted(TEMPLATES))
).hexdigest()[:12]
"""Content hash of the prompt files: changes whenever any prompt text changes."""


def _has_cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def reply_language(travel: TravelBenchTask, settings: ProtocolSettings) -> str:
    """The language replies must be written in: explicit setting, else the query's language."""
    if settings.language and settings.language != "auto":
        return settings.language
    return "Chinese" if _has_cjk(travel.query) else "English"


def travel_of(task: Task) -> TravelBenchTask:
    if task.travel is None:
        raise ValueError(
            f"task {task.key} (from {task.source or 'unknown source'}) has no TravelBench "
            "payload (`travel`); the TravelBench protocols cannot run it"
        )
    return task.travel


def _context(travel: TravelBenchTask) -> str:
    return travel.context.strip() or "(none)"


def agent_system_prompt(kind: str, settings: ProtocolSettings) -> str:
    """The agent's system prompt for `kind` in single_turn | multi_turn | unsolvable: the same
    for every task (the task is in `agent_first_message`)."""
    fields = {"tag": settings.unsolvable_tags[0]} if kind == "unsolvable" else {}
    return TEMPLATES[f"agent_{kind}"].substitute(fields)


def agent_first_message(task: Task, settings: ProtocolSettings) -> str:
    """The first user message: the situation (time, context, reply language) and the request."""
    travel = travel_of(task)
    return TEMPLATES["agent_situation"].substitute(
        time=travel.time,
        context=_context(travel),
        language=reply_language(travel, settings),
        query=travel.query,
    )


def user_system_prompt(task: Task, settings: ProtocolSettings) -> str:
    """The user simulator's system prompt (hidden intent and profile; never shown to the agent)."""
    travel = travel_of(task)
    return TEMPLATES["user_simulator"].substitute(
        time=travel.time,
        context=_context(travel),
        intent=travel.intent.strip() or travel.query,
        profile=(travel.user_profile or "").strip() or "(no particular preferences)",
        query=travel.query,
        finish_marker=settings.finish_marker,
        language=reply_language(travel, settings),
    )
