"""The data roles of an imported GroupTravelBench set (`prompting.DATA_ROLES`): the agent's tool
list, the tool simulator's, and the sandbox's error texts.

Read from the checkout's syntax trees, never executed:
- `agent_tools`: the reference's tool registry as its agent is offered it: the tool modules
  registered by `tools/__init__.py` (its `all_tools` list, kept when named in
  `tools/tool_list.py`'s `TOOL_NAMES`), each with the `name=` and `description=` of its
  constructor's `super().__init__(...)` call and its `input_schema` literal;
- `tool_simulator_tools`: `simulators/tool_prompt.py`'s `TOOLS_SCHEMAS` literal;
- `tool_errors`: the reference's error texts (`prompt_import_errors.py`).
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

from evaluator.prompt_import import ImportFailed, parse_source

from .prompt_import_errors import error_catalogue

REPOSITORY = "small-xiangcheng/GroupTravelbench"
_TOOLS = "group_travelbench/tools"
_SIM = "group_travelbench/simulators/tool_prompt.py"

def _constant(tree: ast.Module, rel: str, name: str) -> Any:
    """The literal value of the module-level constant `name`."""
    nodes = [n.value for n in tree.body if isinstance(n, ast.Assign)
             and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)]
    if len(nodes) != 1:
        raise ImportFailed(f"{rel}: expected one constant {name}, found {len(nodes)}")
    try:
        return ast.literal_eval(nodes[0])
    except ValueError:
        raise ImportFailed(f"{rel}: {name} is not a literal") from None


def _registered(checkout: Path) -> list[str]:
    """The tool modules' names in the order `register_all_tools` registers them."""
    rel = f"{_TOOLS}/__init__.py"
    tree = parse_source(checkout, rel, REPOSITORY)
    lists = [n.value for n in ast.walk(tree) if isinstance(n, ast.Assign)
             and any(isinstance(t, ast.Name) and t.id == "all_tools" for t in n.targets)]
    if len(lists) != 1 or not isinstance(lists[0], ast.List) \
            or not all(isinstance(e, ast.Name) for e in lists[0].elts):
        raise ImportFailed(f"{rel}: expected one list of tool names `all_tools`")
    names = [e.id for e in lists[0].elts if isinstance(e, ast.Name)]
    whitelist = _constant(parse_source(checkout, f"{_TOOLS}/tool_list.py", REPOSITORY),
                          f"{_TOOLS}/tool_list.py", "TOOL_NAMES")
    return [n for n in names if n in set(whitelist)]


def _tool(checkout: Path, module: str) -> dict[str, Any]:
    """One tool in the OpenAI format its `to_openai_format` gives."""
    rel = f"{_TOOLS}/{module}.py"
    tree = parse_source(checkout, rel, REPOSITORY)
    schemas = [n.value for n in ast.walk(tree) if isinstance(n, ast.Assign)
               and any(isinstance(t, ast.Name) and t.id == "input_schema" for t in n.targets)]
    inits = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Attribute) and n.func.attr == "__init__"
             and isinstance(n.func.value, ast.Call)
             and isinstance(n.func.value.func, ast.Name) and n.func.value.func.id == "super"]
    if len(schemas) != 1 or len(inits) != 1:
        raise ImportFailed(f"{rel}: expected one `input_schema = {{...}}` and one "
                           "`super().__init__(...)` call")
    keywords = {k.arg: k.value for k in inits[0].keywords}
    try:
        parameters = ast.literal_eval(schemas[0])
        name = ast.literal_eval(keywords["name"])
        description = ast.literal_eval(keywords["description"])
    except (KeyError, ValueError):
        raise ImportFailed(f"{rel}: the tool's name, description or input_schema is not a "
                           "literal") from None
    return {"type": "function",
            "function": {"name": name, "description": description, "parameters": parameters}}


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def data_files(checkout: Path) -> tuple[dict[str, str], dict[str, str]]:
    """file name -> text (data roles are read as they are: no `$` escaping), and its origin."""
    files = {
        "agent_tools.txt": _json([_tool(checkout, m) for m in _registered(checkout)]),
        "tool_simulator_tools.txt": _json(_constant(parse_source(checkout, _SIM, REPOSITORY),
                                                    _SIM, "TOOLS_SCHEMAS")),
        "tool_errors.txt": error_catalogue(checkout),
    }
    origin = {
        "agent_tools.txt": f"{REPOSITORY}:{_TOOLS}/__init__.py:all_tools, {_TOOLS}/*.py",
        "tool_simulator_tools.txt": f"{REPOSITORY}:{_SIM}:TOOLS_SCHEMAS",
        "tool_errors.txt": f"{REPOSITORY}:{_TOOLS}/*.py validators, core/tools.py, "
                           "agents/group_agent.py, simulators/tool_simulator.py",
    }
    return files, origin
