"""Tool schemas shipped with benchmark data: an OpenAI function-format tool list (JSON array)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from bench_data.decoding import convert_element, iter_json_array
from bench_data.types import LoadIssue, TaskLoadError


class _FunctionSpec(msgspec.Struct, forbid_unknown_fields=False):
    name: str
    parameters: dict[str, Any]
    description: str = ""


class _ToolSpec(msgspec.Struct, forbid_unknown_fields=False):
    type: str
    function: _FunctionSpec


def check_tool_schemas(path: Path | str) -> tuple[list[dict[str, Any]], list[LoadIssue]]:
    """Read an OpenAI-function-format tool list; return (tools in file order, issues)."""
    path = Path(path)
    where = str(path)
    tools: list[dict[str, Any]] = []
    issues: list[LoadIssue] = []
    names: dict[str, int] = {}
    for index, (line, item) in enumerate(iter_json_array(path)):
        if isinstance(item, LoadIssue):
            issues.append(item)
            continue
        spec = convert_element(where, line, item, _ToolSpec, prefix=f"[{index}]")
        if isinstance(spec, LoadIssue):
            issues.append(spec)
            continue
        field = f"[{index}]"
        if spec.type != "function":
            issues.append(LoadIssue(where, line, f"{field}.type", "must be 'function'"))
        elif spec.function.parameters.get("type") != "object":
            issues.append(LoadIssue(where, line, f"{field}.function.parameters.type",
                                    "must be 'object'"))
        elif (name := spec.function.name) in names:
            issues.append(LoadIssue(where, line, f"{field}.function.name",
                                    f"duplicate tool {name!r} (first on line {names[name]})"))
        else:
            names[name] = line
            tools.append(item)
    return tools, issues


def load_tool_schemas(path: Path | str) -> list[dict[str, Any]]:
    """The tools from `tool_schemas.json`, in file order (the order the agent sees them).

    Raises TaskLoadError naming file, line and field if any entry is malformed.
    """
    tools, issues = check_tool_schemas(path)
    if issues:
        raise TaskLoadError(issues)
    return tools
