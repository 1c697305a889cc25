"""Prompt sets: every prompt text of a TravelBench run, as one versioned unit.

A prompt set is "builtin" (the project's own prompts, in `evaluator/protocols/prompts/`,
`evaluator/judges/prompts/` and `cache_store/prompts/`) or a directory of template files, one
per role (`ROLES`), usually written by `agentsweep prompts import` from a local checkout of the
benchmark's reference (docs/prompts.md). Nothing of a reference is ever stored in this
repository: imported sets live in the user's `$AGENTSWEEP_HOME/prompts/<name>/`.

`load_prompt_set(spec)` reads and checks a set (placeholders as `prompting.load_templates`
checks them) and returns a `PromptSet`, which the run passes to the protocols
(`ProtocolSettings.prompts`), the judges (`JudgePool(prompts=...)`, `score_run(prompts=...)`)
and the sandbox (`open_sandbox(prompts=...)`). The built-in set leaves every version string as
it was; any other set appends `+<name>@<digest>` to them, so records and judgement keys say
which prompts were used and never mix with the built-in ones.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from string import Template
from typing import Any

BUILTIN = "builtin"
MANIFEST = "manifest.json"
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")

_ROOT = Path(__file__).resolve().parent.parent
_PROTOCOL_DIR = _ROOT / "evaluator" / "protocols" / "prompts"
_JUDGE_DIR = _ROOT / "evaluator" / "judges" / "prompts"
_SIMULATOR_FILE = _ROOT / "cache_store" / "prompts" / "tool_simulator_v1.txt"

PROTOCOL_ROLES = ("agent_single_turn", "agent_multi_turn", "agent_unsolvable",
                  "agent_background", "agent_situation", "agent_step_limit", "user_simulator")
"""Checked by `evaluator.protocols.prompting.load_templates` (`$name` placeholders)."""

# judge role -> (placeholders it must use, placeholders it may use); `$name` templates
JUDGE_ROLES: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "judge_system": (frozenset(), frozenset()),  # empty file: no system message
    "judge_rubric_single_turn": (
        frozenset({"conversation"}),
        frozenset({"dimensions", "context", "query", "tools", "interaction_note", "example"})),
    "judge_rubric_multi_turn": (
        frozenset({"conversation"}),
        frozenset({"dimensions", "context", "query", "tools", "interaction_note", "example"})),
    "judge_dimensions": (frozenset(), frozenset()),  # `## name` sections, for $dimensions
    "judge_meta_system": (frozenset(), frozenset()),
    "judge_meta": (frozenset({"conversation", "ratings"}),
                   frozenset({"context", "query", "tools", "reasoning"})),
}

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

ROLES = (*PROTOCOL_ROLES, *JUDGE_ROLES, "tool_simulator")
"""Every role of a set; in a set directory the role's file is `<role>.txt`."""

_BUILTIN_FILES: dict[str, Path | None] = {
    **{r: _PROTOCOL_DIR / f"{r}.txt" for r in PROTOCOL_ROLES},
    "judge_system": None,
    "judge_rubric_single_turn": _JUDGE_DIR / "travel_rubric.txt",
    "judge_rubric_multi_turn": _JUDGE_DIR / "travel_rubric.txt",
    "judge_dimensions": _JUDGE_DIR / "travel_dimensions.txt",
    "judge_meta_system": None,
    "judge_meta": _JUDGE_DIR / "travel_meta.txt",
    "tool_simulator": _SIMULATOR_FILE,
}


class PromptSetError(ValueError):
    """A prompt set cannot be found or read, or a file of it is wrong (the message names it)."""


@dataclass(frozen=True, eq=False)
class PromptSet:
    """The texts of one prompt set. `builtin` sets change no behaviour or version string."""

    name: str
    path: Path | None  # None for the built-in set
    texts: dict[str, str]  # role -> file text, as read
    digest: str  # 12 hex digits over every role's text
    protocol_templates: dict[str, Template] = field(repr=False)
    judge_templates: dict[str, Template] = field(repr=False)
    simulator_sections: dict[str, str] = field(repr=False)
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
        return f"{self.name}@{_sha(self.texts['tool_simulator'])[:12]}"

    def judge_dimension_definitions(self) -> dict[str, str]:
        """`## name` sections of the set's `judge_dimensions`."""
        return dimension_sections(self.texts["judge_dimensions"])


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


def load_prompt_set(spec: str | Path = BUILTIN) -> PromptSet:
    """Read and check the prompt set `spec` ("builtin", a directory, or a set name)."""
    directory = resolve(str(spec))
    if directory is None:
        return _builtin()
    texts = {}
    for role in ROLES:
        path = directory / f"{role}.txt"
        try:
            texts[role] = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise PromptSetError(f"prompt file {path} cannot be read: {exc.strerror}") from None
    manifest = read_manifest(directory)
    name = str(manifest.get("name") or directory.resolve().name)
    if not NAME_RE.match(name):
        raise PromptSetError(f"{directory}: set name {name!r} is not [A-Za-z0-9._-]")
    return _build(name, directory, texts, manifest)


def _builtin() -> PromptSet:
    texts = {r: (p.read_text(encoding="utf-8") if p is not None else "")
             for r, p in _BUILTIN_FILES.items()}
    return _build(BUILTIN, None, texts, {})


def _build(name: str, directory: Path | None, texts: dict[str, str],
           manifest: dict[str, Any]) -> PromptSet:
    from evaluator.protocols.prompting import PROMPT_DIR, load_templates

    def path(role: str) -> Path:
        if directory is not None:
            return directory / f"{role}.txt"
        return _BUILTIN_FILES[role] or Path(f"<builtin {role}>")

    try:
        protocol = load_templates(directory if directory is not None else PROMPT_DIR)
    except (OSError, ValueError) as exc:
        raise PromptSetError(str(exc)) from None
    judge = {role: check_template(texts[role], path(role), *spec)
             for role, spec in JUDGE_ROLES.items()}
    _check_dimensions(judge, texts["judge_dimensions"], path("judge_dimensions"))
    simulator = check_simulator(texts["tool_simulator"], str(path("tool_simulator")))
    return PromptSet(name=name, path=directory, texts=texts, digest=set_digest(texts),
                     protocol_templates=protocol, judge_templates=judge,
                     simulator_sections=simulator, manifest=manifest)


def set_digest(texts: dict[str, str]) -> str:
    h = hashlib.sha256()
    for role in sorted(texts):
        h.update(role.encode() + b"\0" + texts[role].encode("utf-8") + b"\0")
    return h.hexdigest()[:12]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def check_template(text: str, path: Path, required: frozenset[str],
                   optional: frozenset[str]) -> Template:
    """A `$name` template whose placeholders are `required` plus some of `optional`."""
    from evaluator.protocols.prompting import _placeholders

    template = Template(text)
    try:
        found = _placeholders(template, path)
    except ValueError as exc:
        raise PromptSetError(str(exc)) from None
    if not required <= found <= required | optional:
        raise PromptSetError(
            f"{path}: placeholders {sorted(found)}; required {sorted(required)}, "
            f"allowed besides {sorted(optional)}")
    return template


_BRACE_FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


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


def _check_dimensions(judge: dict[str, Template], text: str, path: Path) -> None:
    from evaluator.judges.travel import DIMENSIONS

    defined = dimension_sections(text)
    for subset, dims in DIMENSIONS.items():
        role = f"judge_rubric_{subset}"
        if role in judge and "dimensions" in judge[role].get_identifiers():
            missing = [d for d in dims if d not in defined]
            if missing:
                raise PromptSetError(
                    f"{path}: no `## {missing[0]}` section, which "
                    f"{role} needs for $dimensions")


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


def list_sets(root: Path | None = None) -> list[tuple[str, Path, PromptSet | None, str]]:
    """(name, directory, the set or None, error) for every directory under `root`."""
    root = root if root is not None else sets_dir()
    out: list[tuple[str, Path, PromptSet | None, str]] = []
    if not root.is_dir():
        return out
    for d in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        try:
            out.append((d.name, d, load_prompt_set(d), ""))
        except PromptSetError as exc:
            out.append((d.name, d, None, str(exc)))
    return out
