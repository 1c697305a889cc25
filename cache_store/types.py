"""Values that cross the sandbox boundary."""

from __future__ import annotations

from typing import Literal

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
