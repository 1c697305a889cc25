"""The run configuration: one TOML file validated by msgspec, every field documented and defaulted.

An empty file (or none at all) runs the built-in sample benchmark on the embedded engine with
small token budgets. CLI flags only override fields (`apply_overrides`). Errors name the file,
the line and the field: unknown keys, wrong types and bad values all raise `ConfigError`.

`docs/config.md` documents every field; `python -m evaluator.config --doc` prints the raw
reference (docstrings and defaults) generated from the classes below.
"""

from __future__ import annotations

import copy
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import msgspec

from backends.types import Endpoint, MissingApiKey, NonNegative, SamplingParams, api_key_of
from cache_store.sandbox import SandboxSettings
from evaluator import catalog
from evaluator import config_check as check
from evaluator.config_check import (
    ConfigError,
    alias_key,
    benchmark_aliases,
    check_unknown_keys,
    locate_line,
    located,
    parse_override,
    plain,
    rename_aliases,
    set_dotted,
)
from evaluator.config_sections import (
    AdmissionConfig,
    DataConfig,
    EngineConfig,
    ProtocolConfig,
    ReplicaEndpoint,
    RetryConfig,
    RoleConfig,
)
from evaluator.judges.settings import JudgeSettings
from evaluator.profiles import (
    apply_profile,
    deviations,
    leaves,
    profile_values,
    resolve_profile_name,
    run_benchmark,
)

__all__ = ["AdmissionConfig", "ConfigError", "DataConfig", "EngineConfig", "ProtocolConfig",
           "ReplicaEndpoint", "RetryConfig", "RoleConfig", "RunConfig", "config_doc",
           "convert_config", "load_config", "locate_line", "parse_override",
           "profile_deviations"]


class RunConfig(msgspec.Struct, omit_defaults=True, forbid_unknown_fields=True):
    """A whole run.

    profile: the settings profile under this config (see evaluator/profiles.py), the run's
        benchmark's: "paper" (its reference's protocol limits, sampling and judging), "smoke"
        (small limits for the embedded CPU model), or "auto" = "smoke" for the built-in sample
        and "paper" for real benchmark data. Every field set here overrides the profile; the
        manifest and report list those deviations.
    prompts: prompt set: "builtin" (the project's own prompts) or a prompt-set directory
        written by `agentsweep prompts import` (e.g. the benchmark's released prompts).
    plugins: modules to import that register benchmarks (`BENCHMARK = Benchmark(...)`), for
        benchmarks outside agentsweep (docs/adding_a_benchmark.md).
    name: run name (the run directory under `out`); empty = "<dataset>-<UTC timestamp>".
    out: directory that holds run directories.
    trials: trials per task (pass@k needs k <= trials).
    seed: base seed; unit seeds are hash(seed, task, trial), so a rerun reproduces them.
    concurrency: episodes in flight at most.
    shutdown_grace_s: on Ctrl-C, how long in-flight episodes may take to finish before they
        are cancelled (cancelled ones are not recorded and rerun on resume).
    fsync: fsync the episodes file after each written batch (the response journal: at most
        once a second).
    journal: journal every model response of the episodes (RUN_DIR/journal.jsonl), so that
        `--resume` replays an unfinished episode's calls instead of asking the models again.
    progress: "auto" (a live line when stderr is a TTY), "plain" (a line every few seconds),
        "off".
    options: the run's benchmark's own settings (`[options]`; `agentsweep data list --options`
        and docs/config.md list each benchmark's): checked against the benchmark's options
        type, every field recorded in the manifest; its `paper` profile sets the reference's
        values, and each one changed is a deviation.
    data, engine, agent, user, tool_simulator, judge, protocol, sandbox, admission, retry: the
        tables documented below.
    """

    profile: Literal["auto", "paper", "smoke"] = "auto"
    prompts: str = "builtin"
    plugins: list[str] = msgspec.field(default_factory=list)
    name: str = ""
    out: str = "runs"
    trials: int = 1
    seed: int = 0
    concurrency: int = 64
    shutdown_grace_s: NonNegative = 30.0
    fsync: bool = True
    journal: bool = True
    progress: Literal["auto", "plain", "off"] = "auto"
    options: dict[str, Any] = msgspec.field(default_factory=dict)
    data: DataConfig = msgspec.field(default_factory=DataConfig)
    engine: EngineConfig = msgspec.field(default_factory=EngineConfig)
    agent: RoleConfig = msgspec.field(
        default_factory=lambda: RoleConfig(sampling=SamplingParams(temperature=0.0, max_tokens=160))
    )
    user: RoleConfig = msgspec.field(
        default_factory=lambda: RoleConfig(sampling=SamplingParams(temperature=0.0, max_tokens=96))
    )
    tool_simulator: RoleConfig = msgspec.field(default_factory=RoleConfig)
    judge: JudgeSettings = msgspec.field(
        default_factory=lambda: JudgeSettings(
            sampling=SamplingParams(temperature=0.0, max_tokens=320)
        )
    )
    protocol: ProtocolConfig = msgspec.field(default_factory=ProtocolConfig)
    sandbox: SandboxSettings = msgspec.field(default_factory=SandboxSettings)
    admission: AdmissionConfig = msgspec.field(default_factory=AdmissionConfig)
    retry: RetryConfig = msgspec.field(default_factory=RetryConfig)

    def __post_init__(self) -> None:
        check.check_trials(self.trials)  # 1..100,000, with the reason
        check.check_run_name(self.name)
        if not self.out.strip():
            raise ValueError('out must name a directory ("." = the current one), got '
                             f"{self.out!r}")
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {self.concurrency}")


# --------------------------------------------------------------------------- loading


def load_config(
    path: str | Path | None = None,
    overrides: list[tuple[str, Any, str]] | None = None,
    *,
    text: str | None = None,
) -> tuple[RunConfig, str]:
    """Read, override and validate a config. Returns (config, the TOML text as given).

    `overrides`: (dotted key, value, origin) triples applied before validation; `origin` names
    the flag in error messages (e.g. "--limit").
    """
    source = str(path) if path is not None else "<defaults>"
    if text is None:
        text = read_config_text(path) if path is not None else ""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: invalid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{source}: invalid TOML: arrays or tables nested too deeply") from None
    overrides = list(overrides or [])
    aliases = benchmark_aliases(raw, overrides, source)
    rename_aliases(raw, aliases, where=source)
    check_unknown_keys(raw, RunConfig, source, text)
    origins: dict[str, str] = {}
    for key, value, origin in overrides:
        key = alias_key(key, aliases)
        set_dotted(raw, key, value, origin)
        origins[key] = origin
    check_unknown_keys(raw, RunConfig, source, text, origins)
    raw = apply_profile(raw, source, text, origins, DataConfig().dataset, known_fields)
    sim = raw.get("tool_simulator")
    if isinstance(sim, dict) and "sampling" in sim:
        raise located("`tool_simulator.sampling` cannot be set: simulated tool answers are "
                      "decoded at temperature 0 so that they are reproducible (their length cap "
                      "is `sandbox.simulator_max_tokens`)", source, text, origins,
                      "tool_simulator.sampling")
    _keep_role_sampling_defaults(raw)
    try:
        config = msgspec.convert(raw, RunConfig, strict=True)
    except msgspec.ValidationError as exc:
        raise located(str(exc), source, text, origins) from None
    bad = check.non_finite(config)  # TOML has nan and inf; no setting means either
    if bad is not None:
        what = ("an integer in TOML's 64-bit range is needed" if isinstance(bad[1], int)
                else "a finite number is needed")
        raise located(f"{what}, got {bad[1]}", source, text, origins, bad[0])
    unset = unset_api_key(config)
    if unset is not None:
        raise located(f"the environment variable {unset[1]} is not set (the API key is read "
                      "from it when the run starts; only its name is recorded)", source, text,
                      origins, unset[0])
    return _resolve_options(config, source, text, origins), text


ROLES = ("agent", "user", "tool_simulator", "judge")


def role_endpoints(config: RunConfig,
                   roles: tuple[str, ...] = ROLES) -> Iterator[tuple[str, Endpoint]]:
    """(dotted field, endpoint) of every endpoint table of `roles`: each role's `endpoint` and
    replica tables, the judge's `endpoints`."""
    for role in roles:
        if role == "judge":
            for i, ep in enumerate(config.judge.endpoints):
                yield f"judge.endpoints[{i}]", ep
            continue
        rc: RoleConfig = getattr(config, role)
        yield f"{role}.endpoint", rc.endpoint
        for i, r in enumerate(rc.replicas):
            if not isinstance(r, str):
                yield f"{role}.replicas[{i}]", r


def unset_api_key(config: RunConfig,
                  roles: tuple[str, ...] = ROLES) -> tuple[str, str] | None:
    """(dotted `api_key_env` field, variable) of the first endpoint of `roles` whose key
    variable is unset or empty in this process's environment; None when all are there."""
    for field, ep in role_endpoints(config, roles):
        try:
            api_key_of(ep)
        except MissingApiKey:
            return f"{field}.api_key_env", str(ep.api_key_env)
    return None


def _resolve_options(config: RunConfig, source: str, text: str,
                     origins: dict[str, str]) -> RunConfig:
    """`options` checked against the run's benchmark's options type and completed with its
    defaults (left as given when the benchmark cannot be told before the data is read)."""
    bench = _benchmark(config)
    if bench is None:
        return config
    if bench.options is None:
        if config.options:
            first = min(config.options)
            raise located(f"{bench.title} takes no options, got `{first}`", source, text,
                          origins, f"options.{first}")
        return config
    try:
        value = msgspec.convert(dict(config.options), bench.options, strict=True)
    except msgspec.ValidationError as exc:
        msg = str(exc)
        m = re.search(r"unknown field `([^`]*)`", msg)
        if m:
            known = ", ".join(sorted(bench.options.__struct_fields__))
            raise located(f"unknown key `options.{m.group(1)}` (known options of "
                          f"{bench.title}: {known})", source, text, origins,
                          f"options.{m.group(1)}") from None
        path = re.search(r"at `\$\.?([^`]*)`", msg)
        where = f"options.{path.group(1)}" if path and path.group(1) else "options"
        raise located(re.sub(r" - at `[^`]*`", "", msg), source, text, origins,
                      where) from None
    return msgspec.structs.replace(config, options=plain(value))


def _benchmark(config: RunConfig) -> Any:
    benchmarks = catalog.current()

    name = run_benchmark(config.data)
    return benchmarks.find(name) if name else None


MAX_CONFIG_BYTES = 1 << 20


def read_config_text(path: str | Path) -> str:
    """A config file's text: a regular file of at most 1 MiB of UTF-8 (ConfigError naming the
    file otherwise)."""
    p = Path(path)
    try:
        if not p.is_file() and p.exists():  # a directory, a FIFO (open would block), ...
            raise ConfigError(f"{p}: cannot read config: not a regular file")
        with open(p, "rb") as f:
            data = f.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read config: {exc.strerror or exc}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{p}: config larger than {MAX_CONFIG_BYTES >> 20} MiB (a run config "
                          "is a few KiB; is this the right file?)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{p}:{line}: not UTF-8 (byte {exc.start}: {exc.reason})") from None


def convert_config(resolved: dict[str, Any]) -> RunConfig:
    """A RunConfig from a run directory's resolved config (manifest.json), old key names
    included (raises msgspec.ValidationError or ConfigError)."""
    benchmarks = catalog.current()

    plugins = resolved.get("plugins")
    if isinstance(plugins, list):
        benchmarks.load_plugins(str(m) for m in plugins)
    raw = rename_aliases(copy.deepcopy(resolved), benchmarks.config_aliases(),
                         where="resolved config")
    return msgspec.convert(raw, RunConfig)


def known_fields(benchmark: str | None = None) -> set[str]:
    """Every dotted field of RunConfig, with `options.NAME` for each option of `benchmark`."""
    known = set(leaves(plain(RunConfig())))
    if benchmark:
        benchmarks = catalog.current()

        bench = benchmarks.find(benchmark)
        if bench is not None and bench.options is not None:
            known.update(f"options.{k}" for k in leaves(plain(bench.options())))
    return known


def profile_deviations(config: RunConfig) -> dict[str, dict[str, Any]]:
    """Score-relevant fields where `config` differs from its profile (config.profile must be
    resolved, as load_config leaves it): key -> {"profile": value, "used": value}."""
    name = resolve_profile_name(config.profile, config.data.dataset)
    bench = run_benchmark(config.data)
    values = profile_values(name, known_fields(bench), benchmark=bench)
    return deviations(values, plain(config))


def _keep_role_sampling_defaults(raw: dict[str, Any]) -> None:
    """A role table given in part (say only `[agent.endpoint]`, or `--agent-url`) keeps the
    run's per-role sampling defaults (e.g. the agent's max_tokens) for the keys it leaves out,
    instead of falling back to the bare SamplingParams defaults."""
    base = RunConfig()
    for role in ("agent", "user", "judge"):
        table = raw.get(role)
        if not isinstance(table, dict):
            continue
        sampling = table.setdefault("sampling", {})
        if isinstance(sampling, dict):
            for key, value in msgspec.to_builtins(getattr(base, role).sampling).items():
                sampling.setdefault(key, value)


# --------------------------------------------------------------------------- docs


def config_doc() -> str:
    """Markdown reference of every table, field and default (docs/config.md)."""
    from evaluator.config_doc import render

    return render(RunConfig)


if __name__ == "__main__":
    import sys

    if "--doc" in sys.argv:
        print(config_doc())
