"""Named settings profiles: `paper` (the benchmark reference's protocol limits, sampling and
judging) and `smoke` (small limits for the embedded CPU model and the built-in sample).

A profile is a layer of defaults under the user's config: the TOML file, `--set` and the CLI
flags override it field by field. `profile = "auto"` (the default) picks `smoke` for the
built-in sample and `paper` for every real benchmark dataset, so that a run on real data
reproduces the reference's numbers unless the user changes something. Every score-relevant
field the user changes is recorded as a deviation from the profile in the run's manifest and
report (`deviations`).

Profiles are per benchmark: the run's benchmark (its `data.benchmark`, else the one its
dataset is recognised as) provides its `paper` values and, optionally, `smoke` values layered
over the generic `SMOKE` below (`Benchmark.profiles`; TravelBench's are in
the `settings.py` of its package). A benchmark without a `paper` profile gets
the config's defaults.
"""

from __future__ import annotations

import copy
from typing import Any

PROFILE_NAMES = ("auto", "paper", "smoke")
"""Values of the top-level `profile` field."""

BUILTIN_SAMPLE = "sample"

# Score-relevant fields only, in the raw TOML shape of RunConfig. Fields that do not change a
# score (endpoints, concurrency, admission, output paths) are never part of a profile.
SMOKE: dict[str, Any] = {
    "trials": 1,
    "protocol": {"max_steps": 6, "max_turns": 4},
    "agent": {"sampling": {"temperature": 0.0, "max_tokens": 160}},
    "user": {"sampling": {"temperature": 0.0, "max_tokens": 96}},
    "judge": {
        "sampling": {"temperature": 0.0, "max_tokens": 320},
        "max_attempts": 3,
        "retry_temperature": 0.7,
        "retry_temperature_from": 2,
        "max_transcript_chars": 0,
        "context_tokens": 8192,  # guards the embedded judge's 8k context
        "structured_output": True,
    },
    "sandbox": {
        "simulator_max_tokens": 2048,
        "top_k": 8,
        "embedder": "",  # the index's own (MiniLM, offline, for the sample)
    },
}
"""The generic smoke profile: small limits that every benchmark's smoke profile starts from."""


def benchmark_profile(name: str, benchmark: str | None) -> dict[str, Any]:
    """Profile NAME of a benchmark: `paper` is the benchmark's own; `smoke` is the generic one
    with the benchmark's `smoke` values over it. An unknown benchmark (None) gets the generic
    values only."""
    from evaluator import benchmarks

    bench = benchmarks.find(benchmark) if benchmark else None
    own = dict(bench.profiles.get(name, {})) if bench is not None else {}
    return layer(SMOKE, own) if name == "smoke" else copy.deepcopy(own)


def resolve_profile_name(name: str, dataset: str) -> str:
    """`auto` -> `smoke` for the built-in sample, `paper` for any real dataset."""
    if name == "auto":
        return "smoke" if dataset == BUILTIN_SAMPLE else "paper"
    if name not in PROFILE_NAMES:
        raise ValueError(f"unknown profile {name!r}; known: {', '.join(PROFILE_NAMES)}")
    return name


def profile_values(name: str, known: set[str] | None = None,
                   benchmark: str | None = None) -> dict[str, Any]:
    """Profile NAME's raw table for `benchmark` (a fresh copy); `known` (dotted keys) keeps only
    fields the config classes define, so a profile never names a field the code does not
    have."""
    values = benchmark_profile(name, benchmark)
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


def describe_deviations(profile: str, devs: dict[str, Any]) -> list[str]:
    """One line per deviation, as the run summary and every report print them:
    `key=used (profile: value)`, then the deviation's note when it has one."""
    import json

    def short(value: Any) -> str:
        return value if isinstance(value, str) and "note" in entry else json.dumps(
            value, ensure_ascii=False)

    out = []
    for key, entry in sorted(devs.items()):
        if not isinstance(entry, dict):
            continue
        line = f"{key}={short(entry.get('used'))} ({profile}: {short(entry.get('profile'))})"
        if entry.get("note"):
            line += f": {entry['note']}"
        out.append(line)
    return out


def settings_summary(profile: str, devs: dict[str, Any]) -> str:
    """`profile P; deviations: ...` (or `none`), the line a run's summary ends with."""
    return f"profile {profile}; deviations: " + ("; ".join(describe_deviations(profile, devs))
                                                 or "none")


def run_benchmark(data: Any) -> str | None:
    """The benchmark of a config's `[data]` table (raw dict or DataConfig): `benchmark` when
    set, else the one its dataset is recognised as (None when it cannot be found)."""
    from bench_data.registry import benchmark_of

    get = data.get if isinstance(data, dict) else lambda k, d=None: getattr(data, k, d)
    explicit = get("benchmark", "")
    if isinstance(explicit, str) and explicit:
        return explicit
    dataset = get("dataset", BUILTIN_SAMPLE)
    data_dir = get("data_dir", "") or None
    if not isinstance(dataset, str):
        return None
    return benchmark_of(dataset, data_dir if isinstance(data_dir, str) else None)


def apply_profile(raw: dict[str, Any], source: str, text: str, origins: dict[str, str],
                  default_dataset: str) -> dict[str, Any]:
    """The profile's values under the user's (TOML, --set and flags win), with `profile` set to
    the resolved name so that the manifest's resolved config says which profile ran."""
    from evaluator.config import known_fields
    from evaluator.config_check import located

    data = raw.get("data") if isinstance(raw.get("data"), dict) else {}
    dataset = data.get("dataset", default_dataset)
    name = raw.get("profile", "auto")
    if not isinstance(name, str) or name not in PROFILE_NAMES:
        raise located(f"profile: expected one of {', '.join(PROFILE_NAMES)}, got {name!r}",
                      source, text, origins, "profile")
    resolved = resolve_profile_name(name, dataset if isinstance(dataset, str) else "")
    bench = run_benchmark(data)
    values = profile_values(resolved, known_fields(bench), benchmark=bench)
    out = layer(values, raw)
    out["profile"] = resolved
    return out
