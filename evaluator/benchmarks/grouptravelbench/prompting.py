"""GroupTravelBench's prompt roles, and their texts rendered for one chat.

Every text any model of the benchmark reads is a role of the prompt set (docs/prompts.md): the
built-in set is `prompts/<role>.txt` (this project's words), an imported set holds the
reference's texts (`prompt_import.py`). The structure that joins them (which message carries
what, in which order) is the reference's for every set (`render.py`, `protocol.py`,
`judges.py`), so with an imported set every message is the reference's byte for byte.

Templates use `string.Template` syntax (`$name`, `$$` for a dollar) and are used exactly as
read: no newline is added or dropped. Three roles hold data, read as they are (`DATA_ROLES`):
the agent's tool list and the tool simulator's (JSON arrays of OpenAI tools; empty in the
built-in set: the data's tools) and the sandbox's error texts (`tool_errors.py`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from string import Template
from typing import Any

from evaluator.prompt_sets import (
    PromptRoles,
    PromptSet,
    PromptSetError,
    RoleSpec,
    check_tool_list,
    load_prompt_set,
)

PROMPT_DIR = Path(__file__).with_name("prompts")
SIMULATOR_PROMPT = Path(__file__).resolve().parents[3] / "cache_store" / "prompts" / \
    "tool_simulator_v1.txt"
"""The cached sandbox's tool-simulator prompt (the built-in set's `tool_simulator` role)."""

F = frozenset
# role -> (placeholders it must use, placeholders it may use)
ROLE_FIELDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    # the agent: its system prompt (with the preference table block), the reminder appended
    # when it was @-mentioned, the table refresh (request wrapper and instruction), the
    # summary instruction, the final-plan instruction (appended to the system prompt) and
    # the directive line that repeats it in the chat, the forced-reply instruction, and the
    # tool result for arguments that are not JSON
    "agent_system": (F({"table_block"}), F({"users", "query", "context", "time"})),
    "agent_table_block": (F({"table"}), F()),
    "agent_mentioned": (F(), F()),
    "agent_table_request": (F({"chat"}), F({"ask"})),
    "agent_table_ask": (F(), F()),
    "agent_convergence": (F(), F()),
    "agent_final_plan": (F(), F()),
    "agent_final_directive": (F(), F({"ask"})),
    "agent_force_finish": (F(), F()),
    "agent_bad_arguments": (F(), F({"raw"})),
    # placeholders that keep user/assistant turns alternating (agent and users alike)
    "chat_opening": (F(), F()),
    "chat_gap": (F(), F()),
    # each user simulator: its system prompt, the two compromise attitudes, the reminder
    # appended when @-mentioned
    "user_system": (F({"compromise"}), F({"name", "users", "query", "time", "preference"})),
    "user_compromise_yes": (F(), F()),
    "user_compromise_no": (F(), F()),
    "user_mentioned": (F(), F()),
    # the five-dimension judge and the lines of its transcript
    "judge_system": (F(), F()),
    "judge": (F({"conversation"}), F({"query", "context", "users", "preferences"})),
    "judge_tools_only": (F(), F()),
    "judge_tool_call": (F(), F({"name"})),
    "judge_tool_arguments": (F(), F({"arguments"})),
    "judge_tool_error": (F(), F({"name", "result"})),
    "judge_tool_result": (F(), F({"name"})),
    "judge_result_cut": (F(), F()),
    "judge_no_preferences": (F(), F()),
    # the meta-judge and the lines of the first review it is shown
    "meta_system": (F(), F()),
    "meta": (F({"conversation", "ratings"}),
             F({"query", "context", "users", "preferences", "reasoning"})),
    "meta_rating": (F(), F({"rating"})),
    "meta_reasoning": (F(), F({"reasoning"})),
    "meta_no_reasoning": (F(), F()),
    "meta_no_rating": (F(), F()),
}

DATA_ROLES: dict[str, Path | None] = {
    # the tool list the agent is offered (a JSON array of OpenAI tools; empty: the data's);
    # used under `options.rendering = "reference"`
    "agent_tools": None,
    # the tool list the tool simulator takes descriptions and schemas from (empty: the
    # agent's); used under `options.rendering = "reference"`
    "tool_simulator_tools": None,
    # the sandbox's error texts (tool_errors.py)
    "tool_errors": PROMPT_DIR / "tool_errors.json",
}
TOOL_LIST_ROLES = ("agent_tools", "tool_simulator_tools")


def _where(ps: PromptSet, role: str) -> str:
    if ps.path is not None:
        return str(ps.path / f"{role}.txt")
    return str(DATA_ROLES[role] or f"<builtin {role}>")


def tool_list(ps: PromptSet | None, role: str) -> list[dict[str, Any]] | None:
    """The tool list of a data role (None: the built-in set or an empty text)."""
    if ps is None or ps.builtin or not ps.texts[role].strip():
        return None
    return json.loads(ps.texts[role])


def _check_set(ps: PromptSet) -> None:
    """The data roles of a set can be used (PromptSetError naming the file otherwise)."""
    from .tool_errors import CatalogueError, parse_catalogue

    for role in TOOL_LIST_ROLES:
        check_tool_list(ps.texts[role], _where(ps, role), typed=True)
    try:
        parse_catalogue(ps.texts["tool_errors"], _where(ps, "tool_errors"))
    except CatalogueError as exc:
        raise PromptSetError(str(exc)) from None


PROMPT_ROLES = PromptRoles(
    templates={role: RoleSpec(req, opt, PROMPT_DIR / f"{role}.txt")
               for role, (req, opt) in ROLE_FIELDS.items()},
    simulator=SIMULATOR_PROMPT,
    check=_check_set,
    data=DATA_ROLES,
)


def builtin_set() -> PromptSet:
    return load_prompt_set("builtin", PROMPT_ROLES)


@dataclass(frozen=True)
class Texts:
    """The texts of one prompt set, rendered on demand (`t.render(role, **fields)`)."""

    templates: dict[str, Template]
    builtin: bool

    @classmethod
    def of(cls, prompts: PromptSet | None) -> Texts:
        ps = prompts if prompts is not None else _BUILTIN
        return cls(ps.templates, ps.builtin)

    def render(self, role: str, **fields: str) -> str:
        return self.templates[role].substitute(fields)

    def text(self, role: str) -> str:
        return self.templates[role].substitute()


_BUILTIN = builtin_set()


RULE = "\n\n---\n\n"
"""The separator between the fixed sections and the task's in the prefix layout."""


def prefix_layout(text: str, where: str = "template") -> str:
    """A judge template in the prefix layout (`options.judge_layout = "prefix"`): its top-level
    sections (`# ` headings) that hold no field first, in their order, then those that hold
    one (the task's material, the chat), in their order, after a `---` rule; a trailing `---`
    rule of a moved section is dropped. Every line of the text is kept but those rules.
    ValueError naming `where` when no section holds a field."""
    head, *sections = re.split(r"(?m)^(?=# )", text)
    moved = [s for s in sections if Template(s).get_identifiers()]
    if not moved:
        raise ValueError(f"{where}: no `# ` section holds a field")
    fixed = head + "".join(s for s in sections if not Template(s).get_identifiers())
    tails = [re.sub(r"\n---$", "", s.rstrip()).rstrip() for s in moved]
    return fixed.rstrip("\n") + RULE + "\n\n".join(tails) + "\n"


@cache
def prefix_template(role: str) -> Template:
    """The built-in role's template (`prompts/<role>.txt`) in the prefix layout."""
    return Template(prefix_layout(_BUILTIN.texts[role], str(PROMPT_DIR / f"{role}.txt")))
