"""What the agent reads when TravelBench's sandbox refuses or cannot answer a call: the error
texts, data of the prompt set (role `tool_errors`).

A catalogue is a JSON object `key -> {"text": template, "json": bool}`; `{name}` in a template
is filled with a value the validator computed (rendered as an f-string renders it), any other
brace is kept. `json: true` sends the text as `{"error": text}`, false sends it as it is. A key
may be given per tool as `<tool>:<key>` (looked up first), so one tool can word a check its own
way. The built-in catalogue (`prompts/tool_errors.json`) is this project's wording; an import of
the reference (`agentsweep prompts import`) holds the reference's texts, read from its
validators, and this module's keys are what the importer maps them onto.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from cache_store.types import SandboxTexts, fill

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

SANDBOX_KEYS = ("unknown_tool", "malformed_json", "not_object", "no_simulator",
                "simulation_failed", "live_failed", "empty_result")
"""The keys `SandboxTexts` is made of (`empty_result` is always sent as it is)."""

_FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class CatalogueError(ValueError):
    """A catalogue that cannot be used (the message names the file and the key)."""


@dataclass(frozen=True)
class ToolErrorTexts:
    """A checked catalogue. `text(tool, key, **values)` is what the agent reads."""

    entries: Mapping[str, tuple[str, bool]]
    origin: str = ""

    def template(self, tool: str, key: str) -> tuple[str, bool]:
        return self.entries.get(f"{tool}:{key}") or self.entries[key]

    def text(self, tool: str, key: str, /, **values: Any) -> str:
        template, as_json = self.template(tool, key)
        body = fill(template, values)
        return json.dumps({"error": body}, ensure_ascii=False) if as_json else body

    def sandbox_texts(self) -> SandboxTexts:
        """The sandbox's own texts (unknown tool, unparseable arguments, simulator failures,
        empty answers), with the ones not sent as JSON named in `bare`."""
        texts = {k: self.entries[k][0] for k in SANDBOX_KEYS}
        bare = tuple(k for k in SANDBOX_KEYS if k != "empty_result" and not self.entries[k][1])
        return SandboxTexts(**texts, bare=bare)


def parse_catalogue(text: str, origin: str) -> ToolErrorTexts:
    """A catalogue from its JSON text; CatalogueError naming `origin` and the key when it is
    not a JSON object of `{"text", "json"}` entries, lacks a key, names an unknown one or a
    template uses a field its key does not have."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise CatalogueError(f"{origin}: not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise CatalogueError(f"{origin}: expected a JSON object of error texts")
    entries: dict[str, tuple[str, bool]] = {}
    for full, entry in data.items():
        key = full.split(":", 1)[-1]
        if key not in FIELDS:
            raise CatalogueError(f"{origin}: unknown key {full!r} (known: "
                                 f"{', '.join(sorted(FIELDS))})")
        if (not isinstance(entry, dict) or set(entry) != {"text", "json"}
                or not isinstance(entry["text"], str) or not isinstance(entry["json"], bool)):
            raise CatalogueError(f"{origin}: {full}: expected {{\"text\": string, "
                                 "\"json\": true|false}")
        bad = sorted(set(_FIELD.findall(entry["text"])) - FIELDS[key])
        if bad:
            raise CatalogueError(f"{origin}: {full}: unknown field {{{bad[0]}}} (fields of "
                                 f"{key}: {', '.join(sorted(FIELDS[key])) or 'none'})")
        entries[full] = (entry["text"], entry["json"])
    missing = [k for k in FIELDS if k not in entries]
    if missing:
        raise CatalogueError(f"{origin}: no text for {missing[0]} (a set imported by an "
                             "earlier agentsweep: import it again, `agentsweep prompts import "
                             "--force`)")
    return ToolErrorTexts(entries, origin)


def dump_catalogue(entries: Mapping[str, tuple[str, bool]]) -> str:
    """The JSON text of a catalogue (what `parse_catalogue` reads back)."""
    return json.dumps({k: {"text": t, "json": j} for k, (t, j) in entries.items()},
                      ensure_ascii=False, indent=2) + "\n"


@cache
def builtin() -> ToolErrorTexts:
    return parse_catalogue(BUILTIN_FILE.read_text(encoding="utf-8"), str(BUILTIN_FILE))


def of_prompts(prompts: Any) -> ToolErrorTexts:
    """The catalogue of a prompt set (None or the built-in set: the built-in catalogue)."""
    if prompts is None or prompts.builtin:
        return builtin()
    return parse_catalogue(prompts.templates["tool_errors"].substitute(),
                           str(prompts.path / "tool_errors.txt"))
