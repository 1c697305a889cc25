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
from pathlib import Path
from typing import Any, Literal

import msgspec

from backends.types import AtLeastOne, Endpoint, NonNegative, Positive, SamplingParams
from cache_store.sandbox import SandboxSettings
from evaluator import catalog
from evaluator import config_check as check
from evaluator.config_check import (
    ConfigError,
    alias_key,
    benchmark_aliases,
    check_replicas,
    check_unknown_keys,
    locate_line,
    located,
    parse_override,
    plain,
    rename_aliases,
    set_dotted,
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

__all__ = ["ConfigError", "RunConfig", "config_doc", "convert_config", "load_config",
           "locate_line", "parse_override", "profile_deviations"]


class DataConfig(msgspec.Struct, omit_defaults=True, forbid_unknown_fields=True):
    """Which tasks to run.

    dataset: "sample" (the built-in sample), a benchmark's name (its data under `data_dir`) or
        a path to a task file or directory.
    benchmark: read the data as this registered benchmark's ("" = the benchmark the data is
        recognised as; `agentsweep run --bench NAME`).
    subsets: subsets of the benchmark to run (`agentsweep data list` shows them); empty = all.
    domains: domains of a benchmark that declares them (`agentsweep run --domain A,B`): the
        benchmark says which subsets they select (when `subsets` is empty) and what tools and
        state its episodes get (several domains: one merged environment); empty = none.
    limit: at most this many tasks per subset (0 = all).
    data_dir: where the real benchmark files live (empty = the loader's default lookup).
    skip_bad: skip malformed task records (they are listed in the manifest) instead of failing.
    """

    dataset: str = "sample"
    benchmark: str = ""
    subsets: list[str] = msgspec.field(default_factory=list)
    domains: list[str] = msgspec.field(default_factory=list)
    limit: int = 0
    data_dir: str = ""
    skip_bad: bool = False

    def __post_init__(self) -> None:
        if self.limit < 0:
            raise ValueError(f"limit must be >= 0, got {self.limit}")


class ReplicaEndpoint(Endpoint, frozen=True, forbid_unknown_fields=True):
    """One `[[<role>.replicas]]` table: an endpoint (unset fields come from the role's
    `endpoint`) and its `weight` for placement (load is divided by it: 2.0 takes about twice
    the sessions of a 1.0 replica)."""

    weight: float = 1.0

    def __post_init__(self) -> None:
        if not self.weight > 0:
            raise ValueError(f"weight must be > 0, got {self.weight}")


class RoleConfig(msgspec.Struct, omit_defaults=True, forbid_unknown_fields=True):
    """One model role: where it is served and how it samples.

    endpoint: `base_url` ("embedded" = the engine agentsweep starts for the run, or an
        OpenAI-compatible root such as "http://host:8000/v1"), `model` (empty = the first model
        the server lists), `api_key`, `timeout_s` (per request, retries included),
        `max_retries` (per request, on connection errors / 429 / 5xx), `extra_headers`.
    sampling: `temperature`, `top_p`, `max_tokens`, `seed` (unset = the unit's derived seed),
        `n`, `stop`.
    replicas: endpoint tables or URLs the role is spread over by a router (empty = `endpoint`
        alone); unset fields of a table come from `endpoint`.
    routing: the router's settings (`policy`, thresholds, `admission`, `health` tables).
    """

    endpoint: Endpoint = msgspec.field(default_factory=Endpoint)
    sampling: SamplingParams = msgspec.field(default_factory=SamplingParams)
    replicas: list[ReplicaEndpoint | str] = msgspec.field(default_factory=list)
    routing: dict[str, Any] = msgspec.field(default_factory=dict)

    def __post_init__(self) -> None:
        check.check_base_url("endpoint.base_url", self.endpoint.base_url)
        check.check_headers("endpoint.extra_headers", self.endpoint.extra_headers)
        check_replicas(self.replicas, self.routing)


class ProtocolConfig(msgspec.Struct, omit_defaults=True, forbid_unknown_fields=True):
    """How episodes are driven.

    max_steps: agent calls per user turn (bounds the tool loop); a turn that uses them all
        gets the fixed step-limit reply and the episode goes on (as the reference).
    max_turns: multi-turn rounds (agent reply + user-simulator reply), the query's included.
    finish_marker: the user simulator ends the dialogue by writing it (substring match).
    abstain_tags: tags an agent writes to say a request cannot be done (TravelBench's
        abstention subset: its prompt asks for the first one; old name accepted, docs/config.md).
    language: prompt language; "auto" follows the task text.
    entry: a custom protocol "module:function" used for every task instead of the subset's
        protocol of the benchmark (empty = the benchmark's).
    layout: "reference" = the task's time and context in the agent's system prompt (as the
        reference); "prefix" = in the first user message, so the system prompt and tool
        schemas are one prefix-cached prefix shared by all tasks (docs/protocols.md).
    stop_at_abstain_tag: end an abstention episode at the first reply with a tag (the
        TravelBench reference goes on; the score only reads the first assistant message either
        way; old name accepted, docs/config.md).
    retry_empty_replies: retry an empty agent/simulator reply once (a second ends the
        episode) instead of keeping it as the reply, as the reference does.
    """

    max_steps: int = 6
    max_turns: int = 4
    finish_marker: str = "##FINISH##"
    abstain_tags: list[str] = msgspec.field(
        default_factory=lambda: ["[Unsolvable]", "[Unsolved]"]
    )
    language: str = "auto"
    entry: str = ""
    layout: Literal["reference", "prefix"] = "reference"
    stop_at_abstain_tag: bool = False
    retry_empty_replies: bool = False

    def __post_init__(self) -> None:
        if self.max_steps < 1:
            raise ValueError(f"max_steps must be >= 1, got {self.max_steps}")
        if self.max_turns < 1:
            raise ValueError(f"max_turns must be >= 1, got {self.max_turns}")
        if not self.finish_marker.strip():
            raise ValueError("finish_marker must not be empty or blank (a substring every reply "
                             f"contains would end each dialogue at once), got "
                             f"{self.finish_marker!r}")
        check.check_tags("protocol.abstain_tags", self.abstain_tags)
        check.check_entry_format("protocol.entry", self.entry)


class AdmissionConfig(msgspec.Struct, omit_defaults=True, forbid_unknown_fields=True):
    """Per-endpoint admission control of model requests.

    initial_cap: requests in flight per endpoint at the start.
    min_cap / max_cap: bounds of the adaptive cap.
    adaptive: adapt the cap to the server's `/metrics` (vLLM: requests waiting, KV-cache usage,
        preemptions); off, or when the server has no metrics, the cap stays at initial_cap.
    poll_interval_s: how often `/metrics` is scraped (by a separate task).
    waiting_per_running: target queue: grow while waiting <= this x running (keeps the server
        saturated), shrink when waiting exceeds twice that.
    kv_high: shrink when KV-cache usage is above this fraction (avoids preemption storms).
    increase: additive increase per poll while the cap is binding and the server has room.
    decrease: multiplicative decrease factor on overload or new preemptions.
    send_priority: also send vLLM's `priority` field (continuing episodes 0, new ones 1);
        needs a server started with `--scheduling-policy priority`.
    """

    initial_cap: int = 64
    min_cap: int = 4
    max_cap: int = 4096
    adaptive: bool = True
    poll_interval_s: float = 1.0
    waiting_per_running: float = 0.25
    kv_high: float = 0.92
    increase: int = 8
    decrease: float = 0.7
    send_priority: bool = False

    def __post_init__(self) -> None:
        if not 1 <= self.min_cap <= self.initial_cap <= self.max_cap:
            raise ValueError("need 1 <= min_cap <= initial_cap <= max_cap")
        if not 0.0 < self.decrease < 1.0:
            raise ValueError(f"decrease must be in (0, 1), got {self.decrease}")
        if self.poll_interval_s <= 0:
            raise ValueError("poll_interval_s must be > 0")
        if self.waiting_per_running < 0:
            raise ValueError(f"waiting_per_running must be >= 0, got {self.waiting_per_running}")
        if not 0.0 < self.kv_high <= 1.0:
            raise ValueError(f"kv_high must be in (0, 1] (a fraction of the KV cache), got "
                             f"{self.kv_high}")
        if self.increase < 1:
            raise ValueError(f"increase must be >= 1, got {self.increase} (adaptive = false "
                             "keeps the cap fixed)")


class RetryConfig(msgspec.Struct, omit_defaults=True, forbid_unknown_fields=True):
    """Episode-level retries of infrastructure failures (connection loss, 5xx after retries).

    max_attempts: attempts per unit; when exhausted the unit goes to failures.jsonl (never an
        agent failure) and is retried by `--resume`.
    backoff_s / backoff_cap_s: exponential backoff between attempts (full jitter).
    """

    max_attempts: int = 3
    backoff_s: NonNegative = 1.0
    backoff_cap_s: NonNegative = 30.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {self.max_attempts}")


class EngineConfig(msgspec.Struct, omit_defaults=True, forbid_unknown_fields=True):
    """The embedded engine, used by every endpoint whose base_url is "embedded".

    url: attach to this already running OpenAI-compatible server instead of starting one
        (e.g. "http://127.0.0.1:8000/v1"); "" = start the embedded vLLM engine for the run
        (its log goes to RUN_DIR/engine.log) and stop it at the end.
    model: model path for the started engine; "" = the bundled default model.
    device: "auto" (GPU when CUDA is usable), "cpu" or "gpu".
    max_model_len: context length of the started engine.
    cpu_kv_cache_gb: KV-cache size on CPU.
    tensor_parallel_size: GPUs per engine.
    extra_args: more `vllm serve` arguments.
    startup_timeout_s: how long the engine may take to become healthy.
    replicas: start this many engines (managed replicas) and route every "embedded" role over
        them (docs/routing.md); 1 = one engine, no router. Not with `url`.
    gpus_per_replica: GPUs of each replica (disjoint sets 0..G-1, G..2G-1, ...; tensor parallel
        over them); 0 = `tensor_parallel_size`. On CPU each replica gets its own port and an
        equal share of the cores.
    eager: run the model eagerly (vLLM --enforce-eager): no compilation at start (minutes on
        a small CPU machine, then cached), slower steps.
    cpu_threads: on CPU, bind the model's threads to this many cores (the first ones this
        process may use); 0 = vLLM's automatic binding, which keeps one core for its scheduler
        (on a 2-core machine the model gets one). Not with replicas (they share the cores).
    """

    url: str = ""
    model: str = ""
    device: Literal["auto", "cpu", "gpu"] = "auto"
    max_model_len: AtLeastOne = 8192
    cpu_kv_cache_gb: float = 4.0
    tensor_parallel_size: AtLeastOne = 1
    extra_args: list[str] = msgspec.field(default_factory=list)
    startup_timeout_s: Positive = 900.0
    replicas: int = 1
    gpus_per_replica: int = 0
    eager: bool = False
    cpu_threads: int = 0

    def __post_init__(self) -> None:
        if self.url:
            check.check_base_url("url", self.url, embedded=False)
        if not self.cpu_kv_cache_gb > 0:
            raise ValueError(f"cpu_kv_cache_gb must be > 0, got {self.cpu_kv_cache_gb}")
        check.check_extra_args(self.extra_args)
        if self.replicas < 1:
            raise ValueError(f"replicas: at least 1, got {self.replicas}")
        if self.replicas > check.MAX_REPLICAS:
            raise ValueError(f"replicas: at most {check.MAX_REPLICAS:,} engines, got "
                             f"{self.replicas}")
        if self.gpus_per_replica < 0:
            raise ValueError(f"gpus_per_replica: 0 or more, got {self.gpus_per_replica}")
        if self.replicas > 1 and self.url:
            raise ValueError("replicas: managed replicas start engines; not with `url` (list "
                             "running servers as a role's `replicas` instead)")
        if self.cpu_threads < 0:
            raise ValueError(f"cpu_threads: 0 (automatic) or more, got {self.cpu_threads}")
        if self.cpu_threads and self.replicas > 1:
            raise ValueError("cpu_threads: managed replicas share the cores among themselves; "
                             "not with replicas > 1")


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
    return _resolve_options(config, source, text, origins), text


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
