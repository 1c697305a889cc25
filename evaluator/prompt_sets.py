"""Prompt sets: every prompt text of a benchmark's run, as one versioned unit.

A benchmark declares its prompt roles (`PromptRoles`: each role's placeholders and built-in file,
and its tool-simulator prompt). A prompt set is "builtin" (the benchmark's own files, written
for this project) or a directory of template files, one per role (`<role>.txt`), usually
written by `agentsweep prompts import` from a local checkout of the benchmark's reference
(docs/prompts.md). Nothing of a reference is ever stored in this repository: imported sets
live in the user's `$AGENTSWEEP_HOME/prompts/<name>/`.

`load_prompt_set(spec, roles)` reads and checks a set (every role's `$name` placeholders) and
returns a `PromptSet`, which the run passes to the protocols (`ProtocolSettings.prompts`), the
judges (`JudgePool(prompts=...)`, `score_run(prompts=...)`) and the sandbox
(`open_sandbox(prompts=...)`). The built-in set leaves every version string as it was; any
other set appends `+<name>@<digest>` to them, so records and judgement keys say which prompts
were used and never mix with the built-in ones.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from string import Template
from typing import Any

BUILTIN = "builtin"
MANIFEST = "manifest.json"
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
SIMULATOR_ROLE = "tool_simulator"

# tool simulator section -> (required, allowed besides); `{name}` placeholders
SIMULATOR_SECTIONS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "system": (frozenset({"examples"}),
               frozenset({"tool_name", "tool_description", "tool_parameters"})),
    "examples_header": (frozenset(), frozenset({"num_examples"})),
    "example": (frozenset(), frozenset({"index", "params", "result"})),
    "example_separator": (frozenset(), frozenset()),
    "no_examples": (frozenset(), frozenset({"tool_name"})),
    "user": (frozenset({"params_json"}), frozenset({"tool_name"})),
}


@dataclass(frozen=True)
class RoleSpec:
    """One `$name` template role: the placeholders it must use and may use, its built-in file
    (None: an empty text), and whether trailing newlines are dropped from the template."""

    required: frozenset[str] = frozenset()
    optional: frozenset[str] = frozenset()
    builtin: Path | None = None
    strip_newlines: bool = False


@dataclass(frozen=True)
class PromptRoles:
    """A benchmark's prompt roles: `$name` templates, optionally the tool simulator's prompt
    (role "tool_simulator", `{name}` sections), and extra checks of a loaded set. `data`:
    roles whose text is not a template but data the benchmark reads itself (e.g. tool
    descriptions as JSON), role -> built-in file (None: an empty text); `check` validates
    them."""

    templates: Mapping[str, RoleSpec]
    simulator: Path | None = None
    check: Callable[[PromptSet], None] | None = None
    data: Mapping[str, Path | None] = field(default_factory=dict)

    @property
    def roles(self) -> tuple[str, ...]:
        """Every role; in a set directory the role's file is `<role>.txt`."""
        return (*self.templates, *self.data, *((SIMULATOR_ROLE,) if self.simulator else ()))

    def builtin_file(self, role: str) -> Path | None:
        if role == SIMULATOR_ROLE:
            return self.simulator
        if role in self.data:
            return self.data[role]
        return self.templates[role].builtin


class PromptSetError(ValueError):
    """A prompt set cannot be found or read, or a file of it is wrong (the message names it)."""


@dataclass(frozen=True, eq=False)
class PromptSet:
    """The texts of one prompt set. `builtin` sets change no behaviour or version string."""

    name: str
    path: Path | None  # None for the built-in set
    texts: dict[str, str]  # role -> file text, as read
    digest: str  # 12 hex digits over every role's text
    templates: dict[str, Template] = field(repr=False)  # the `$name` roles
    simulator_sections: dict[str, str] = field(repr=False)  # {} without a simulator role
    manifest: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def builtin(self) -> bool:
        return self.path is None

    @property
    def label(self) -> str:
        """`<name>@<digest>`: what version strings carry."""
        return f"{self.name}@{self.digest}"

    def version(self, base: str) -> str:
        """`base` for the built-in set, else `base+<name>@<digest>`."""
        return base if self.builtin else f"{base}+{self.label}"

    def simulator_version(self, base: str) -> str:
        """The simulated answers' content-address version: `base` for the built-in set, else
        `<name>@<digest of the simulator prompt>` (other roles do not invalidate answers)."""
        if self.builtin:
            return base
        return f"{self.name}@{_sha(self.texts[SIMULATOR_ROLE])[:12]}"

    def sections(self, role: str) -> dict[str, str]:
        """`## name` sections of a role's text (e.g. rubric dimension definitions)."""
        return dimension_sections(self.texts[role])


def cache_home() -> Path:
    from backends.model import cache_root

    return cache_root()


def sets_dir() -> Path:
    """Where imported prompt sets live by default: `$AGENTSWEEP_HOME/prompts`."""
    return cache_home() / "prompts"


def resolve(spec: str) -> Path | None:
    """The directory of `spec`: None for "builtin", else a path to a set directory, or the name
    of one under `sets_dir()`."""
    if spec == BUILTIN:
        return None
    path = Path(spec).expanduser()
    if path.is_dir():
        return path
    if NAME_RE.match(spec) and (sets_dir() / spec).is_dir():
        return sets_dir() / spec
    raise PromptSetError(
        f"prompt set {spec!r} not found: not a directory, and no set of that name in "
        f"{sets_dir()} (see `agentsweep prompts list`)")


def load_prompt_set(spec: str | Path, roles: PromptRoles) -> PromptSet:
    """Read and check the prompt set `spec` ("builtin", a directory, or a set name) of a
    benchmark with `roles`."""
    directory = resolve(str(spec))
    if directory is None:
        texts = {}
        for r in roles.roles:
            path = roles.builtin_file(r)
            texts[r] = path.read_text(encoding="utf-8") if path is not None else ""
        return _build(BUILTIN, None, texts, {}, roles)
    texts = {}
    for role in roles.roles:
        path = directory / f"{role}.txt"
        try:
            texts[role] = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise PromptSetError(f"prompt file {path} cannot be read: {exc.strerror}") from None
    manifest = read_manifest(directory)
    name = str(manifest.get("name") or directory.resolve().name)
    if not NAME_RE.match(name):
        raise PromptSetError(f"{directory}: set name {name!r} is not [A-Za-z0-9._-]")
    return _build(name, directory, texts, manifest, roles)


def _build(name: str, directory: Path | None, texts: dict[str, str],
           manifest: dict[str, Any], roles: PromptRoles) -> PromptSet:
    def path(role: str) -> Path:
        if directory is not None:
            return directory / f"{role}.txt"
        return roles.builtin_file(role) or Path(f"<builtin {role}>")

    templates = {}
    for role, spec in roles.templates.items():
        text = texts[role].rstrip("\n") if spec.strip_newlines else texts[role]
        templates[role] = check_template(text, path(role), spec.required, spec.optional)
    simulator = (check_simulator(texts[SIMULATOR_ROLE], str(path(SIMULATOR_ROLE)))
                 if roles.simulator else {})
    ps = PromptSet(name=name, path=directory, texts=texts, digest=set_digest(texts),
                   templates=templates, simulator_sections=simulator, manifest=manifest)
    if roles.check is not None:
        roles.check(ps)
    return ps


def set_digest(texts: dict[str, str]) -> str:
    h = hashlib.sha256()
    for role in sorted(texts):
        h.update(role.encode() + b"\0" + texts[role].encode("utf-8") + b"\0")
    return h.hexdigest()[:12]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def placeholders(template: Template, path: Path | str) -> frozenset[str]:
    """The `$name` placeholders of a template; ValueError naming the line of a bad `$`."""
    names: set[str] = set()
    for match in template.pattern.finditer(template.template):
        if match.group("invalid") is not None:
            line = template.template.count("\n", 0, match.start("invalid")) + 1
            raise ValueError(f"{path}:{line}: invalid `$` placeholder (write `$$` for a dollar)")
        name = match.group("named") or match.group("braced")
        if name:
            names.add(name)
    return frozenset(names)


def check_template(text: str, path: Path, required: frozenset[str],
                   optional: frozenset[str]) -> Template:
    """A `$name` template whose placeholders are `required` plus some of `optional`."""
    template = Template(text)
    try:
        found = placeholders(template, path)
    except ValueError as exc:
        raise PromptSetError(str(exc)) from None
    if not required <= found <= required | optional:
        raise PromptSetError(
            f"{path}: placeholders {sorted(found)}; required {sorted(required)}, "
            f"allowed besides {sorted(optional)}")
    return template


_BRACE_FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def check_tool_list(text: str, where: str, *, typed: bool = False) -> None:
    """A data role holding an OpenAI tool list: a JSON array of `{"function": {"name": ...}}`
    objects (with `"type": "function"` too when `typed`); PromptSetError naming `where`
    otherwise. Empty text is not checked (the role is unused)."""
    if not text.strip():
        return
    try:
        tools = json.loads(text)
    except ValueError as exc:
        raise PromptSetError(f"{where}: not JSON: {exc}") from None
    if not isinstance(tools, list) or not all(
            isinstance(t, dict) and (not typed or t.get("type") == "function")
            and isinstance(t.get("function"), dict)
            and isinstance(t["function"].get("name"), str) for t in tools):
        raise PromptSetError(f"{where}: expected a JSON array of tools "
                             '({"type": "function", "function": {"name": ...}})')


def check_simulator(text: str, origin: str) -> dict[str, str]:
    """The sections of a simulator prompt, their `{name}` placeholders checked."""
    from cache_store.simulator import parse_prompt

    try:
        sections = parse_prompt(text, origin)
    except ValueError as exc:
        raise PromptSetError(str(exc)) from None
    for name, body in sections.items():
        if name not in SIMULATOR_SECTIONS:
            raise PromptSetError(f"{origin}: unknown section {name!r} "
                                 f"(known: {', '.join(SIMULATOR_SECTIONS)})")
        required, optional = SIMULATOR_SECTIONS[name]
        found = frozenset(_BRACE_FIELD.findall(body))
        if not required <= found <= required | optional:
            raise PromptSetError(
                f"{origin}: section {name}: placeholders {sorted(found)}; required "
                f"{sorted(required)}, allowed besides {sorted(optional)}")
    return sections


def dimension_sections(text: str) -> dict[str, str]:
    """`## name` sections of a dimensions file (the judges' `$dimensions` definitions)."""
    sections: dict[str, str] = {}
    current = ""
    for line in text.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            sections[current] = ""
        elif current:
            sections[current] += line + "\n"
    return {k: v.strip() for k, v in sections.items()}


def read_manifest(directory: Path) -> dict[str, Any]:
    path = directory / MANIFEST
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise PromptSetError(f"{path}: not readable JSON: {exc}") from None
    if not isinstance(data, dict):
        raise PromptSetError(f"{path}: not a JSON object")
    return data


def modified_files(ps: PromptSet) -> list[str]:
    """Files of an imported set whose sha256 differs from its manifest (edited since import)."""
    if ps.path is None:
        return []
    files = ps.manifest.get("files") or {}
    out = []
    for fname, info in sorted(files.items()):
        want = info.get("sha256") if isinstance(info, dict) else None
        path = ps.path / fname
        if want and (not path.is_file() or file_sha256(path) != want):
            out.append(fname)
    return out


NOT_REFERENCE_NOTE = "not the reference's prompts; scores are not comparable with the paper"
REFERENCE_PROMPTS = "the reference's, imported (agentsweep prompts import)"


def prompt_deviation(ps: PromptSet | None, benchmark: str) -> dict[str, Any] | None:
    """The `prompts` deviation of a run whose profile is the reference's (`paper`) and whose
    benchmark has an importer of the reference's prompts: None when `ps` is a set imported
    from the reference for `benchmark` and unedited since; else {"profile", "used", "note"}."""
    if ps is None or ps.builtin:
        used = BUILTIN
    else:
        made_for = ps.manifest.get("benchmark")
        source = ps.manifest.get("source")
        edited = modified_files(ps)
        if not isinstance(source, dict) or not source:
            used = f"{ps.label} (not written by `agentsweep prompts import`)"
        elif made_for and made_for != benchmark:
            used = f"{ps.label} (imported for {made_for})"
        elif edited:
            used = f"{ps.label} (edited since the import: {', '.join(edited)})"
        else:
            return None
    return {"profile": REFERENCE_PROMPTS, "used": used, "note": NOT_REFERENCE_NOTE}


def list_sets(roles: Callable[[Path], PromptRoles | None],
              root: Path | None = None) -> list[tuple[str, Path, PromptSet | None, str]]:
    """(name, directory, the set or None, error) for every directory under `root`; `roles`
    gives a set directory's benchmark's roles (None: unknown benchmark)."""
    root = root if root is not None else sets_dir()
    out: list[tuple[str, Path, PromptSet | None, str]] = []
    if not root.is_dir():
        return out
    for d in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        spec = roles(d)
        if spec is None:
            out.append((d.name, d, None, "not a prompt set of a registered benchmark"))
            continue
        try:
            out.append((d.name, d, load_prompt_set(d, spec), ""))
        except PromptSetError as exc:
            out.append((d.name, d, None, str(exc)))
    return out
