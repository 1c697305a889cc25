"""`agentsweep prompts import --bench grouptravelbench`: a prompt set from a local checkout of
the GroupTravelBench reference (github.com/small-xiangcheng/GroupTravelbench).

The reference keeps its long prompts as module constants and the short texts (the reminders,
the compromise attitudes, the judge transcript's lines, ...) inside its functions. `SOURCES`
says where each of this benchmark's roles is: a constant, or a string in a function found by
its place in the code (an assignment, a keyword argument, a call's argument, a dict value, ...,
counted in source order); nothing is executed (`ast`). Placeholders become ours (`$name`),
literal dollars `$$`, and a text the reference sends unformatted keeps its braces as the model
sees them. The tool simulator's prompt comes from `simulators/tool_prompt.py` (the same texts as
TravelBench's). The generic machinery (`evaluator.prompt_import`) checks and writes the set.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from evaluator.prompt_import import (
    ImportFailed,
    Part,
    Source,
    _format_parts,
    _fstring_parts,
    git_commit,
    import_target,
    parse_source,
    simulator_file,
    write_set,
)

from .prompting import PROMPT_ROLES

REPOSITORY = "small-xiangcheng/GroupTravelbench"

_A = "group_travelbench/agents/multi_prompt.py"
_G = "group_travelbench/agents/group_agent.py"
_U = "group_travelbench/simulators/multi_prompt.py"
_S = "group_travelbench/simulators/multi_user_simulator.py"
_M = "group_travelbench/utils/multi_util.py"
_JP = "group_travelbench/evaluation/llm_judge_prompt.py"
_J = "group_travelbench/evaluation/llm_judge.py"
_T = "group_travelbench/simulators/tool_prompt.py"
_FMT = "format_conversation_for_judge"
_JUDGE_FIELDS = {"QUERY": "query", "CONTEXT": "context", "USER_NAMES": "users",
                 "EFFECTIVE_PREFERENCES": "preferences", "CONVERSATION_HISTORY": "conversation"}

SOURCES: dict[str, Source] = {
    "agent_system": Source(_A, ("const", "MULTI_USER_AGENT_SYSTEM_PROMPT"), "format", {
        "user_list_description": "users", "query": "query", "context": "context",
        "time": "time", "preference_table_block": "table_block"}),
    "agent_table_block": Source(_G, ("assign", "_build_system_prompt",
                                     "preference_table_block"), "fstring",
                                {"self.preference_table": "table"}),
    "agent_mentioned": Source(_G, ("augassign", "generate_response", "system_content", "0"),
                              "plain"),
    "agent_table_request": Source(_G, ("assign", "generate_preference_summary", "user_content"),
                                  "fstring", {"shared_context_str": "chat",
                                              "MULTI_USER_AGENT_PREFERENCE_SUMMARY_PROMPT":
                                              "ask"}),
    # sent as it is written, never formatted: the doubled braces reach the model
    "agent_table_ask": Source(_A, ("const", "MULTI_USER_AGENT_PREFERENCE_SUMMARY_PROMPT"),
                              "plain"),
    "agent_convergence": Source(_A, ("const", "MULTI_USER_AGENT_CONVERGENCE_PROMPT"), "plain"),
    "agent_final_plan": Source(_A, ("const", "MULTI_USER_AGENT_FINAL_PLAN_PROMPT"), "plain"),
    "agent_final_directive": Source(_G, ("dictvalue", "generate_final_plan", "content", "0"),
                                    "fstring", {"MULTI_USER_AGENT_FINAL_PLAN_PROMPT": "ask"}),
    "agent_force_finish": Source(_A, ("const", "MULTI_USER_AGENT_FORCE_FINISH_INSTRUCTION"),
                                 "plain"),
    "agent_bad_arguments": Source(_G, ("dictvalue", "generate_response", "error", "0"),
                                  "fstring", {"display_raw": "raw"}),
    "chat_opening": Source(_M, ("keyword", "_ensure_alternation", "content", "0"), "plain"),
    "chat_gap": Source(_M, ("keyword", "_ensure_alternation", "content", "1"), "plain"),
    "user_system": Source(_U, ("const", "MULTI_USER_USER_SYSTEM_PROMPT"), "format", {
        "user_name": "name", "user_list_description": "users", "query": "query",
        "time": "time", "user_preference": "preference", "compromise_block": "compromise"}),
    "user_compromise_yes": Source(_S, ("assign", "_build_system_prompt", "compromise_block",
                                       "0"), "plain"),
    "user_compromise_no": Source(_S, ("assign", "_build_system_prompt", "compromise_block",
                                      "1"), "plain"),
    "user_mentioned": Source(_S, ("augassign", "generate_response", "system_content", "0"),
                             "plain"),
    "judge_system": Source(_JP, ("const", "SYSTEM_PROMPT"), "plain"),
    "judge": Source(_JP, ("const", "MULTI_AGENT_JUDGE_PROMPT"), "format", _JUDGE_FIELDS),
    "judge_tools_only": Source(_J, ("call", _FMT, "lines.append", "1"), "plain"),
    "judge_tool_call": Source(_J, ("call", _FMT, "lines.append", "3"), "fstring",
                              {"tool_name": "name"}),
    "judge_tool_arguments": Source(_J, ("call", _FMT, "lines.append", "4"), "fstring",
                                   {"arguments": "arguments"}),
    "judge_tool_error": Source(_J, ("call", _FMT, "lines.append", "5"), "fstring",
                               {"tool_name": "name", "result": "result"}),
    "judge_tool_result": Source(_J, ("call", _FMT, "lines.append", "6"), "fstring",
                                {"tool_name": "name"}),
    "judge_result_cut": Source(_J, ("concat", _FMT, "result"), "plain"),
    "judge_no_preferences": Source(_J, ("ifelse", "evaluate_single", "formatted_preferences"),
                                   "plain"),
    "meta_system": Source(_JP, ("const", "META_JUDGE_SYSTEM_PROMPT"), "plain"),
    "meta": Source(_JP, ("const", "META_JUDGE_PROMPT"), "format", {
        **_JUDGE_FIELDS, "EVALUATION_SCORES": "ratings", "EVALUATION_REASONING": "reasoning"}),
    "meta_rating": Source(_J, ("call", "_meta_judge", "reasoning_lines.append", "1"), "fstring",
                          {"rating": "rating"}),
    "meta_reasoning": Source(_J, ("call", "_meta_judge", "reasoning_lines.append", "2"),
                             "fstring", {"reasoning": "reasoning"}),
    "meta_no_reasoning": Source(_J, ("call", "_meta_judge", "dim_result.get", "0", "1"),
                                "plain"),
    "meta_no_rating": Source(_J, ("call", "_meta_judge", "dim_result.get", "1", "1"), "plain"),
    # the tool simulator's sections (`{name}` placeholders), as TravelBench's importer reads
    # the same constants
    "tool_simulator/system": Source(_T, ("const", "TOOL_SIMULATION_SYSTEM_PROMPT"), "format", {
        "tool_name": "tool_name", "tool_description": "tool_description",
        "tool_parameters": "tool_parameters"}),
    "tool_simulator/examples_header": Source(_T, ("const", "EXAMPLES_SECTION_TEMPLATE"),
                                             "format", {"num_examples": "num_examples"}),
    "tool_simulator/example": Source(_T, ("const", "SINGLE_EXAMPLE_TEMPLATE"), "format",
                                     {"index": "index", "params": "params", "result": "result"}),
    "tool_simulator/no_examples": Source(_T, ("const", "NO_EXAMPLES_TEMPLATE"), "format",
                                         {"tool_name": "tool_name"}),
    "tool_simulator/user": Source(_T, ("const", "TOOL_SIMULATION_USER_PROMPT"), "format",
                                  {"tool_name": "tool_name", "params_json": "params_json"}),
}


def _in_order(nodes: list[ast.AST]) -> list[Any]:
    return sorted(nodes, key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)))


def _function(tree: ast.Module, src: Source, name: str) -> list[ast.AST]:
    funcs = [n for n in ast.walk(tree)
             if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name]
    if not funcs:
        raise ImportFailed(f"{src.file}: no function {name}")
    return [n for f in funcs for n in ast.walk(f)]


def _pick(found: list[Any], index: str, what: str) -> Any:
    i = int(index)
    if len(found) <= i:
        raise ImportFailed(f"{what}: expected at least {i + 1} matching strings, found "
                           f"{len(found)}")
    return found[i]


def _is_text(node: Any) -> bool:
    return isinstance(node, ast.JoinedStr) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str))


def locate(tree: ast.Module, src: Source) -> Any:
    """The string node `src.where` names (module doc); ImportFailed naming it otherwise."""
    kind, *names = src.where
    what = f"{src.file}: {kind} {'.'.join(names)}"
    if kind == "const":
        nodes = [n.value for n in tree.body if isinstance(n, ast.Assign)
                 and any(isinstance(t, ast.Name) and t.id == names[0] for t in n.targets)]
        if not nodes:
            raise ImportFailed(f"{src.file}: no constant {names[0]}")
        return nodes[-1]
    inner = _in_order(_function(tree, src, names[0]))
    index = names[2] if len(names) > 2 else "0"
    if kind == "assign":
        found = [n.value for n in inner if isinstance(n, ast.Assign) and _is_text(n.value)
                 and any(isinstance(t, ast.Name) and t.id == names[1] for t in n.targets)]
    elif kind == "augassign":
        found = [n.value for n in inner if isinstance(n, ast.AugAssign) and _is_text(n.value)
                 and isinstance(n.target, ast.Name) and n.target.id == names[1]]
    elif kind == "keyword":
        found = [n.value for n in inner if isinstance(n, ast.keyword) and n.arg == names[1]
                 and _is_text(n.value)]
    elif kind == "dictvalue":
        found = [v for n in inner if isinstance(n, ast.Dict) for k, v in zip(n.keys, n.values,
                                                                             strict=True)
                 if isinstance(k, ast.Constant) and k.value == names[1] and _is_text(v)]
    elif kind == "call":
        arg = int(names[3]) if len(names) > 3 else 0
        found = [n.args[arg] for n in inner if isinstance(n, ast.Call)
                 and ast.unparse(n.func) == names[1] and len(n.args) > arg
                 and _is_text(n.args[arg])]
    elif kind == "concat":
        found = [n.value.right for n in inner if isinstance(n, ast.Assign)
                 and isinstance(n.value, ast.BinOp) and isinstance(n.value.op, ast.Add)
                 and _is_text(n.value.right)
                 and any(isinstance(t, ast.Name) and t.id == names[1] for t in n.targets)]
    elif kind == "ifelse":
        found = [n.value.orelse for n in inner if isinstance(n, ast.Assign)
                 and isinstance(n.value, ast.IfExp) and _is_text(n.value.orelse)
                 and any(isinstance(t, ast.Name) and t.id == names[1] for t in n.targets)]
    else:
        raise ImportFailed(f"{what}: unknown place kind {kind!r}")
    return _pick(found, index, what)


def parts(tree: ast.Module, src: Source) -> list[Part]:
    node = locate(tree, src)
    what = f"{src.file}: {'.'.join(src.where)}"
    if src.style == "fstring":
        if not isinstance(node, ast.JoinedStr):
            raise ImportFailed(f"{what}: not an f-string")
        return _fstring_parts(node, src, what)
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        raise ImportFailed(f"{what}: not a string constant")
    return [(False, node.value)] if src.style == "plain" else _format_parts(node.value, src,
                                                                              what)


def render(checkout: Path) -> tuple[dict[str, str], dict[str, str]]:
    """file name -> our template text, and file name -> where it came from."""
    trees: dict[str, ast.Module] = {}
    files: dict[str, str] = {}
    provenance: dict[str, str] = {}
    sim: dict[str, str] = {}
    for role, src in SOURCES.items():
        tree = trees.get(src.file) or parse_source(checkout, src.file, REPOSITORY)
        trees[src.file] = tree
        found = parts(tree, src)
        origin = f"{REPOSITORY}:{src.file}:{'.'.join(src.where[1:])}"
        if role.startswith("tool_simulator/"):
            sim[role.split("/", 1)[1]] = "".join(f"{{{t}}}" if ph else t for ph, t in found)
            provenance.setdefault("tool_simulator.txt", origin.rsplit(":", 1)[0])
            continue
        files[f"{role}.txt"] = "".join(f"${{{t}}}" if ph else t.replace("$", "$$")
                                       for ph, t in found)
        provenance[f"{role}.txt"] = origin
    sim["system"] += "{examples}"  # the reference appends the examples to the system prompt
    sim["example_separator"] = ""  # ... and the example blocks to each other
    files["tool_simulator.txt"] = simulator_file(sim)
    assert set(files) == {f"{r}.txt" for r in PROMPT_ROLES.roles}
    return files, provenance


def import_reference(checkout: Path, out: Path | None = None, name: str = "grouptravelbench",
                     force: bool = False) -> tuple[Path, dict[str, Any]]:
    """Write the prompt set of `checkout` to `out` (default `sets_dir()/name`); returns the set
    directory and its manifest. Never overwrites an existing set unless `force`."""
    checkout, out = import_target(checkout, out, name, REPOSITORY, force)
    files, provenance = render(checkout)
    manifest = {
        "name": name,
        "benchmark": "grouptravelbench",
        "source": {"repository": REPOSITORY, "path": str(checkout),
                   "commit": git_commit(checkout)},
        "placeholders": {role: dict(s.fields) for role, s in SOURCES.items() if s.fields},
    }
    return out, write_set(out, files, provenance, manifest, PROMPT_ROLES, force)
