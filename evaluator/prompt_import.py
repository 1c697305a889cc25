"""`agentsweep prompts import`: a prompt set from a local checkout of the TravelBench reference.

The reference (github.com/small-xiangcheng/TravelBench) keeps its prompts as Python string
constants (`str.format` templates), one f-string and one string literal. They are read with
`ast`, never executed, rewritten as this project's templates (`$name` placeholders, or `{name}`
in the simulator file; see `SOURCES` for the mapping) and written to the user's prompt
directory with a manifest. Roles the reference does not have (the situation blocks of layout
"prefix", the judges' dimension definitions) are copied from the built-in set and marked so.
"""

from __future__ import annotations

import ast
import datetime as _dt
import json
import os
import shutil
import string
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .prompt_sets import (
    BUILTIN,
    MANIFEST,
    NAME_RE,
    ROLES,
    PromptSetError,
    file_sha256,
    load_prompt_set,
    sets_dir,
)

REPOSITORY = "small-xiangcheng/TravelBench"
FORMAT = 1

_CONTEXT = {"CONTEXT_INFO": "context", "QUESTION_CONTENT": "query", "INTENDED_TOOL": "tools",
            "CONVERSATION_HISTORY": "conversation"}


@dataclass(frozen=True)
class Source:
    """Where one prompt text is in the reference and how its placeholders map onto ours.

    where: ("const", NAME) a module-level string constant; ("assign", FUNC, VAR) the string
        assigned to VAR in function FUNC; ("keyword", FUNC, KW) the one plain string passed as
        KW= in FUNC.
    style: "format" (`str.format` fields), "fstring" (f-string expressions) or "plain".
    fields: reference field or expression -> our placeholder.
    literals: literal text -> our placeholder (the reference's fixed markers, which our
        settings make configurable); each must occur.
    """

    file: str
    where: tuple[str, ...]
    style: str
    fields: dict[str, str] = field(default_factory=dict)
    literals: dict[str, str] = field(default_factory=dict)


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

Part = tuple[bool, str]  # (is a placeholder, literal text or our placeholder name)


class ImportFailed(Exception):
    """The checkout lacks something expected, or the result would be invalid (one line)."""


def default_out(name: str) -> Path:
    return sets_dir() / name


def import_reference(checkout: Path, out: Path | None = None, name: str = "travelbench",
                     force: bool = False) -> tuple[Path, dict]:
    """Write the prompt set of `checkout` to `out` (default `sets_dir()/name`); returns the set
    directory and its manifest. Never overwrites an existing set unless `force`."""
    if not NAME_RE.match(name) or name == BUILTIN:
        raise ImportFailed(f"--name {name!r}: use letters, digits, '.', '_', '-' "
                           f"(and not {BUILTIN!r})")
    checkout = checkout.expanduser().resolve()
    if not checkout.is_dir():
        raise ImportFailed(f"{checkout}: not a directory (expected a checkout of {REPOSITORY})")
    out = (out or default_out(name)).expanduser().absolute()
    if out.exists() and not force:
        raise ImportFailed(f"{out} exists: pass --force to replace it")
    files, provenance = render(checkout)
    builtin = load_prompt_set(BUILTIN)
    for role in FROM_BUILTIN:
        files[f"{role}.txt"] = builtin.texts[role]
        provenance[f"{role}.txt"] = f"agentsweep builtin ({builtin.label})"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        umask = os.umask(0)
        os.umask(umask)
        tmp.chmod(0o777 & ~umask)  # mkdtemp's 0700 -> an ordinary directory
        for fname, text in files.items():
            (tmp / fname).write_text(text, encoding="utf-8")
        manifest = {
            "format": FORMAT,
            "name": name,
            "source": {"repository": REPOSITORY, "path": str(checkout),
                       "commit": git_commit(checkout)},
            "imported_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "placeholders": {role: {**s.fields, **{f"literal {k}": v
                                                   for k, v in s.literals.items()}}
                             for role, s in SOURCES.items() if s.fields or s.literals},
            "files": {fname: {"sha256": file_sha256(tmp / fname), "from": provenance[fname]}
                      for fname in sorted(files)},
        }
        (tmp / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False, indent=2) + "\n",
                                    encoding="utf-8")
        try:
            manifest["digest"] = load_prompt_set(tmp).digest
        except PromptSetError as exc:
            raise ImportFailed(f"the imported prompts are not usable: {exc}") from None
        (tmp / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False, indent=2) + "\n",
                                    encoding="utf-8")
        _replace(tmp, out, force)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return out, manifest


def _replace(tmp: Path, out: Path, force: bool) -> None:
    """Rename the finished set into place (an existing one only with `force`)."""
    old = None
    if out.exists():
        if not force:
            raise ImportFailed(f"{out} exists: pass --force to replace it")
        old = out.with_name(f".{out.name}.{os.getpid()}.old")
        os.replace(out, old)
    try:
        os.replace(tmp, out)
    except OSError:
        if old is not None:
            os.replace(old, out)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def render(checkout: Path) -> tuple[dict[str, str], dict[str, str]]:
    """file name -> our template text, and file name -> where it came from."""
    trees: dict[str, ast.Module] = {}
    files: dict[str, str] = {}
    provenance: dict[str, str] = {}
    sim: dict[str, str] = {}
    for role, src in SOURCES.items():
        tree = trees.get(src.file) or _parse(checkout, src.file)
        trees[src.file] = tree
        parts = _replace_literals(_extract(tree, src), src)
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
    assert set(files) | {f"{r}.txt" for r in FROM_BUILTIN} == {f"{r}.txt" for r in ROLES}
    return files, provenance


def simulator_file(sections: dict[str, str]) -> str:
    """Sections in the `=== name ===` layout `cache_store.simulator.parse_prompt` reads back
    exactly (each body followed by one newline)."""
    out = []
    for name, body in sections.items():
        bad = [ln for ln in body.splitlines() if ln.startswith("=== ") and ln.endswith(" ===")]
        if bad or body != "\n".join(body.splitlines()) + ("\n" if body.endswith("\n") else ""):
            raise ImportFailed(f"simulator section {name}: a line that cannot be stored in the "
                               "sectioned file (a `=== x ===` line or an unusual line break)")
        out.append(f"=== {name} ===\n{body}\n")
    return "".join(out)


def _parse(checkout: Path, rel: str) -> ast.Module:
    path = checkout / rel
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        raise ImportFailed(f"{path}: not found (is {checkout} a checkout of {REPOSITORY}?)")
    try:
        return ast.parse(text, filename=str(path))
    except SyntaxError as exc:
        raise ImportFailed(f"{path}:{exc.lineno}: cannot be parsed: {exc.msg}") from None


def _extract(tree: ast.Module, src: Source) -> list[Part]:
    kind, *names = src.where
    what = f"{src.file}: {kind} {'.'.join(names)}"
    if kind == "const":
        nodes = [n.value for n in tree.body if isinstance(n, ast.Assign)
                 and any(isinstance(t, ast.Name) and t.id == names[0] for t in n.targets)]
        if not nodes:
            raise ImportFailed(f"{src.file}: no constant {names[0]}")
    else:
        funcs = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                 and n.name == names[0]]
        if not funcs:
            raise ImportFailed(f"{src.file}: no function {names[0]}")
        inner = [n for f in funcs for n in ast.walk(f)]
        if kind == "assign":
            nodes = [n.value for n in inner if isinstance(n, ast.Assign)
                     and any(isinstance(t, ast.Name) and t.id == names[1] for t in n.targets)]
        else:  # keyword: the plain string value(s) of KW=
            nodes = [n.value for n in inner if isinstance(n, ast.keyword) and n.arg == names[1]
                     and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)]
        if len(nodes) != 1:
            raise ImportFailed(f"{what}: expected one string, found {len(nodes)}")
    node = nodes[-1]
    if src.style == "fstring":
        if not isinstance(node, ast.JoinedStr):
            raise ImportFailed(f"{what}: not an f-string")
        return _fstring_parts(node, src, what)
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        raise ImportFailed(f"{what}: not a string constant")
    if src.style == "plain":
        return [(False, node.value)]
    return _format_parts(node.value, src, what)


def _format_parts(text: str, src: Source, what: str) -> list[Part]:
    parts: list[Part] = []
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise ImportFailed(f"{what}: not a valid format string: {exc}") from None
    for literal, fname, spec, conv in parsed:
        if literal:
            parts.append((False, literal))
        if fname is None:
            continue
        if spec or conv or fname not in src.fields:
            raise ImportFailed(f"{what}: field {{{fname}}} has no agentsweep placeholder "
                               f"(known: {', '.join(src.fields)})")
        parts.append((True, src.fields[fname]))
    return parts


def _fstring_parts(node: ast.JoinedStr, src: Source, what: str) -> list[Part]:
    parts: list[Part] = []
    for value in node.values:
        if isinstance(value, ast.Constant):
            parts.append((False, str(value.value)))
            continue
        expr = ast.unparse(value.value) if isinstance(value, ast.FormattedValue) else "?"
        if (not isinstance(value, ast.FormattedValue) or value.conversion != -1
                or value.format_spec is not None or expr not in src.fields):
            raise ImportFailed(f"{what}: {{{expr}}} has no agentsweep placeholder "
                               f"(known: {', '.join(src.fields)})")
        parts.append((True, src.fields[expr]))
    return parts


def _replace_literals(parts: list[Part], src: Source) -> list[Part]:
    for literal, placeholder in src.literals.items():
        out: list[Part] = []
        found = False
        for is_ph, text in parts:
            if is_ph or literal not in text:
                out.append((is_ph, text))
                continue
            found = True
            pieces = text.split(literal)
            for i, piece in enumerate(pieces):
                if i:
                    out.append((True, placeholder))
                if piece:
                    out.append((False, piece))
        if not found:
            raise ImportFailed(f"{src.file}: {'.'.join(src.where[1:])} does not contain "
                               f"{literal!r} (mapped to ${placeholder})")
        parts = out
    return parts


def git_commit(checkout: Path) -> str | None:
    """HEAD's commit of a git checkout, read from `.git` (None when not readable)."""
    git = checkout / ".git"
    try:
        if git.is_file():  # worktree or submodule: "gitdir: PATH"
            git = (checkout / git.read_text().split(":", 1)[1].strip()).resolve()
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref:"):
            return head or None
        ref = head[4:].strip()
        for base in (git, _common_dir(git)):
            if (base / ref).is_file():
                return (base / ref).read_text().strip() or None
            packed = base / "packed-refs"
            if packed.is_file():
                for line in packed.read_text().splitlines():
                    if line.endswith(" " + ref):
                        return line.split(" ", 1)[0]
    except (OSError, IndexError):
        return None
    return None


def _common_dir(git: Path) -> Path:
    common = git / "commondir"
    return (git / common.read_text().strip()).resolve() if common.is_file() else git
