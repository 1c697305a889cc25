"""Values that cross the sandbox boundary."""

from __future__ import annotations

from collections.abc import Callable
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
    `error` of a `{"error": ...}` JSON answer (`{name}`, `{error}`, `{type}` filled in), except
    `empty_result`, the simulator's answer when the model returns nothing. A benchmark's
    environment gives its own (TravelBench: its reference's texts)."""

    unknown_tool: str = "unknown tool: {name}"
    malformed_json: str = "the arguments are not valid JSON: {error}"
    not_object: str = "the arguments must be a JSON object, got {type}"
    no_simulator: str = "No cached data and no LLM simulator configured"
    simulation_failed: str = "LLM simulation failed: {error}"
    live_failed: str = "live tool failed: {error}"
    empty_result: str = ("No information found; check the arguments. If they are right, "
                         "there may be no data for this request.")


Validator = Callable[[str, dict[str, Any], dict[str, Any], str], "tuple[str, str] | None"]
"""(tool, arguments, the tool's JSON-schema `parameters`, task time) -> None when the call is
valid, else (error category, the `{"error": ...}` JSON text the agent sees)."""
