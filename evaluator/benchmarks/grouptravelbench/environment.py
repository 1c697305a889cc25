"""GroupTravelBench's environment: its 10 tools (`bench_data/grouptravelbench_tools.json`)
answered by the cached tool sandbox, misses simulated by the tool simulator from the nearest
cached examples (the seed's appendix B.3), arguments checked by `validation.py` first."""

from __future__ import annotations

from cache_store.types import SandboxTexts
from evaluator.benchmarks.cached_sandbox import CachedSandbox

from .validation import validator

TEXTS = SandboxTexts(
    unknown_tool="no tool named {name}",
    malformed_json="the tool arguments are not valid JSON ({error}); check quotes and brackets",
    not_object="the tool arguments must be a JSON object, got {type}",
    no_simulator="no cached answer and no tool simulator configured",
    simulation_failed="tool simulation failed: {error}",
    live_failed="live tool failed: {error}",
    empty_result="Nothing found. Check the arguments; if they are right, there may be no data "
                 "for this request.",
)
"""What the agent reads when a call cannot be answered (this project's wording)."""

ENVIRONMENT = CachedSandbox(validator=validator, texts=TEXTS)
