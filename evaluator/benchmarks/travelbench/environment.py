"""TravelBench's environment: the cached tool sandbox with the reference's argument rules
(`validation.py`, place names resolved with `adcode.py`), the error texts of the run's prompt
set (`tool_errors.py`) and, with `options.rendering = "reference"`, the reference's way with
calls (`cache_store.types.SandboxStyle`)."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import msgspec

from cache_store.types import SandboxStyle, SandboxTexts, Validator
from evaluator.benchmarks.base import BenchmarkError, EnvironmentRequest
from evaluator.benchmarks.cached_sandbox import CachedSandbox

from .adcode import AdcodeTableError, regions_for
from .options import DEFAULT, TravelBenchOptions, reference_rendering
from .tool_errors import CatalogueError, builtin, of_prompts
from .validation import validate

TEXTS = builtin().sandbox_texts()
"""The sandbox's texts of the built-in prompt set."""


def adcode_args(request: EnvironmentRequest) -> dict[str, Any]:
    """Where the division table is looked for when `sandbox.adcode_table` is ""."""
    ts = request.taskset
    return {"data_root": ts.files[0].parent if ts.files else None,
            "builtin_sample": ts.builtin}


def _catalogue(request: EnvironmentRequest) -> Any:
    try:
        return of_prompts(request.prompts)
    except CatalogueError as exc:
        raise BenchmarkError(f"prompts: {exc}") from None


def validator(request: EnvironmentRequest) -> tuple[Validator, dict[str, Any]]:
    """The reference's validation (`sandbox.validation` mode) with the run's division table and
    the prompt set's error texts; BenchmarkError (one line: the path and how to set it) when the
    table cannot be read."""
    s = request.config.sandbox
    names = [t["function"]["name"] for t in request.taskset.tool_schemas]
    try:  # loads and caches the table: the check before the engine and the open share it
        regions, info = regions_for(s.adcode_table, names, **adcode_args(request))
    except AdcodeTableError as exc:
        raise BenchmarkError(f"sandbox: {exc}") from None
    return partial(validate, mode=s.validation, regions=regions, texts=_catalogue(request),
                   reference=reference_rendering(run_options(request))), {
        "validation": s.validation, **info}


def texts(request: EnvironmentRequest) -> SandboxTexts:
    """The sandbox's texts (unknown tool, simulator failures, empty answers) of the run's set."""
    return _catalogue(request).sandbox_texts()


def run_options(request: EnvironmentRequest) -> TravelBenchOptions:
    """The run's TravelBench options (its config's `[options]`, completed and checked when the
    config was read)."""
    table = getattr(request.config, "options", None)
    if not table:
        return DEFAULT
    try:
        return msgspec.convert(dict(table), TravelBenchOptions, strict=True)
    except msgspec.ValidationError as exc:
        raise BenchmarkError(f"options of TravelBench: {exc}") from None


def style(request: EnvironmentRequest) -> SandboxStyle:
    """The reference's way with calls under `rendering = "reference"`: unparseable arguments
    validated as {"raw_arguments": text}, the simulator shown the schema as Python renders it,
    taken from the prompt set's `tool_simulator_tools` when it has one."""
    if not reference_rendering(run_options(request)):
        return SandboxStyle()
    tools = simulator_tools(request.prompts)
    return SandboxStyle(raw_arguments=True, parameters="python",
                        simulator_tools=None if tools is None else tuple(tools))


def simulator_tools(prompts: Any) -> list[dict[str, Any]] | None:
    """The tool list of the set's `tool_simulator_tools` role (None: the set has none)."""
    if prompts is None or prompts.builtin:
        return None
    text = prompts.templates["tool_simulator_tools"].substitute()
    return json.loads(text) if text.strip() else None


ENVIRONMENT = CachedSandbox(validator=validator, texts=texts, style=style)
