"""Values that cross the sandbox boundary."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

# Where a tool result came from. `hit`: the imported store; `simulated`: the ICL simulator
# (or its persisted answer); `overlay`: the live-mode overlay store; `error`: validation
# failure or an execution error, returned to the agent as text; `miss`: no cached answer and
# no simulator configured (the reference's "No cached data..." message; not an agent error).
ToolSource = Literal["hit", "simulated", "overlay", "live", "error", "miss"]

# Categories of tool-call errors (counted in trajectories and reports).
ERROR_CATEGORIES = (
    "malformed_json",      # arguments are not a JSON object
    "unknown_tool",        # no tool of that name
    "unknown_parameter",   # a key the schema does not define
    "missing_required",    # a required key is absent
    "wrong_type",          # JSON type differs from the schema
    "bad_enum",            # value not in the schema's enum
    "out_of_range",        # numeric range / length / format checks
    "execution_error",     # the tool (simulator, live function) failed
)


class ToolOutcome(msgspec.Struct, omit_defaults=True):
    """The answer to one tool call, as the agent sees it plus its provenance."""

    content: str
    source: ToolSource
    error_category: str | None = None
    cache_key: str | None = None
    latency_s: float = 0.0
    n_examples: int = 0     # retrieved examples used by the simulator (0 unless simulated)

    @property
    def is_error(self) -> bool:
        return self.source == "error"


class SandboxTexts(msgspec.Struct, frozen=True):
    """What the sandbox tells the agent when it cannot answer a call: each text is the
    `error` of a `{"error": ...}` JSON answer (`{name}`, `{error}`, `{type}` filled in; other
    braces are kept), except `empty_result`, the simulator's answer when the model returns
    nothing, and the texts named in `bare`, which are sent as they are. A benchmark's
    environment gives its own (TravelBench: from its prompt set)."""

    unknown_tool: str = "unknown tool: {name}"
    malformed_json: str = "the arguments are not valid JSON: {error}"
    not_object: str = "the arguments must be a JSON object, got {type}"
    no_simulator: str = "No cached data and no LLM simulator configured"
    simulation_failed: str = "LLM simulation failed: {error}"
    live_failed: str = "live tool failed: {error}"
    empty_result: str = ("No information found; check the arguments. If they are right, "
                         "there may be no data for this request.")
    bare: tuple[str, ...] = ()

    def text(self, kind: str, /, **values: Any) -> str:
        """The answer text of `kind` (a field name) with `values` filled in."""
        body = fill(getattr(self, kind), values)
        if kind == "empty_result" or kind in self.bare:
            return body
        return json.dumps({"error": body}, ensure_ascii=False)


_FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def fill(template: str, values: dict[str, Any]) -> str:
    """`{name}` replaced by `format(value, "")` (what an f-string writes); other braces kept."""
    def one(m: re.Match[str]) -> str:
        return format(values[m.group(1)], "") if m.group(1) in values else m.group(0)

    return _FIELD.sub(one, template)


@dataclass(frozen=True)
class SandboxStyle:
    """How a benchmark's reference shapes what its sandbox does with a call (defaults: this
    project's way).

    raw_arguments: arguments that are not JSON are validated as `{"raw_arguments": text}` (the
        TravelBench reference's client does that; its validators then refuse the call) instead
        of being a `malformed_json` error.
    parameters: how the simulator prompt shows a tool's parameter schema: "json" (sorted JSON)
        or "python" (Python's rendering of the schema, as a reference that formats the dict
        into its prompt shows it).
    simulator_tools: the tool list (OpenAI format) the simulator prompt takes a tool's
        description and parameters from (a reference may keep its own copy); None = the
        agent's. A tool missing from it is shown with an empty description and no parameters.
    """

    raw_arguments: bool = False
    parameters: Literal["json", "python"] = "json"
    simulator_tools: tuple[dict[str, Any], ...] | None = None


Validator = Callable[[str, dict[str, Any], dict[str, Any], str], "tuple[str, str] | None"]
"""(tool, arguments, the tool's JSON-schema `parameters`, task time) -> None when the call is
valid, else (error category, the `{"error": ...}` JSON text the agent sees)."""
