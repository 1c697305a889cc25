"""TravelBench's environment: the cached tool sandbox with the reference's argument rules
(`validation.py`, place names resolved with `adcode.py`) and the reference's error texts."""

from __future__ import annotations

from functools import partial
from typing import Any

from cache_store.types import SandboxTexts, Validator
from evaluator.benchmarks.base import BenchmarkError, EnvironmentRequest
from evaluator.benchmarks.cached_sandbox import CachedSandbox

from .adcode import AdcodeTableError, regions_for
from .validation import validate

TEXTS = SandboxTexts(
    unknown_tool="工具不存在: {name}",
    malformed_json="参数不是合法的 JSON: {error}",
    not_object="参数必须是 JSON 对象, 得到 {type}",
    no_simulator="No cached data and no LLM simulator configured",
    simulation_failed="LLM simulation failed: {error}",
    live_failed="live tool failed: {error}",
    empty_result="未找到相关信息，请检查参数是否正确；如参数无误，可能暂时没有相关数据。",
)
"""What the agent reads when a call cannot be answered: the reference's texts."""


def adcode_args(request: EnvironmentRequest) -> dict[str, Any]:
    """Where the division table is looked for when `sandbox.adcode_table` is ""."""
    ts = request.taskset
    return {"data_root": ts.files[0].parent if ts.files else None,
            "builtin_sample": ts.builtin}


def validator(request: EnvironmentRequest) -> tuple[Validator, dict[str, Any]]:
    """The reference's validation (`sandbox.validation` mode) with the run's division table;
    BenchmarkError (one line: the path and how to set it) when the table cannot be read."""
    s = request.config.sandbox
    names = [t["function"]["name"] for t in request.taskset.tool_schemas]
    try:  # loads and caches the table: the check before the engine and the open share it
        regions, info = regions_for(s.adcode_table, names, **adcode_args(request))
    except AdcodeTableError as exc:
        raise BenchmarkError(f"sandbox: {exc}") from None
    return partial(validate, mode=s.validation, regions=regions), {"validation": s.validation,
                                                                   **info}


ENVIRONMENT = CachedSandbox(validator=validator, texts=TEXTS)
