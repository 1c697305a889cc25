"""GroupTravelBench's environment: its 10 tools (`bench_data/grouptravelbench_tools.json`)
answered by the cached tool sandbox, misses simulated by the tool simulator from the nearest
cached examples (the seed's appendix B.3), arguments checked by `validation.py` first.

Before any engine starts, `check` also finds and checks the POI table the rule metrics will
read (`options.poi_table`; `poi_file.resolve`): a table with a bad value stops the run naming
its file, line and field, and under the `paper` profile a run without a table stops with one
line naming the option, unless the run says `poi_table = "none"` (then recorded as the
deviation "GU/GF/PV without POI table", `deviations`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cache_store.types import SandboxTexts
from evaluator.benchmarks.base import BenchmarkError, EnvironmentRequest
from evaluator.benchmarks.cached_sandbox import CachedSandbox

from .options import POI_FILE, POI_NONE, GroupOptions
from .poi_file import PoiTableError, load_poi_table, resolve
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

NO_POI_TABLE = "GU/GF/PV without POI table"
POI_HELP = (f"give the reference's {'/'.join(POI_FILE)} with --poi-table PATH (or put "
            f"{POI_FILE[0]}/ beside the task file), or pass --set options.poi_table={POI_NONE} "
            f"to score {NO_POI_TABLE} (recorded as a deviation)")


def _options(config: Any) -> GroupOptions:
    from . import BENCHMARK

    options = BENCHMARK.read_options(config.options)
    assert isinstance(options, GroupOptions)
    return options


def check_poi_table(request: EnvironmentRequest) -> None:
    """The run's POI table exists and is usable (module doc); BenchmarkError otherwise."""
    config = request.config
    options = _options(config)
    files = request.taskset.files
    path = resolve(options.poi_table, files[0] if files else None)
    if path is None:
        if config.profile == "paper" and options.poi_table != POI_NONE:
            raise BenchmarkError(f"grouptravelbench: no POI table: the paper profile scores "
                                 f"restaurants, category and hotel preferences and opening "
                                 f"hours from it; {POI_HELP}")
        return
    try:
        load_poi_table(path)
    except PoiTableError as exc:
        raise BenchmarkError(f"grouptravelbench: {exc}") from None


def deviations(config: Any) -> dict[str, dict[str, Any]]:
    """The run's deviation that options alone do not show: a paper run without the POI table."""
    if config.profile != "paper" or _options(config).poi_table != POI_NONE:
        return {}
    return {"options.poi_table": {"profile": "the reference's POI table", "used": POI_NONE,
                                  "note": NO_POI_TABLE}}


@dataclass(frozen=True)
class GroupEnvironment(CachedSandbox):
    """The cached sandbox, with the POI table checked before the run starts."""

    def check(self, request: EnvironmentRequest) -> None:
        super().check(request)
        check_poi_table(request)


ENVIRONMENT = GroupEnvironment(validator=validator, texts=TEXTS)
