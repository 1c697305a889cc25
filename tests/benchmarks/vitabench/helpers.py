"""Helpers for the VitaBench environment tests: the real task files, calls, result checks.

The tasks are read from `<repo>/../shared/data/vitabench/{delivery,instore}/tasks_en.json`
(never copied into the repository); tests that need them skip with the reason when absent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evaluator.benchmarks.vitabench.env import TaskDatabase, ToolResult, VitaEnvironment

VITA_DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "vitabench"
_CACHE: dict[str, list[dict[str, Any]]] = {}


def load_tasks(domain: str) -> list[dict[str, Any]]:
    path = VITA_DATA / domain / "tasks_en.json"
    if not path.is_file():
        pytest.skip(f"VitaBench task file not present at {path} (shared data, read-only)")
    if domain not in _CACHE:
        _CACHE[domain] = json.loads(path.read_text(encoding="utf-8"))
    return _CACHE[domain]


def make_env(environment: dict[str, Any], domains: str = "delivery", **kw: Any
             ) -> VitaEnvironment:
    return VitaEnvironment(TaskDatabase.load(environment, domains), **kw)


def run(env: VitaEnvironment, name: str, **arguments: Any) -> ToolResult:
    """One call as the agent makes it: arguments as a JSON string."""
    return env.execute(name, json.dumps(arguments))


def ok(result: ToolResult) -> str:
    assert not result.error and result.category is None, result
    return result.content


def refused(result: ToolResult) -> str:
    """A refusal answered as an ordinary result (the reference's assert or plain text)."""
    assert not result.error and result.category == "refused", result
    return result.content


def failed(result: ToolResult, category: str = "execution_error") -> str:
    """The reference's error answer: "Error: ..." with the error flag."""
    assert result.error and result.category == category, result
    assert result.content.startswith("Error: "), result
    return result.content


def first_id(text: str) -> str:
    import re

    found = re.search(r"(?:order_id:|book_id=|reservation_id=)((?:OT|OI|OO)[0-9a-f]{10})", text)
    assert found, text
    return found.group(1)
