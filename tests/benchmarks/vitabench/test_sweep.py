"""Every task of both task files, every tool: scripted episodes (tests/…/scripts.py) run to the
end, answers are well-formed, and the same calls give the same answers (ids included)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from evaluator.benchmarks.vitabench.env import TaskDatabase, VitaEnvironment, tools_for

from .helpers import load_tasks
from .scripts import CREATES, note_ids, resolve, script


def _episode(raw: dict[str, Any], domains: tuple[str, ...]) -> list[tuple[str, Any]]:
    env = VitaEnvironment(TaskDatabase.load(raw, domains))
    ids: list[str] = []
    out = []
    for name, args in script(raw, domains):
        result = env.execute(name, json.dumps(resolve(args, ids)))
        assert result.error == (result.category not in (None, "refused")), (name, result)
        assert not result.error or result.content.startswith("Error: ")
        if name in CREATES:
            note_ids(result.content, ids)
        out.append((name, result))
    return out


@pytest.mark.parametrize("domain", ["delivery", "instore"])
def test_every_task_every_tool(domain: str) -> None:
    tasks = load_tasks(domain)
    called: set[str] = set()
    answered: set[str] = set()
    for task in tasks:
        for name, result in _episode(task["environment"], (domain,)):
            called.add(name)
            if result.category is None:
                answered.add(name)
    tools = {s.name for s in tools_for((domain,))}
    assert tools <= called
    assert tools == answered
    assert len(tasks) == 100


def test_same_calls_same_answers() -> None:
    for domain in ("delivery", "instore"):
        for task in load_tasks(domain)[:5]:
            first = _episode(task["environment"], (domain,))
            again = _episode(task["environment"], (domain,))
            assert first == again
