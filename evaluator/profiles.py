"""Named settings profiles: `paper` (the reference implementation's protocol limits, sampling and
judging) and `smoke` (small limits for the embedded CPU model and the built-in sample).

A profile is a layer of defaults under the user's config: the TOML file, `--set` and the CLI
flags override it field by field. `profile = "auto"` (the default) picks `smoke` for the
built-in sample and `paper` for every real benchmark dataset, so that a run on real data
reproduces the reference's numbers unless the user changes something. Every score-relevant
field the user changes is recorded as a deviation from the profile in the run's manifest and
report (`deviations`).

The `paper` values come from the TravelBench reference code (commit 445a29d, see
`../shared/notes/travelbench_protocol.md` and docs/config.md): 20 agent steps per user turn,
10 user turns, the agent and user simulator sampling at temperature 0.7 with 8,192 output
tokens, a judge at temperature 0 / top_p 0.95 / 16,384 tokens with 10 attempts (the 8th to
10th at temperature 0.7) decoding freely (no guided JSON; the reference parses free text),
three trials, a tool simulator allowed 8,192 tokens, the reference's
own argument validation, the whole conversation shown to the judge, the `[Unsolved]` tag and
the reference's prompt layout (situation in the system prompt).
"""

from __future__ import annotations

import copy
from typing import Any

PROFILE_NAMES = ("auto", "paper", "smoke")
"""Values of the top-level `profile` field."""

BUILTIN_SAMPLE = "sample"
PAPER_EMBEDDER = "openai:http://127.0.0.1:8001/v1#Qwen/Qwen3-Embedding-8B"

# Score-relevant fields only, in the raw TOML shape of RunConfig. Fields that do not change a
# score (endpoints, concurrency, admission, output paths) are never part of a profile.
_PAPER: dict[str, Any] = {
    "trials": 3,
    "protocol": {
        "max_steps": 20,
        "max_turns": 10,
        "finish_marker": "[Finish Conversation]",
        "unsolvable_tags": ["[Unsolved]"],
        "layout": "reference",
    },
    "agent": {"sampling": {"temperature": 0.7, "max_tokens": 8192}},
    "user": {"sampling": {"temperature": 0.7, "max_tokens": 8192}},
    "judge": {
        "sampling": {"temperature": 0.0, "top_p": 0.95, "max_tokens": 16384},
        "max_attempts": 10,
        "retry_temperature": 0.7,
        "retry_temperature_from": 8,
        "meta_retry_temperature": 0.0,
        "structured_output": False,
        "max_transcript_chars": 0,
        "context_tokens": 0,
        "meta_judge": True,
        "unsolvable_tags": ["[Unsolved]"],
    },
    "sandbox": {
        "simulator_max_tokens": 8192,
        "validation": "reference",
        "top_k": 8,
        # the paper's retrieval model, served by vLLM (`--runner pooling`); used only when the
        # store has an index, which must have been built with the same model
        "embedder": PAPER_EMBEDDER,
    },
}

_SMOKE: dict[str, Any] = {
    "trials": 1,
    "protocol": {
        "max_steps": 6,
        "max_turns": 4,
        "finish_marker": "##FINISH##",
        "unsolvable_tags": ["[Unsolvable]", "[Unsolved]"],
        "layout": "prefix",
    },
    "agent": {"sampling": {"temperature": 0.0, "max_tokens": 160}},
    "user": {"sampling": {"temperature": 0.0, "max_tokens": 96}},
    "judge": {
        "sampling": {"temperature": 0.0, "max_tokens": 320},
        "max_attempts": 3,
        "retry_temperature": 0.7,
        "retry_temperature_from": 2,
        "max_transcript_chars": 0,
        "context_tokens": 8192,
        "structured_output": True,
        "meta_judge": True,
        "unsolvable_tags": ["[Unsolvable]", "[Unsolved]"],
    },
    "sandbox": {
        "simulator_max_tokens": 2048,
        "validation": "reference",
        "top_k": 8,
        "embedder": "",  # the index's own (MiniLM, offline, for the sample)
    },
}

_PROFILES: dict[str, dict[str, Any]] = {"paper": _PAPER, "smoke": _SMOKE}


def resolve_profile_name(name: str, dataset: str) -> str:
    """`auto` -> `smoke` for the built-in sample, `paper` for any real dataset."""
    if name == "auto":
        return "smoke" if dataset == BUILTIN_SAMPLE else "paper"
    if name not in _PROFILES:
        raise ValueError(f"unknown profile {name!r}; known: {', '.join(PROFILE_NAMES)}")
    return name


def profile_values(name: str, known: set[str] | None = None) -> dict[str, Any]:
    """A deep copy of profile NAME's raw table; `known` (dotted keys) keeps only fields the
    config classes define, so a profile never names a field the code does not have."""
    values = copy.deepcopy(_PROFILES[name])
    if known is None:
        return values
    return _keep_known(values, known, "")


def _keep_known(table: dict[str, Any], known: set[str], prefix: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in table.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            sub = _keep_known(value, known, path + ".")
            if sub:
                out[key] = sub
        elif path in known:
            out[key] = value
    return out


def layer(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    """`top` over `base`, table by table (the user's values win); neither input is changed."""
    out = copy.deepcopy(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = layer(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def leaves(table: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Dotted key -> value for every non-table value of a nested dict."""
    out: dict[str, Any] = {}
    for key, value in table.items():
        if isinstance(value, dict):
            out.update(leaves(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def deviations(profile: dict[str, Any], resolved: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every profile field whose resolved value differs: key -> {"profile": v, "used": v}."""
    used = leaves(resolved)
    out: dict[str, dict[str, Any]] = {}
    for key, value in leaves(profile).items():
        if key in used and used[key] != value:
            out[key] = {"profile": value, "used": used[key]}
    return out
