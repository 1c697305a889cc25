"""Error-text catalogues: what the agent reads when a benchmark's sandbox refuses or cannot
answer a call, as data of the prompt set (TravelBench's and GroupTravelBench's `tool_errors`).

A catalogue is a JSON object `key -> {"text": template, "json": bool}`; `{name}` in a template
is filled with a value the validator computed (rendered as an f-string renders it), any other
brace is kept. `json: true` sends the text as `{"error": text}`, false sends it as it is. A key
may be given per tool (`<tool>:<key>`) and per tool and argument (`<tool>:<argument>:<key>`),
looked up first, so one tool, or one of its arguments, can word a check its own way (a
reference that writes the argument's name into the text). Each benchmark says which keys exist
and which fields each may use; its built-in catalogue is the project's wording, an import of
its reference holds the reference's texts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cache_store.types import SandboxTexts, fill

SANDBOX_KEYS = ("unknown_tool", "malformed_json", "not_object", "no_simulator",
                "simulation_failed", "live_failed", "empty_result")
"""The keys `SandboxTexts` is made of (`empty_result` is always sent as it is)."""

_FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class CatalogueError(ValueError):
    """A catalogue that cannot be used (the message names the file and the key)."""


@dataclass(frozen=True)
class ErrorCatalogue:
    """A checked catalogue. `text(tool, key, **values)` is what the agent reads."""

    entries: Mapping[str, tuple[str, bool]]
    origin: str = ""

    def template(self, tool: str, key: str, argument: str = "") -> tuple[str, bool]:
        e = self.entries
        return ((argument and e.get(f"{tool}:{argument}:{key}")) or e.get(f"{tool}:{key}")
                or e[key])

    def text(self, tool: str, key: str, /, *, argument: str = "", **values: Any) -> str:
        template, as_json = self.template(tool, key, argument)
        body = fill(template, values)
        return json.dumps({"error": body}, ensure_ascii=False) if as_json else body

    def sandbox_texts(self) -> SandboxTexts:
        """The sandbox's own texts (unknown tool, unparseable arguments, simulator failures,
        empty answers), with the ones not sent as JSON named in `bare`."""
        texts = {k: self.entries[k][0] for k in SANDBOX_KEYS}
        bare = tuple(k for k in SANDBOX_KEYS if k != "empty_result" and not self.entries[k][1])
        return SandboxTexts(**texts, bare=bare)


def parse_catalogue(text: str, origin: str,
                    fields: Mapping[str, frozenset[str]]) -> ErrorCatalogue:
    """A catalogue from its JSON text; CatalogueError naming `origin` and the key when it is
    not a JSON object of `{"text", "json"}` entries, lacks a key of `fields`, names an unknown
    one or a template uses a field its key does not have."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise CatalogueError(f"{origin}: not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise CatalogueError(f"{origin}: expected a JSON object of error texts")
    entries: dict[str, tuple[str, bool]] = {}
    for full, entry in data.items():
        key = full.rsplit(":", 1)[-1]
        if key not in fields or full.count(":") > 2:
            raise CatalogueError(f"{origin}: unknown key {full!r} (known: "
                                 f"{', '.join(sorted(fields))})")
        if (not isinstance(entry, dict) or set(entry) != {"text", "json"}
                or not isinstance(entry["text"], str) or not isinstance(entry["json"], bool)):
            raise CatalogueError(f"{origin}: {full}: expected {{\"text\": string, "
                                 "\"json\": true|false}")
        bad = sorted(set(_FIELD.findall(entry["text"])) - fields[key])
        if bad:
            raise CatalogueError(f"{origin}: {full}: unknown field {{{bad[0]}}} (fields of "
                                 f"{key}: {', '.join(sorted(fields[key])) or 'none'})")
        entries[full] = (entry["text"], entry["json"])
    missing = [k for k in fields if k not in entries]
    if missing:
        raise CatalogueError(f"{origin}: no text for {missing[0]} (a set imported by an "
                             "earlier agentsweep: import it again, `agentsweep prompts import "
                             "--force`)")
    return ErrorCatalogue(entries, origin)


def dump_catalogue(entries: Mapping[str, tuple[str, bool]]) -> str:
    """The JSON text of a catalogue (what `parse_catalogue` reads back)."""
    return json.dumps({k: {"text": t, "json": j} for k, (t, j) in entries.items()},
                      ensure_ascii=False, indent=2) + "\n"
