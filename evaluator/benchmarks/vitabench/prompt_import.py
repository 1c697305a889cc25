"""`agentsweep prompts import --bench vitabench`: a prompt set from a local checkout of the
VitaBench reference (github.com/meituan-longcat/vitabench), English prompts.

Nothing of the checkout is executed. The reference keeps its prompts in YAML files of one
shape (`name:`, then a `chinese: |-` and an `english: |-` block scalar): `yaml_block` reads
the English block (block-scalar rules: indentation of the first line, blank lines kept,
chomping). The judge's per-window user message is an f-string in `evaluator_traj.py` and the
tool descriptions are dict literals in `*tools_schema.py`: both are read with `ast` (the dicts
with `ast.literal_eval`). Placeholders become the VitaBench roles' (`prompting.ROLES`); the
tool descriptions become `tool_descriptions.txt`, the environment's description overrides
(JSON), composed as the reference's tool schemas show them (its docstring layout as
`docstring_parser` reads it back). The project-layout judge prompt (`judge_window`), which the
reference has no text for, is copied from the built-in set and marked so.
"""

from __future__ import annotations

import ast
import json
import re
import string
from pathlib import Path
from typing import Any

from evaluator.prompt_import import (
    ImportFailed,
    Source,
    add_builtin_roles,
    extract_parts,
    git_commit,
    import_target,
    parse_source,
    write_set,
)

from .env.spec import ALL_TOOLS
from .prompting import ROLES

REPOSITORY = "meituan-longcat/vitabench"
LANGUAGE = "english"
_PROMPTS = "src/vita/prompts"

# role -> (YAML file, reference field -> our placeholder)
YAML_SOURCES: dict[str, tuple[str, dict[str, str]]] = {
    "agent_system": (f"{_PROMPTS}/agent_system_prompt.yaml", {"time": "time"}),
    "user_system": (f"{_PROMPTS}/user_system_prompt.yaml",
                    {"persona": "persona", "instructions": "instructions"}),
    "judge_window_system": (f"{_PROMPTS}/sliding_window_eval_template.yaml",
                            {"env_info": "environment", "user_instruction": "instructions",
                             "window_idx": "window_index", "total_windows": "window_count"}),
}
JUDGE_USER = Source("src/vita/evaluator/evaluator_traj.py",
                    ("assign", "_evaluate_window", "user_prompt"), "fstring",
                    {"window_content": "window", "current_rubrics_str": "status"})
# (file, variable) of the English tool descriptions, general tools first
TOOL_SOURCES: tuple[tuple[str, str], ...] = (
    ("src/vita/environment/toolkit_schema.py", "TOOLKIT_TOOL_DESCRIPTIONS_EN"),
    ("src/vita/domains/delivery/tools_schema.py", "TOOL_DESCRIPTIONS_EN"),
    ("src/vita/domains/instore/tools_schema.py", "TOOL_DESCRIPTIONS_EN"),
    ("src/vita/domains/ota/tools_schema.py", "TOOL_DESCRIPTIONS_EN"),
)
FROM_BUILTIN = ("judge_window",)
"""Roles the reference has no text for: copied from the built-in set."""


def recognises(checkout: Path) -> bool:
    """Whether `checkout` looks like a checkout of the reference (for `prompts import`
    without `--bench`)."""
    return (checkout.expanduser() / YAML_SOURCES["agent_system"][0]).is_file()


def import_reference(checkout: Path, out: Path | None = None, name: str = "vitabench",
                     force: bool = False) -> tuple[Path, dict[str, Any]]:
    """Write the prompt set of `checkout` to `out` (default `sets_dir()/name`); returns the set
    directory and its manifest. Never overwrites an existing set unless `force`."""
    checkout, out = import_target(checkout, out, name, REPOSITORY, force)
    files, provenance = render(checkout)
    add_builtin_roles(files, provenance, ROLES, FROM_BUILTIN)
    placeholders: dict[str, dict[str, str]] = {
        role: dict(fields) for role, (_, fields) in YAML_SOURCES.items()}
    placeholders["judge_window_user"] = dict(JUDGE_USER.fields)
    manifest = {
        "name": name,
        "benchmark": "vitabench",
        "language": LANGUAGE,
        "source": {"repository": REPOSITORY, "path": str(checkout),
                   "commit": git_commit(checkout)},
        "placeholders": placeholders,
    }
    return out, write_set(out, files, provenance, manifest, ROLES, force)


import_reference.recognises = recognises  # type: ignore[attr-defined]


def render(checkout: Path) -> tuple[dict[str, str], dict[str, str]]:
    """file name -> our text, and file name -> where it came from."""
    files: dict[str, str] = {}
    provenance: dict[str, str] = {}
    for role, (rel, fields) in YAML_SOURCES.items():
        text, line = yaml_block(checkout / rel, LANGUAGE)
        files[f"{role}.txt"] = format_template(text, fields, f"{rel}:{line}")
        provenance[f"{role}.txt"] = f"{REPOSITORY}:{rel}:{LANGUAGE}"
    tree = parse_source(checkout, JUDGE_USER.file, REPOSITORY)
    parts = extract_parts(tree, JUDGE_USER)
    files["judge_window_user.txt"] = "".join(
        f"${{{t}}}" if ph else t.replace("$", "$$") for ph, t in parts)
    provenance["judge_window_user.txt"] = (
        f"{REPOSITORY}:{JUDGE_USER.file}:{'.'.join(JUDGE_USER.where[1:])}")
    files["tool_descriptions.txt"] = json.dumps(tool_descriptions(checkout), ensure_ascii=False,
                                                indent=1) + "\n"
    provenance["tool_descriptions.txt"] = f"{REPOSITORY}:" + ", ".join(
        f"{rel}:{var}" for rel, var in TOOL_SOURCES)
    return files, provenance


def format_template(text: str, fields: dict[str, str], where: str) -> str:
    """A `str.format` template as a `$name` template: fields mapped, `{{`/`}}` undone,
    literal `$` doubled."""
    out: list[str] = []
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise ImportFailed(f"{where}: not a valid format string: {exc}") from None
    for literal, fname, spec, conv in parsed:
        out.append(literal.replace("$", "$$"))
        if fname is None:
            continue
        if spec or conv or fname not in fields:
            raise ImportFailed(f"{where}: field {{{fname}}} has no agentsweep placeholder "
                               f"(known: {', '.join(fields)})")
        out.append(f"${{{fields[fname]}}}")
    return "".join(out)


# ------------------------------------------------------------------ YAML block scalars

_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*):(.*)$")
_HEADER = re.compile(r"^\s*\|([+-]?)\s*(?:#.*)?$")


def yaml_block(path: Path, key: str) -> tuple[str, int]:
    """The text of the top-level `key: |` block scalar of a YAML file (PyYAML's reading of
    it) and its line number; ImportFailed naming file and line when the file has another
    shape."""
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except OSError:
        raise ImportFailed(f"{path}: not found (is it a checkout of {REPOSITORY}?)") from None
    start = None
    for i, line in enumerate(lines):
        m = _KEY.match(line)
        if m and m.group(1) == key:
            start = i
            header = _HEADER.match(m.group(2))
            if header is None:
                raise ImportFailed(f"{path}:{i + 1}: `{key}:` is not a `|` block scalar")
            chomp = header.group(1)
            break
    if start is None:
        raise ImportFailed(f"{path}: no top-level `{key}:` text")
    body: list[str] = []
    indent = 0
    for line in lines[start + 1:]:
        stripped = line.lstrip(" ")
        if not indent:
            if not stripped:
                body.append(line)
                continue
            indent = len(line) - len(stripped)
            if indent == 0:
                break
        if stripped and len(line) - len(stripped) < indent:
            break
        if "\t" in line[:indent]:
            raise ImportFailed(f"{path}: a tab in the indentation of `{key}:`")
        body.append(line)
    # a line of spaces no longer than the indentation is an empty line
    texts = [ln[indent:] if len(ln) > indent else "" for ln in body]
    while texts and texts[-1] == "" and chomp != "+":
        texts.pop()
    text = "\n".join(texts)
    if (texts and chomp == "") or chomp == "+":
        text += "\n"
    return text, start + 1


# ------------------------------------------------------------------ tool descriptions

def _dict_literal(checkout: Path, rel: str, var: str) -> dict[str, Any]:
    tree = parse_source(checkout, rel, REPOSITORY)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == var for t in node.targets):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                raise ImportFailed(f"{rel}:{node.lineno}: {var} is not a literal") from None
            if not isinstance(value, dict):
                raise ImportFailed(f"{rel}:{node.lineno}: {var} is not a dict")
            return value
    raise ImportFailed(f"{rel}: no constant {var}")


def tool_descriptions(checkout: Path) -> dict[str, dict[str, Any]]:
    """Every tool of this environment: {"description": what the agent's schema shows, "params":
    {param: text or None}} from the reference's English description tables (a domain's own
    entry wins over the general table's, as its toolkits look them up)."""
    table: dict[str, tuple[str, dict[str, Any]]] = {}
    for rel, var in TOOL_SOURCES:
        for name, entry in _dict_literal(checkout, rel, var).items():
            table[name] = (rel, entry)
    out: dict[str, dict[str, Any]] = {}
    for name, spec in ALL_TOOLS.items():
        if name not in table:
            raise ImportFailed(f"no English description of tool {name} in "
                               f"{', '.join(rel for rel, _ in TOOL_SOURCES)}")
        rel, entry = table[name]
        try:
            description, args = schema_texts(entry)
        except (KeyError, TypeError, AttributeError) as exc:
            raise ImportFailed(f"{rel}: the entry of {name} lacks {exc}") from None
        out[name] = {"description": description,
                     "params": {p.name: args.get(p.name) for p in spec.params}}
    return out


def schema_texts(entry: dict[str, Any]) -> tuple[str, dict[str, str]]:
    """(description, argument texts) as the reference's schema shows an entry: its toolkit
    writes the entry as a Google-style docstring (summary, pre- and postconditions, `Args:`,
    `Returns:`) and `docstring_parser` reads it back: the summary's first line, a blank line,
    then the rest up to the `Args:` section. An entry without arguments has an empty
    `Args:` section, which is not read as one: the rest is then the whole remainder."""
    lines = [str(entry["description"]), "Preconditions:", f"    - {entry['preconditions']}",
             "Postconditions:", f"    - {entry['postconditions']}"]
    args = {str(k): str(v) for k, v in dict(entry["args"]).items()}
    tail = ["", "Args:", *(f"    {k}: {v}" for k, v in args.items()), "", "Returns:",
            f"    {entry['returns']}"]
    doc = "\n".join(lines + tail) if not args else "\n".join(lines)
    short, _, rest = doc.partition("\n")
    rest = rest.strip()
    return (f"{short}\n\n{rest}" if rest else short), args
