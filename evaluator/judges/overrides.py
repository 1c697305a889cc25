"""Judge settings changed after a run: `agentsweep judge RUN_DIR --set judge.KEY=VALUE`.

The manifest keeps the settings the run started with; it is never rewritten. A judge-stage
change (decoding with the JSON schema, another temperature, ...) goes to
RUN_DIR/judge_overrides.json, one entry per dotted key under `judge` with its value, and is
applied on top of the run's `[judge]` table by every later `agentsweep judge` and
`agentsweep report` of the run; the report lists each one among the run's deviations. Setting
a key again replaces its value; the file is written whole and atomically.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

OVERRIDES_FILE = "judge_overrides.json"
PREFIX = "judge."


class OverrideError(ValueError):
    """A judge override that cannot be read or applied (the message names file or flag)."""


def read_overrides(run_dir: Path) -> dict[str, Any]:
    """{dotted key under judge: value} recorded for RUN_DIR ({} when none)."""
    path = Path(run_dir) / OVERRIDES_FILE
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        line = getattr(exc, "lineno", 1)
        raise OverrideError(f"{path}:{line}: not valid JSON ({exc})") from None
    values = data.get("set") if isinstance(data, dict) else None
    if not isinstance(values, dict):
        raise OverrideError(f'{path}:1: expected an object with a "set" object of judge settings')
    return values


def parse_sets(pairs: list[tuple[str, Any]], known: set[str]) -> dict[str, Any]:
    """`--set` pairs (already split) -> {key under judge: value}; only known `judge.*` keys."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if not key.startswith(PREFIX):
            raise OverrideError(f"--set {key}: only judge settings (judge.*) can change after "
                                "the run; start a new run for the others")
        if key not in known:
            raise OverrideError(f"--set {key}: unknown judge setting")
        out[key[len(PREFIX):]] = value
    return out


def apply_overrides(judge_table: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """A copy of the run's `[judge]` table with the overrides set (dotted keys nest)."""
    table = json.loads(json.dumps(judge_table))
    for key, value in overrides.items():
        node = table
        *parents, leaf = key.split(".")
        for part in parents:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[leaf] = value
    return table


def write_overrides(run_dir: Path, overrides: dict[str, Any]) -> None:
    """Write RUN_DIR's whole set of overrides (what was read, updated), atomically."""
    path = Path(run_dir) / OVERRIDES_FILE
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({"set": overrides}, indent=1, sort_keys=True, ensure_ascii=False)
                   + "\n", encoding="utf-8")
    os.replace(tmp, path)


def describe(overrides: dict[str, Any]) -> list[str]:
    """One deviation line per override, e.g. `judge.structured_output=true (judge --set)`."""
    return [f"{PREFIX}{k}={json.dumps(v, ensure_ascii=False)} (agentsweep judge --set)"
            for k, v in sorted(overrides.items())]
