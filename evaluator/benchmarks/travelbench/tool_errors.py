"""What the agent reads when TravelBench's sandbox refuses or cannot answer a call: the error
texts, data of the prompt set (role `tool_errors`).

A catalogue is a JSON object `key -> {"text": template, "json": bool}`; `{name}` in a template
is filled with a value the validator computed (rendered as an f-string renders it), any other
brace is kept. `json: true` sends the text as `{"error": text}`, false sends it as it is. A key
may be given per tool as `<tool>:<key>` (looked up first), so one tool can word a check its own
way. The built-in catalogue (`prompts/tool_errors.json`) is this project's wording; an import of
the reference (`agentsweep prompts import`) holds the reference's texts, read from its
validators, and this module's keys are what the importer maps them onto. The catalogue itself
(lookup, filling, checks) is the generic `evaluator.benchmarks.error_catalogue`.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from evaluator.benchmarks.error_catalogue import (
    SANDBOX_KEYS,
    CatalogueError,
    ErrorCatalogue,
    dump_catalogue,
)
from evaluator.benchmarks.error_catalogue import parse_catalogue as parse_with_fields

BUILTIN_FILE = Path(__file__).with_name("prompts") / "tool_errors.json"

# key -> the fields its template may use
FIELDS: dict[str, frozenset[str]] = {k: frozenset(v) for k, v in {
    # every tool: required / unknown arguments; `x`: sorted and quoted (unquoted for
    # web_search) as the reference lists them, `x_names`: in the schema's (the call's) order
    "missing_parameters": ("missing", "missing_names"),
    "unknown_parameters": ("unknown", "valid", "unknown_names", "valid_names"),
    # an argument named like a parameter of the reference's tool dispatcher (self, name, time)
    "reserved_argument": ("key", "unknown", "valid", "unknown_names", "valid_names"),
    # an exception while checking (a value of the wrong type, say): its message
    "execution_error": ("error", "type"),
    # ranges
    "days_out_of_range": ("days", "low", "high"),
    "radius_out_of_range": ("radius", "low", "high"),
    "min_rating_out_of_range": ("min_rating",),
    "max_lists_out_of_range": ("max_lists", "low", "high"),
    "max_items_out_of_range": ("max_items", "low", "high"),
    "limit_below_one": ("limit",),
    "price_min_negative": ("price_min",),
    "price_max_negative": ("price_max",),
    "price_order": ("price_min", "price_max"),
    "price_category_required": (),
    "price_sort_needs_category": (),
    # dates (relative to the task's time)
    "date_format": ("date", "date_repr"),
    "date_too_late": ("date", "today", "last_day"),
    "date_check_failed": ("error", "time_repr"),
    # places
    "endpoints_empty": (),
    "origin_unresolved": ("error",),
    "destination_unresolved": ("error",),
    "region_empty": ("key", "region", "region_repr"),
    "region_unknown": ("key", "region", "region_repr"),
    "region_ambiguous": ("key", "region", "region_repr", "candidates", "candidate_names"),
    "region_failed": ("note",),
    "region_unresolved": ("error",),  # map_search_places: a region_* text as the answer
    # coordinates and routes
    "times_exclusive": (),
    "origin_format": ("origin", "origin_repr"),
    "destination_format": ("destination", "destination_repr"),
    "waypoint_format": ("n", "index", "coord", "coord_repr"),
    "mode_unsupported": ("mode",),
    # an unknown traffic_aware value: the reference's KeyError message, or the value's repr
    "traffic_aware_invalid": ("error", "value_repr"),
    "center_format": ("center", "center_repr"),
    "origins_too_few": (),
    "origin_point_format": ("n", "index", "coord", "coord_repr"),
    "origin_point_not_numeric": ("n", "index", "coord", "coord_repr"),
    # strict validation only (JSON-schema checks; the reference has none)
    "schema_type": ("name", "expected", "got"),
    "schema_enum": ("name", "value", "allowed"),
    "schema_range": ("name", "low", "high", "value"),
    # the sandbox (cache_store.types.SandboxTexts)
    "unknown_tool": ("name",),
    "malformed_json": ("error",),
    "not_object": ("type",),
    "no_simulator": (),
    "simulation_failed": ("name", "error"),
    "live_failed": ("error",),
    "empty_result": (),
}.items()}
ALIASES = {"traffic_aware_invalid": "execution_error",
           "origin_point_not_numeric": "origin_point_format"}
"""Keys the reference words with another key's text: an import copies that text."""

ToolErrorTexts = ErrorCatalogue
"""A checked catalogue (the generic `ErrorCatalogue`, `evaluator.benchmarks.error_catalogue`)."""


def parse_catalogue(text: str, origin: str) -> ToolErrorTexts:
    """A catalogue of TravelBench's keys (`FIELDS`) from its JSON text; CatalogueError naming
    `origin` and the key when it cannot be used (`error_catalogue.parse_catalogue`)."""
    return parse_with_fields(text, origin, FIELDS)


@cache
def builtin() -> ToolErrorTexts:
    return parse_catalogue(BUILTIN_FILE.read_text(encoding="utf-8"), str(BUILTIN_FILE))


def of_prompts(prompts: Any) -> ToolErrorTexts:
    """The catalogue of a prompt set (None or the built-in set: the built-in catalogue)."""
    if prompts is None or prompts.builtin:
        return builtin()
    return parse_catalogue(prompts.templates["tool_errors"].substitute(),
                           str(prompts.path / "tool_errors.txt"))


__all__ = ["ALIASES", "FIELDS", "SANDBOX_KEYS", "CatalogueError", "ToolErrorTexts", "builtin",
           "dump_catalogue", "of_prompts", "parse_catalogue"]
