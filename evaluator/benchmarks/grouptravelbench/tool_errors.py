"""What the agent reads when GroupTravelBench's sandbox refuses or cannot answer a call: the
error texts, data of the prompt set (role `tool_errors`).

A catalogue (`evaluator.benchmarks.error_catalogue`) maps each check of `validation.py` (the
keys of `FIELDS`) onto a template of the fields it may use; a key may be worded per tool
(`<tool>:<key>`) and per tool and argument (`<tool>:<argument>:<key>`), as the reference writes
most argument names into its texts. The built-in catalogue (`prompts/tool_errors.json`) is this
project's wording (the texts runs had before it became data); an import of the reference
(`agentsweep prompts import`, `prompt_import_data.py`) holds the reference's texts, read from
its tool modules' validators, its tool registry, agent loop and tool simulator.

Field values, as the validator computes them: `key` the argument's name; `value` its value (a
string, a number) and `value_repr` Python's repr of it; `accepted` the tool's argument names
joined by ", " in the schema's order, `accepted_repr` Python's repr of that list,
`accepted_quoted` / `unknown_quoted` / `missing_quoted` the names sorted, quoted and joined by
", "; `expected` the schema's type (an `anyOf`'s types joined by " or "), `expected_repr`
Python's repr of the `anyOf`'s types; `got` the value's Python type name; `allowed` /
`allowed_repr` a choice's values joined by ", " / as a Python list; `low` and `high` a range's
bounds; `lon`, `lat` a coordinate's numbers.
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

_NAMES = ("key", "accepted", "accepted_repr", "accepted_quoted", "unknown_quoted")
_VALUE = ("key", "value", "value_repr")
# key -> (the error category it counts as, the fields its template may use)
KEYS: dict[str, tuple[str, tuple[str, ...]]] = {
    # the schema: unknown and missing arguments, null and JSON types
    "unknown_parameter": ("unknown_parameter", _NAMES),
    "missing_required": ("missing_required", ("key", "missing_quoted")),
    "null_not_allowed": ("wrong_type", ("key",)),
    "wrong_type": ("wrong_type", ("key", "expected", "got")),
    "wrong_type_any": ("wrong_type", ("key", "expected", "expected_repr", "got")),
    # an argument named like a parameter of the reference's dispatcher (self, name)
    "reserved_argument": ("unknown_parameter", _NAMES),
    # values
    "empty": ("missing_required", ("key",)),
    "city_unknown": ("out_of_range", _VALUE),
    "date_format": ("out_of_range", _VALUE),
    "date_invalid": ("out_of_range", _VALUE),
    "time_format": ("out_of_range", _VALUE),
    "time_hour": ("out_of_range", _VALUE),
    "time_minute": ("out_of_range", _VALUE),
    "time_window": ("out_of_range", ()),
    "choice": ("bad_enum", ("key", "allowed", "allowed_repr", "value", "value_repr")),
    "range_low": ("out_of_range", ("key", "low", "high", "value")),   # two-sided, below
    "range_high": ("out_of_range", ("key", "low", "high", "value")),  # two-sided, above
    "minimum": ("out_of_range", ("key", "low", "value")),
    "above": ("out_of_range", ("key", "low", "value")),               # must be > low
    "price_order": ("out_of_range", ()),
    "coordinate_format": ("out_of_range", _VALUE),
    "coordinate_numbers": ("out_of_range", _VALUE),
    "longitude_range": ("out_of_range", ("key", "value", "lon")),
    "latitude_range": ("out_of_range", ("key", "value", "lat")),
    "transit_city": ("missing_required", ()),
    # an exception while checking (only with a schema unlike the reference's)
    "invalid_value": ("wrong_type", ("error", "type")),
    # the sandbox (cache_store.types.SandboxTexts)
    "unknown_tool": ("unknown_tool", ("name",)),
    "malformed_json": ("malformed_json", ("error",)),
    "not_object": ("malformed_json", ("type",)),
    "no_simulator": ("", ()),
    "simulation_failed": ("", ("name", "error")),
    "live_failed": ("execution_error", ("error",)),
    "empty_result": ("", ()),
}
FIELDS: dict[str, frozenset[str]] = {k: frozenset(f) for k, (_, f) in KEYS.items()}
CATEGORY: dict[str, str] = {k: c for k, (c, _) in KEYS.items()}
RESERVED = ("self", "name")
"""Argument names that collide with the reference's dispatcher `execute_tool(self, name,
**arguments)`: such a call fails there before its tool is reached."""

ToolErrorTexts = ErrorCatalogue


def parse_catalogue(text: str, origin: str) -> ErrorCatalogue:
    """A catalogue of GroupTravelBench's keys from its JSON text; CatalogueError naming
    `origin` and the key when it cannot be used."""
    return parse_with_fields(text, origin, FIELDS)


@cache
def builtin() -> ErrorCatalogue:
    return parse_catalogue(BUILTIN_FILE.read_text(encoding="utf-8"), str(BUILTIN_FILE))


def of_prompts(prompts: Any) -> ErrorCatalogue:
    """The catalogue of a prompt set (None or the built-in set: the built-in catalogue)."""
    if prompts is None or prompts.builtin:
        return builtin()
    return parse_catalogue(prompts.texts["tool_errors"], str(prompts.path / "tool_errors.txt"))


__all__ = ["CATEGORY", "FIELDS", "KEYS", "RESERVED", "SANDBOX_KEYS", "CatalogueError",
           "ToolErrorTexts", "builtin", "dump_catalogue", "of_prompts", "parse_catalogue"]
