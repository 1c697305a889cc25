"""TravelBench's prompts: the roles of its prompt sets, and the protocols' prompts rendered per
task (the built-in files are in `prompts/`, loaded once at import).

Every prompt is a pure function of the task (and the protocol settings): no timestamps, trial
numbers or seeds. `settings.layout` decides where the task's situation (time, context, reply
language) goes:
- "reference" (as the TravelBench reference): in the agent's system prompt; the first user
  message is the query alone;
- "prefix": the system prompt depends on the protocol settings only and the situation comes in
  the first user message with the query, so system prompt and tool schemas, the longest part of
  a request, are byte-identical across every task of a protocol and the serving engine's prefix
  cache reuses them across tasks as well as across calls and trials.
Templates use `string.Template` syntax (`$name`); literal dollars are written `$$`. A template
must use its required placeholders and may use its optional ones (an agent system prompt that
places `$time`/`$context` itself gets them there instead of the appended `agent_background`).

`options.rendering` (options.py): "project" strips the templates' final newlines, the context's
surrounding whitespace, and writes "(none)" for an empty context, the intent or the query for an
empty intent and "(no particular preferences)" for an empty profile; "reference" renders as
the reference does, `str.format` of its text as it is with the task's fields as they are.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from string import Template

from bench_data.types import Task
from evaluator.benchmarks.travelbench.data import TravelBenchTask
from evaluator.prompt_sets import (
    PromptRoles,
    PromptSet,
    PromptSetError,
    RoleSpec,
    check_tool_list,
    placeholders,
)
from evaluator.protocols.base import ProtocolSettings

from .options import reference_rendering

PROMPT_DIR = Path(__file__).with_name("prompts")
SIMULATOR_PROMPT = Path(__file__).resolve().parents[3] / "cache_store" / "prompts" / \
    "tool_simulator_v1.txt"
"""The cached sandbox's tool-simulator prompt (the built-in set's `tool_simulator` role)."""
PROMPT_VERSION = "travelbench-protocols/4"
"""Version of the prompt rules; records carry `prompt_version(settings)` = this + the layout."""
PROJECT_PROMPT_VERSION = "travelbench-protocols/3"
PROTOCOLS_V3 = PROMPT_DIR / "protocols_v3"
"""The protocol prompts as they were at protocols/3, which the "project" rendering keeps using
(runs made before resume into the same trajectories); the files in `prompts/` (protocols/4)
add what the reference's prompts say that those did not (what to report when tools keep
failing; the simulated user answers details from its intent, without reasoning or
pleasantries), and serve the "reference" rendering and the built-in prompt set."""

_SITUATION = frozenset({"time", "context", "language"})
# template name -> (placeholders it must use, placeholders it may use); checked at load time
_PLACEHOLDERS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "agent_single_turn": (frozenset(), _SITUATION),
    "agent_multi_turn": (frozenset(), _SITUATION),
    "agent_unsolvable": (frozenset({"tag"}), _SITUATION),
    # layout "reference": appended to a system prompt that does not place the situation itself
    "agent_background": (frozenset({"time", "context"}), frozenset({"language"})),
    # layout "prefix": the first user message
    "agent_situation": (frozenset({"query"}), _SITUATION),
    # the agent's reply when a user turn used up max_steps agent calls (fixed text)
    "agent_step_limit": (frozenset(), frozenset()),
    "user_simulator": (
        frozenset({"intent"}),
        frozenset({"time", "context", "profile", "query", "finish_marker", "language"}),
    ),
}


def load_templates(directory: Path = PROMPT_DIR,
                   older: Path | None = None) -> dict[str, Template]:
    """Read and check every prompt file; raise naming the file when one is missing or wrong.
    `older`: a directory whose files replace those of `directory`."""
    templates: dict[str, Template] = {}
    for name, (required, optional) in _PLACEHOLDERS.items():
        path = directory / f"{name}.txt"
        if older is not None and (older / f"{name}.txt").is_file():
            path = older / f"{name}.txt"
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise FileNotFoundError(f"prompt file {path} cannot be read: {exc}") from exc
        template = Template(text.rstrip("\n"))
        found = placeholders(template, path)
        if not required <= found <= required | optional:
            raise ValueError(
                f"{path}: placeholders {sorted(found)}; required {sorted(required)}, "
                f"allowed besides {sorted(optional)}"
            )
        templates[name] = template
    return templates


def templates_digest(templates: dict[str, Template]) -> str:
    return hashlib.sha256(
        b"\0".join(templates[n].template.encode() for n in sorted(templates))
    ).hexdigest()[:12]


_RUBRIC_FIELDS = frozenset({"dimensions", "context", "query", "tools", "interaction_note",
                            "example", "answer_format"})
# judge role -> (placeholders it must use, placeholders it may use, built-in file or None)
_JUDGE_ROLES: dict[str, tuple[frozenset[str], frozenset[str], str | None]] = {
    "judge_system": (frozenset(), frozenset(), None),  # empty: no system message
    "judge_rubric_single_turn": (frozenset({"conversation"}), _RUBRIC_FIELDS,
                                 "travel_rubric.txt"),
    "judge_rubric_multi_turn": (frozenset({"conversation"}), _RUBRIC_FIELDS,
                                "travel_rubric.txt"),
    "judge_dimensions": (frozenset(), frozenset(), "travel_dimensions.txt"),  # `## name`
    "judge_meta_system": (frozenset(), frozenset(), None),
    "judge_meta": (frozenset({"conversation", "ratings"}),
                   frozenset({"context", "query", "tools", "reasoning", "answer_format",
                              "scale_note"}), "travel_meta.txt"),
}
JUDGE_DIMENSIONS: dict[str, list[str]] = {
    "single_turn": ["reasoning_planning", "summarization_extraction", "presentation"],
    "multi_turn": ["reasoning_planning", "summarization_extraction", "presentation",
                   "user_interaction"],
}
"""The rubric judge's dimensions per subset (paper section 4)."""


_DATA_ROLES: dict[str, str | None] = {
    # the tool list the judges are shown (a JSON array of OpenAI tools; empty: the agent's)
    "judge_tools": None,
    # the tool list the tool simulator takes descriptions and schemas from (empty: the agent's)
    "tool_simulator_tools": None,
    # the error texts of the sandbox (tool_errors.py)
    "tool_errors": "tool_errors.json",
}
"""Roles that hold data (JSON) rather than prompt text: `$`-templates without placeholders,
read with `substitute()` (`$$` is a dollar) and checked when a set is loaded."""


def _check_data(ps: PromptSet) -> None:
    from .tool_errors import CatalogueError, parse_catalogue

    def where(role: str) -> str:
        if ps.path is not None:
            return str(ps.path / f"{role}.txt")
        return str(PROMPT_DIR / (_DATA_ROLES[role] or f"<builtin {role}>"))

    for role in ("judge_tools", "tool_simulator_tools"):
        check_tool_list(ps.templates[role].substitute(), where(role))
    try:
        parse_catalogue(ps.templates["tool_errors"].substitute(), where("tool_errors"))
    except CatalogueError as exc:
        raise PromptSetError(str(exc)) from None


def _check_set(ps: PromptSet) -> None:
    _check_dimensions(ps)
    _check_data(ps)


def _check_dimensions(ps: PromptSet) -> None:
    """A rubric template that places `$dimensions` needs every dimension's `## name` section."""
    defined = ps.sections("judge_dimensions")
    for subset, dims in JUDGE_DIMENSIONS.items():
        role = f"judge_rubric_{subset}"
        if "dimensions" in ps.templates[role].get_identifiers():
            missing = [d for d in dims if d not in defined]
            if missing:
                where = (ps.path / "judge_dimensions.txt" if ps.path
                         else PROMPT_DIR / "travel_dimensions.txt")
                raise PromptSetError(f"{where}: no `## {missing[0]}` section, which {role} "
                                     "needs for $dimensions")


PROMPT_ROLES = PromptRoles(
    templates={
        **{name: RoleSpec(req, opt, PROMPT_DIR / f"{name}.txt", strip_newlines=True)
           for name, (req, opt) in _PLACEHOLDERS.items()},
        **{name: RoleSpec(req, opt, PROMPT_DIR / f if f else None)
           for name, (req, opt, f) in _JUDGE_ROLES.items()},
        **{name: RoleSpec(builtin=PROMPT_DIR / f if f else None)
           for name, f in _DATA_ROLES.items()},
    },
    simulator=SIMULATOR_PROMPT,
    check=_check_set,
)
"""Every role of a TravelBench prompt set (docs/prompts.md)."""
PROTOCOL_ROLES = tuple(_PLACEHOLDERS)

TEMPLATES = load_templates(older=PROTOCOLS_V3)
"""The "project" rendering's built-in templates (protocols/3; final newlines stripped)."""
PROMPT_DIGEST = templates_digest(TEMPLATES)
"""Content hash of the prompt files: changes whenever any prompt text changes."""
load_templates()  # the current files are checked too
RAW_TEMPLATES = {name: Template((PROMPT_DIR / f"{name}.txt").read_text(encoding="utf-8"))
                 for name in _PLACEHOLDERS}
"""The current built-in files as they are (final newlines kept), for the reference's
rendering."""


def _templates(settings: ProtocolSettings | None) -> dict[str, Template]:
    """The prompt set's templates (`settings.prompts`), else the built-in ones."""
    prompts = settings.prompts if settings is not None else None
    if prompts is None or prompts.builtin:
        return TEMPLATES
    return {role: prompts.templates[role] for role in PROTOCOL_ROLES}


def prompt_digest(settings: ProtocolSettings) -> str:
    """What records carry as `extra.prompt_digest`: the content hash of the templates used."""
    if _reference(settings):
        return templates_digest({r: _template(settings, r) for r in PROTOCOL_ROLES})
    templates = _templates(settings)
    return PROMPT_DIGEST if templates is TEMPLATES else templates_digest(templates)


def _reference(settings: ProtocolSettings | None) -> bool:
    return settings is not None and reference_rendering(settings.options)


def _template(settings: ProtocolSettings, role: str) -> Template:
    """A protocol role's template; with the reference's rendering its text as it is."""
    if not _reference(settings):
        return _templates(settings)[role]
    prompts = settings.prompts
    if prompts is None or prompts.builtin:
        return RAW_TEMPLATES[role]
    return Template(prompts.texts[role])


def _has_cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def reply_language(travel: TravelBenchTask, settings: ProtocolSettings) -> str:
    """The language replies must be written in: explicit setting, else the query's language."""
    if settings.language and settings.language != "auto":
        return settings.language
    return "Chinese" if _has_cjk(travel.query) else "English"


def travel_of(task: Task) -> TravelBenchTask:
    """The task's TravelBench payload (GroupTravelBench's is one too)."""
    return task.payload_as(TravelBenchTask)


def _context(travel: TravelBenchTask, reference: bool = False) -> str:
    return travel.context if reference else travel.context.strip() or "(none)"


def prompt_version(settings: ProtocolSettings) -> str:
    """What records carry as `extra.prompt_version`: the prompt rules' version + the layout
    (+ "ref-render" with the reference's rendering, + `<name>@<digest>` of a prompt set other
    than the built-in one)."""
    if _reference(settings):
        base = f"{PROMPT_VERSION}+{settings.layout}+ref-render"
    else:
        base = f"{PROJECT_PROMPT_VERSION}+{settings.layout}"
    return base if settings.prompts is None else settings.prompts.version(base)


def _situation(travel: TravelBenchTask, settings: ProtocolSettings) -> dict[str, str]:
    return {"time": travel.time, "context": _context(travel, _reference(settings)),
            "language": reply_language(travel, settings)}


def agent_system_prompt(kind: str, task: Task, settings: ProtocolSettings) -> str:
    """The agent's system prompt for `kind` in single_turn | multi_turn | unsolvable.

    Layout "prefix": the same for every task. Layout "reference": with the task's situation,
    in place when the template has `$time`/`$context`, else `agent_background` appended.
    """
    template = _template(settings, f"agent_{kind}")
    fields = {"tag": settings.abstain_tags[0]} if kind == "unsolvable" else {}
    placed = _SITUATION.intersection(template.get_identifiers())
    if settings.layout == "prefix":
        if placed:
            raise ValueError(
                f"prompt agent_{kind} uses ${', $'.join(sorted(placed))}: layout 'prefix' needs "
                "a system prompt without the task's situation (use layout 'reference')"
            )
        return template.substitute(fields)
    situation = _situation(travel_of(task), settings)
    text = template.substitute(fields, **situation)
    if placed:
        return text
    background = _template(settings, "agent_background").substitute(situation)
    return f"{text.rstrip(chr(10))}\n\n{background}"


def agent_first_message(task: Task, settings: ProtocolSettings) -> str:
    """The first user message: the query alone (layout "reference"), or the situation (time,
    context, reply language) and the query (layout "prefix")."""
    travel = travel_of(task)
    if settings.layout == "reference":
        return travel.query
    return _template(settings, "agent_situation").substitute(query=travel.query,
                                                            **_situation(travel, settings))


def step_limit_reply(settings: ProtocolSettings | None = None) -> str:
    """The agent's reply when one user turn used up `max_steps` agent calls."""
    return _templates(settings)["agent_step_limit"].substitute()


def user_system_prompt(task: Task, settings: ProtocolSettings) -> str:
    """The user simulator's system prompt (hidden intent and profile; never shown to the agent)."""
    travel = travel_of(task)
    if _reference(settings):  # the task's fields as they are
        intent, profile = travel.intent, travel.user_profile or ""
    else:
        intent = travel.intent.strip() or travel.query
        profile = (travel.user_profile or "").strip() or "(no particular preferences)"
    return _template(settings, "user_simulator").substitute(
        time=travel.time,
        context=_context(travel, _reference(settings)),
        intent=intent,
        profile=profile,
        query=travel.query,
        finish_marker=settings.finish_marker,
        language=reply_language(travel, settings),
    )
