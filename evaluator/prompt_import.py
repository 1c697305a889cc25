"""Prompt sets from a benchmark's reference code: the generic machinery of
`agentsweep prompts import`.

A reference keeps its prompts as Python string constants (`str.format` templates, f-strings,
string literals). `Source` says where one text is and how its placeholders map onto the
project's; `extract_parts` reads it with `ast` (never executing anything) and `write_set`
writes the rewritten templates as a prompt set directory with a manifest (temporary directory,
then rename; an existing set only with `force`). The mapping of one benchmark's reference is
part of that benchmark's package (TravelBench: its package's `prompt_import.py`).
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
from typing import Any

from .prompt_sets import (
    BUILTIN,
    MANIFEST,
    NAME_RE,
    PromptRoles,
    PromptSetError,
    file_sha256,
    load_prompt_set,
    sets_dir,
)

FORMAT = 1


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


Part = tuple[bool, str]
"""(is a placeholder, literal text or our placeholder name)"""


class ImportFailed(Exception):
    """The checkout lacks something expected, or the result would be invalid (one line)."""


def default_out(name: str) -> Path:
    return sets_dir() / name


def check_name(name: str) -> None:
    if not NAME_RE.match(name) or name == BUILTIN:
        raise ImportFailed(f"--name {name!r}: use letters, digits, '.', '_', '-' "
                           f"(and not {BUILTIN!r})")


def import_target(checkout: Path, out: Path | None, name: str, repository: str,
                  force: bool) -> tuple[Path, Path]:
    """The checked checkout and set directory of an import of `repository` as set `name`
    (default `sets_dir()/name`); ImportFailed when the checkout is not a directory or the set
    exists and `force` is not given (an import never overwrites a set by itself)."""
    check_name(name)
    checkout = checkout.expanduser().resolve()
    if not checkout.is_dir():
        raise ImportFailed(f"{checkout}: not a directory (expected a checkout of {repository})")
    out = (out or default_out(name)).expanduser().absolute()
    if out.exists() and not force:
        raise ImportFailed(f"{out} exists: pass --force to replace it")
    return checkout, out


def add_builtin_roles(files: dict[str, str], provenance: dict[str, str], roles: PromptRoles,
                      names: tuple[str, ...]) -> None:
    """Copy the roles `names`, which the reference has no text for, from the built-in set."""
    builtin = load_prompt_set(BUILTIN, roles)
    for role in names:
        files[f"{role}.txt"] = builtin.texts[role]
        provenance[f"{role}.txt"] = f"agentsweep builtin ({builtin.label})"


def write_set(out: Path, files: dict[str, str], provenance: dict[str, str],
              manifest: dict[str, Any], roles: PromptRoles, force: bool) -> dict[str, Any]:
    """Write `files` (file name -> text) as the prompt set directory `out` with a manifest
    (`manifest` plus format, import time, every file's sha256 and origin, and the set's
    digest); the set is loaded with `roles` first, so an unusable one is never written."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        umask = os.umask(0)
        os.umask(umask)
        tmp.chmod(0o777 & ~umask)  # mkdtemp's 0700 -> an ordinary directory
        for fname, text in files.items():
            (tmp / fname).write_text(text, encoding="utf-8")
        head = {k: v for k, v in manifest.items() if k != "placeholders"}
        tail = {k: v for k, v in manifest.items() if k == "placeholders"}
        manifest = {
            "format": FORMAT,
            **head,
            "imported_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            **tail,
            "files": {fname: {"sha256": file_sha256(tmp / fname), "from": provenance[fname]}
                      for fname in sorted(files)},
        }
        (tmp / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False, indent=2) + "\n",
                                    encoding="utf-8")
        try:
            manifest["digest"] = load_prompt_set(tmp, roles).digest
        except PromptSetError as exc:
            raise ImportFailed(f"the imported prompts are not usable: {exc}") from None
        (tmp / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False, indent=2) + "\n",
                                    encoding="utf-8")
        _replace(tmp, out, force)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return manifest


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


def parse_source(checkout: Path, rel: str, repository: str) -> ast.Module:
    """The syntax tree of `rel` in a checkout of `repository` (never executed)."""
    path = checkout / rel
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        raise ImportFailed(f"{path}: not found (is {checkout} a checkout of {repository}?)")
    try:
        return ast.parse(text, filename=str(path))
    except SyntaxError as exc:
        raise ImportFailed(f"{path}:{exc.lineno}: cannot be parsed: {exc.msg}") from None


def one_function(tree: ast.Module, name: str, where: str) -> ast.FunctionDef:
    """The one function NAME of a parsed reference file (ImportFailed naming WHERE when there
    is none or more than one: the reference's code has moved on)."""
    found = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name]
    if len(found) != 1:
        raise ImportFailed(f"{where}: expected one function {name}, found {len(found)}")
    return found[0]


def extract_parts(tree: ast.Module, src: Source) -> list[Part]:
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


def replace_literals(parts: list[Part], src: Source) -> list[Part]:
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
