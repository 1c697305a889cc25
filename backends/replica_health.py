"""Health of one router replica: in or out, probes, restarts with backoff.

A replica is taken out when a request to it fails at the connection level (refused, reset,
dropped), after `error_threshold` answers of 5xx in a row, or when `probe_failures` health
probes in a row fail (a replica that hangs with its connections open). While out, it is probed
every `probe_interval_s`; `rejoin_probes` good probes in a row bring it back. A managed replica
(one with a restart callback) that stays out for `restart_after_s` is restarted, then again
after `restart_backoff_s`, doubling up to `restart_backoff_cap_s`, until it answers.

A probe is `GET <root>/health` (vLLM: 200 once the engine is up, 5xx when it died); any
answer below 500 counts as alive, so an OpenAI-compatible proxy without /health (404) is
still seen as up, and one that does not answer at all is not.
"""

from __future__ import annotations

import msgspec

from .client import ChatClient
from .errors import BackendError, HTTPStatusError


class HealthSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    probe_path: str = "/health"
    probe_interval_s: float = 1.0
    probe_timeout_s: float = 5.0
    probe_failures: int = 3  # failed probes in a row that take a replica out
    rejoin_probes: int = 1  # good probes in a row that bring it back
    error_threshold: int = 3  # 5xx answers in a row that take a replica out
    replica_retries: int = 1  # retries inside one replica before the request fails over
    replica_backoff_s: float = 0.05  # their backoff base
    max_failovers: int = 8  # replica changes per request before giving up
    all_down_wait_s: float = 30.0  # a request waits this long for any replica to come back
    restart_after_s: float = 5.0
    restart_backoff_s: float = 5.0
    restart_backoff_cap_s: float = 120.0


class ReplicaHealth:
    """The state machine of one replica's health. Pure: the router drives it."""

    __slots__ = (
        "down_reason",
        "down_since",
        "errors",
        "good_probes",
        "healthy",
        "next_restart_at",
        "probe_misses",
        "restart_attempt",
        "restarts",
        "settings",
    )

    def __init__(self, settings: HealthSettings) -> None:
        self.settings = settings
        self.healthy = True
        self.down_since: float | None = None
        self.down_reason = ""
        self.probe_misses = 0
        self.good_probes = 0
        self.errors = 0
        self.restarts = 0
        self.restart_attempt = 0
        self.next_restart_at = 0.0

    def take_out(self, now: float, reason: str) -> bool:
        """Mark down; True when this changed the state."""
        if not self.healthy:
            return False
        self.healthy = False
        self.down_since = now
        self.down_reason = reason
        self.good_probes = 0
        self.restart_attempt = 0
        self.next_restart_at = now + self.settings.restart_after_s
        return True

    def rejoin(self) -> bool:
        if self.healthy:
            return False
        self.healthy = True
        self.down_since = None
        self.down_reason = ""
        self.probe_misses = 0
        self.errors = 0
        return True

    def server_error(self) -> bool:
        """One 5xx answer (after the replica's own retries); True: take it out now."""
        self.errors += 1
        return self.errors >= self.settings.error_threshold

    def answered(self) -> None:
        self.errors = 0

    def probed(self, ok: bool) -> str | None:
        """Feed one probe; returns "out" or "in" when the replica should change state."""
        if self.healthy:
            self.probe_misses = 0 if ok else self.probe_misses + 1
            return "out" if self.probe_misses >= self.settings.probe_failures else None
        self.good_probes = self.good_probes + 1 if ok else 0
        return "in" if self.good_probes >= self.settings.rejoin_probes else None

    def restart_due(self, now: float) -> bool:
        return not self.healthy and now >= self.next_restart_at

    def restarting(self, now: float) -> None:
        """A restart is being attempted: schedule the next one with exponential backoff."""
        s = self.settings
        self.restarts += 1
        delay = min(s.restart_backoff_cap_s, s.restart_backoff_s * 2**self.restart_attempt)
        self.restart_attempt += 1
        self.next_restart_at = now + delay


async def probe(client: ChatClient, path: str, timeout_s: float) -> bool:
    """Is the server answering at all? Any HTTP answer below 500 counts as alive."""
    try:
        await client.get_text(path, timeout_s=timeout_s)
    except HTTPStatusError as exc:
        return exc.status < 500
    except (TimeoutError, BackendError, OSError):
        return False
    return True
