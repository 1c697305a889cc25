"""GroupTravelBench's environment: its 10 tools (`grouptravelbench_tools.json`, next to data.py)
answered by the cached tool sandbox, misses simulated by the tool simulator from the nearest
cached examples (the seed's appendix B.3), arguments checked by `validation.py` first, the
agent told what went wrong in the words of the run's prompt set (`tool_errors.py`). With
`options.rendering = "reference"` the sandbox works as the reference's does
(`cache_store.types.SandboxStyle`): the simulator is shown a tool's schema as Python renders a
dict, from the prompt set's `tool_simulator_tools` when it has one, and the checks follow the
reference's dispatcher (`validation.validate`, `reference`).

Before any engine starts, `check` also finds and checks the POI table the rule metrics will
read (`options.poi_table`; `poi_file.resolve`): a table with a bad value stops the run naming
its file, line and field, and under the `paper` profile a run without a table stops with one
line naming the option, unless the run says `poi_table = "none"` (then recorded as the
deviation "GU/GF/PV without POI table", `deviations`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import msgspec

from cache_store.types import SandboxStyle, SandboxTexts, Validator
from evaluator.benchmarks.base import BenchmarkError, EnvironmentRequest
from evaluator.benchmarks.cached_sandbox import CachedSandbox
from evaluator.benchmarks.travelbench.adcode import AdcodeTableError, RegionTable, load_regions

from .options import POI_FILE, POI_NONE, GroupOptions, reference_rendering
from .poi_file import PoiTableError, load_poi_table, resolve
from .prompting import tool_list
from .tool_errors import CatalogueError, ErrorCatalogue, of_prompts
from .validation import validate

NO_POI_TABLE = "GU/GF/PV without POI table"
POI_HELP = (f"give the reference's {'/'.join(POI_FILE)} with --poi-table PATH (or put "
            f"{POI_FILE[0]}/ beside the task file), or pass --set options.poi_table={POI_NONE} "
            f"to score {NO_POI_TABLE} (recorded as a deviation)")


def _options(config: Any) -> GroupOptions:
    # read as Benchmark.read_options reads them (the package imports this module, not back)
    try:
        return msgspec.convert(dict(config.options or {}), GroupOptions, strict=True)
    except msgspec.ValidationError as exc:
        raise BenchmarkError(f"options of GroupTravelBench: {exc}") from None


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


def _catalogue(request: EnvironmentRequest) -> ErrorCatalogue:
    try:
        return of_prompts(request.prompts)
    except CatalogueError as exc:
        raise BenchmarkError(f"prompts: {exc}") from None


def place_table(setting: str, data_root: str | Path | None
                ) -> tuple[RegionTable | None, dict[str, Any]]:
    """The division table city names are checked against (`sandbox.adcode_table`: "off" = no
    check, a path = that table, "" = `<data_root>/adcode.txt` when present, else no check)."""
    if setting == "off":
        return None, {"adcode_checks": False, "adcode_source": "off (sandbox.adcode_table)"}
    if setting:
        path, source = Path(setting), "sandbox.adcode_table"
    elif data_root is not None and (Path(data_root) / "adcode.txt").is_file():
        path, source = Path(data_root) / "adcode.txt", "dataset"
    else:
        return None, {"adcode_checks": False,
                      "adcode_source": "no adcode.txt next to the data: city names unchecked"}
    try:
        table = load_regions(path)
    except AdcodeTableError as exc:
        raise BenchmarkError(f"sandbox: {exc} (needed to check GroupTravelBench city names; "
                             "set sandbox.adcode_table = PATH, or \"off\" to skip that check)"
                             ) from None
    return table, {"adcode_checks": True, "adcode_source": source, "adcode_table": table.path,
                   "adcode_sha256": table.sha256, "adcode_names": len(table)}


def validator(request: EnvironmentRequest) -> tuple[Validator, dict[str, Any]]:
    """Per-run factory for `CachedSandbox`: the reference's rules with the run's division
    table and the prompt set's error texts, and their description for the manifest.
    `sandbox.validation` is not read: the reference's checks already include the schema
    types, so "strict" would add nothing."""
    ts = request.taskset
    regions, info = place_table(request.config.sandbox.adcode_table,
                                ts.files[0].parent if ts.files else None)
    return partial(validate, regions=regions, texts=_catalogue(request),
                   reference=reference_rendering(_options(request.config))), {
        "validation": "grouptravelbench-reference", **info}


def texts(request: EnvironmentRequest) -> SandboxTexts:
    """The sandbox's texts (unknown tool, simulator failures, empty answers) of the run's set."""
    return _catalogue(request).sandbox_texts()


def style(request: EnvironmentRequest) -> SandboxStyle:
    """The reference's way with calls under `rendering = "reference"` (module doc); the
    reference's agent catches unparseable arguments itself (`agent_turn`)."""
    if not reference_rendering(_options(request.config)):
        return SandboxStyle()
    tools = tool_list(request.prompts, "tool_simulator_tools")
    return SandboxStyle(parameters="python",
                        simulator_tools=None if tools is None else tuple(tools))


@dataclass(frozen=True)
class GroupEnvironment(CachedSandbox):
    """The cached sandbox, with the POI table checked before the run starts."""

    def check(self, request: EnvironmentRequest) -> None:
        super().check(request)
        check_poi_table(request)


ENVIRONMENT = GroupEnvironment(validator=validator, texts=texts, style=style)
