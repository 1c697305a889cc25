"""The tables of the run configuration below `RunConfig` (`evaluator/config.py`): the data,
the roles' endpoints and replicas, the protocol limits, admission, retries and the engine.

Each is a msgspec struct with every field documented and defaulted; `evaluator.config` imports
them and is the place to use them from.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from backends.types import AtLeastOne, Endpoint, NonNegative, Positive, SamplingParams
from evaluator import config_check as check
from evaluator.config_routing import check_replicas


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
        a small CPU machine, then cached), slower steps. "auto": eager on a CPU with at most 2
        cores (backends.server_launch.small_cpu_choices), else compiled.
    cpu_threads: on CPU, bind the model's threads to this many cores (the first ones this
        process may use); 0 = vLLM's automatic binding, which keeps one core for its scheduler
        (on a 2-core machine the model gets one); "auto": every core on a CPU with at most 2,
        else vLLM's binding. Not with replicas (they share the cores).
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
    eager: bool | Literal["auto"] = "auto"
    cpu_threads: int | Literal["auto"] = "auto"

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
        if self.cpu_threads != "auto" and self.cpu_threads < 0:
            raise ValueError(f"cpu_threads: \"auto\", 0 (vLLM's binding) or more, got "
                             f"{self.cpu_threads}")
        if self.cpu_threads != "auto" and self.cpu_threads and self.replicas > 1:
            raise ValueError("cpu_threads: managed replicas share the cores among themselves; "
                             "not with replicas > 1")
