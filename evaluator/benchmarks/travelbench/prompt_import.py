"""`agentsweep prompts import --bench travelbench`: a prompt set from a local checkout of the
TravelBench reference (github.com/small-xiangcheng/TravelBench).

The reference keeps its prompts as Python string constants (`str.format` templates), one
f-string and one string literal. `SOURCES` maps each onto a role of the TravelBench prompt set
(`$name` placeholders, or `{name}` in the simulator file); the generic machinery
(`evaluator.prompt_import`) reads them with `ast`, never executing them, and writes the set
with a manifest. Roles the reference does not have (the situation blocks of layout "prefix",
the judges' dimension definitions) are copied from the built-in set and marked so. The data
roles (the judges' and the simulator's tool lists, the validators' error texts) are read by
`prompt_import_data.py`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evaluator.prompt_import import (
    Source,
    add_builtin_roles,
    extract_parts,
    git_commit,
    import_target,
    parse_source,
    replace_literals,
    simulator_file,
    write_set,
)

from .prompt_import_data import data_files
from .prompting import PROMPT_ROLES

REPOSITORY = "small-xiangcheng/TravelBench"

_CONTEXT = {"CONTEXT_INFO": "context", "QUESTION_CONTENT": "query", "INTENDED_TOOL": "tools",
            "CONVERSATION_HISTORY": "conversation"}

_AGENT = "travelbench/agents/prompt.py"
_JUDGE = "travelbench/evaluation/prompt.py"
_SIM = "travelbench/simulators/prompt.py"
_TIME_CONTEXT = {"time": "time", "context": "context"}

SOURCES: dict[str, Source] = {
    "agent_single_turn": Source(_AGENT, ("const", "SINGLE_TURN_PROMPT"), "format", _TIME_CONTEXT),
    "agent_multi_turn": Source(_AGENT, ("const", "MULTI_TURN_PROMPT"), "format", _TIME_CONTEXT),
    "agent_unsolvable": Source(_AGENT, ("const", "UNSOLVED_PROMPT"), "format", _TIME_CONTEXT,
                               {"[Unsolved]": "tag"}),
    "agent_step_limit": Source("travelbench/agents/assistant.py",
                               ("keyword", "generate_response", "content"), "plain"),
    "user_simulator": Source(
        "travelbench/simulators/user_simulator.py", ("assign", "_build_system_prompt", "prompt"),
        "fstring",
        {"self.time": "time", "self.context": "context", "self.user_profile": "profile",
         "self.decomposed_query": "intent", "self.query": "query"},
        {"[Finish Conversation]": "finish_marker"}),
    "judge_system": Source(_JUDGE, ("const", "SYSTEM_PROMPT"), "plain"),
    "judge_rubric_single_turn": Source(_JUDGE, ("const", "PROMPT_SINGLE_TURN_REASONING"),
                                       "format", _CONTEXT),
    "judge_rubric_multi_turn": Source(_JUDGE, ("const", "PROMPT_MULTI_TURN_REASONING"),
                                      "format", _CONTEXT),
    "judge_meta_system": Source(_JUDGE, ("const", "META_JUDGE_SYSTEM_PROMPT"), "plain"),
    "judge_meta": Source(_JUDGE, ("const", "META_JUDGE_PROMPT"), "format",
                         {**_CONTEXT, "EVALUATION_SCORES": "ratings",
                          "EVALUATION_REASONING": "reasoning"}),
    # the simulator file's sections (`{name}` placeholders); the reference appends the
    # examples to the system prompt and concatenates the example blocks directly
    "tool_simulator/system": Source(
        _SIM, ("const", "TOOL_SIMULATION_SYSTEM_PROMPT"), "format",
        {"tool_name": "tool_name", "tool_description": "tool_description",
         "tool_parameters": "tool_parameters"}),
    "tool_simulator/examples_header": Source(_SIM, ("const", "EXAMPLES_SECTION_TEMPLATE"),
                                             "format", {"num_examples": "num_examples"}),
    "tool_simulator/example": Source(_SIM, ("const", "SINGLE_EXAMPLE_TEMPLATE"), "format",
                                     {"index": "index", "params": "params", "result": "result"}),
    "tool_simulator/no_examples": Source(_SIM, ("const", "NO_EXAMPLES_TEMPLATE"), "format",
                                         {"tool_name": "tool_name"}),
    "tool_simulator/user": Source(_SIM, ("const", "TOOL_SIMULATION_USER_PROMPT"), "format",
                                  {"tool_name": "tool_name", "params_json": "params_json"}),
}

FROM_BUILTIN = ("agent_background", "agent_situation", "judge_dimensions")
"""Roles the reference has no text for: copied from the built-in set."""



def import_reference(checkout: Path, out: Path | None = None, name: str = "travelbench",
                     force: bool = False) -> tuple[Path, dict[str, Any]]:
    """Write the prompt set of `checkout` to `out` (default `sets_dir()/name`); returns the set
    directory and its manifest. Never overwrites an existing set unless `force`."""
    checkout, out = import_target(checkout, out, name, REPOSITORY, force)
    files, provenance = render(checkout)
    add_builtin_roles(files, provenance, PROMPT_ROLES, FROM_BUILTIN)
    manifest = {
        "name": name,
        "benchmark": "travelbench",
        "source": {"repository": REPOSITORY, "path": str(checkout),
                   "commit": git_commit(checkout)},
        "placeholders": {role: {**s.fields, **{f"literal {k}": v for k, v in s.literals.items()}}
                         for role, s in SOURCES.items() if s.fields or s.literals},
    }
    return out, write_set(out, files, provenance, manifest, PROMPT_ROLES, force)


def render(checkout: Path) -> tuple[dict[str, str], dict[str, str]]:
    """file name -> our template text, and file name -> where it came from."""
    trees: dict[str, Any] = {}
    files: dict[str, str] = {}
    provenance: dict[str, str] = {}
    sim: dict[str, str] = {}
    for role, src in SOURCES.items():
        tree = trees.get(src.file) or parse_source(checkout, src.file, REPOSITORY)
        trees[src.file] = tree
        parts = replace_literals(extract_parts(tree, src), src)
        origin = f"{REPOSITORY}:{src.file}:{'.'.join(src.where[1:])}"
        if role.startswith("tool_simulator/"):
            sim[role.split("/", 1)[1]] = "".join(f"{{{t}}}" if ph else t for ph, t in parts)
            provenance.setdefault("tool_simulator.txt", origin.rsplit(":", 1)[0])
            continue
        files[f"{role}.txt"] = "".join(f"${{{t}}}" if ph else t.replace("$", "$$")
                                       for ph, t in parts)
        provenance[f"{role}.txt"] = origin
    sim["system"] += "{examples}"  # the reference appends the examples to the system prompt
    sim["example_separator"] = ""  # ... and the example blocks to each other
    files["tool_simulator.txt"] = simulator_file(sim)
    data, origins = data_files(checkout)
    files.update(data)
    provenance.update(origins)
    assert set(files) | {f"{r}.txt" for r in FROM_BUILTIN} == {
        f"{r}.txt" for r in PROMPT_ROLES.roles}
    return files, provenance
