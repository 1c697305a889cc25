"""The parts of a router replica: settings, the replica spec (URL, endpoint or managed server),
per-replica state, and the small request helpers `backends.router.Router` uses."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from .client import ChatClient
from .errors import InfrastructureError, RetriesExhausted
from .replica_health import HealthSettings, ReplicaHealth
from .router_admission import AdmissionSettings, ReplicaAdmission
from .types import ChatMessage, Endpoint

Restart = Callable[[], Awaitable[object]]


class AllReplicasDown(InfrastructureError):
    """No replica answered within the wait: retry the episode later, never score it."""


class RouterSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    policy: str = "sticky_least_loaded"  # | "round_robin" | "hash"
    abs_threshold: float = 4.0  # load units (one active session, or tokens_per_unit queued)
    rel_threshold: float = 1.5
    continuing_slack: float = 2.0
    tokens_per_unit: float = 4096.0
    session_idle_s: float = 60.0
    chars_per_token: float = 4.0  # request size estimate for queued tokens
    poll_interval_s: float = 1.0  # /metrics
    admission: AdmissionSettings = msgspec.field(default_factory=AdmissionSettings)
    health: HealthSettings = msgspec.field(default_factory=HealthSettings)


@dataclass
class ReplicaSpec:
    """One replica: its endpoint, an optional restart callback (managed servers), a weight."""

    endpoint: Endpoint
    restart: Restart | None = None
    weight: float = 1.0


class RouterStats(msgspec.Struct):
    requests: int = 0
    succeeded: int = 0
    failed: int = 0
    failovers: int = 0  # a request moved to another replica after a failure
    taken_out: int = 0
    rejoined: int = 0
    restarts: int = 0
    restart_errors: int = 0
    all_down_waits: int = 0
    in_flight: int = 0


class Failover(Exception):
    """Internal: this attempt failed in a way another replica may not; place it again."""

    def __init__(self, cause: BaseException | str) -> None:
        super().__init__(str(cause))
        self.cause = cause


class Replica:
    __slots__ = ("admission", "answered", "attempts", "cached_tokens", "client",
                 "completion_tokens", "has_models", "health", "index", "models", "name",
                 "prompt_tokens", "requests", "spec")

    def __init__(self, index: int, spec: ReplicaSpec, client: ChatClient,
                 settings: RouterSettings) -> None:
        self.index = index
        self.spec = spec
        self.name = spec.endpoint.base_url
        self.client = client
        self.admission = ReplicaAdmission(settings.admission)
        self.health = ReplicaHealth(settings.health)
        self.attempts: set[asyncio.Future[Any]] = set()
        self.has_models: bool | None = None
        self.models: list[str] = []
        self.requests = 0  # sent (failovers and unanswered ones included)
        self.answered = 0  # answered (telemetry: what the roles count as calls)
        self.prompt_tokens = 0  # of the answers this replica gave (telemetry)
        self.completion_tokens = 0
        self.cached_tokens = 0


def as_replica(item: Any, template: Endpoint | None = None) -> ReplicaSpec:
    """A ReplicaSpec from a URL, an Endpoint, a ReplicaSpec or a managed server (an object
    with `endpoint()`, `astop()` and `astart()`, e.g. backends.server.VLLMServer)."""
    if isinstance(item, ReplicaSpec):
        return item
    if isinstance(item, Endpoint):
        return ReplicaSpec(item)
    if isinstance(item, str):
        ep = Endpoint(base_url=item)
        if template is not None:
            ep = msgspec.structs.replace(template, base_url=item)
        return ReplicaSpec(ep)
    if callable(getattr(item, "endpoint", None)) and hasattr(item, "astart"):
        server = item

        async def restart() -> None:
            await server.astop()
            await server.astart()

        return ReplicaSpec(server.endpoint(), restart)
    raise TypeError(f"not a replica: {item!r}")


def estimate_tokens(messages: Sequence[ChatMessage], chars_per_token: float) -> int:
    n = 0
    for m in messages:
        n += 8 + len(m.content or "")
        if m.tool_calls:
            for tc in m.tool_calls:
                n += len(tc.function.name) + len(tc.function.arguments)
    return int(n / chars_per_token)


def first_turn(messages: Sequence[ChatMessage]) -> bool:
    return not any(m.role == "assistant" for m in messages)


def failure_kind(exc: InfrastructureError) -> str:
    last = str(exc.last) if isinstance(exc, RetriesExhausted) else ""
    if last.startswith("HTTP 429"):
        return "overload"
    if last.startswith("HTTP "):
        return "server"
    return "connection"
