"""What `ChatClient` (`backends/client.py`) keeps beside its calls: its counters
(`ClientStats`), the server root of a base URL, the reading of a Retry-After header, and the
internal `Retry` of an attempt that failed in a retryable way."""

from __future__ import annotations

import time
from email.utils import parsedate_to_datetime

import msgspec

__all__ = ["ClientStats", "Retry", "retry_after_s", "server_root"]


class ClientStats(msgspec.Struct):
    """Counters of one client; read (not reset) by telemetry. All monotonic except in_flight."""

    requests: int = 0  # chat()/get calls started
    succeeded: int = 0  # calls that returned a response
    failed: int = 0  # calls that raised
    attempts: int = 0  # HTTP attempts sent
    retries: int = 0  # attempts beyond the first
    connection_errors: int = 0
    fd_exhausted: int = 0  # attempts that failed for want of a file descriptor (EMFILE)
    retryable_statuses: int = 0  # 429 / 5xx answers seen
    http_errors: int = 0  # non-retryable 4xx raised
    malformed: int = 0
    timeouts: int = 0
    deadline_extensions: int = 0  # deadlines moved on: the request was slow, the server busy
    exhausted: int = 0
    backoff_s: float = 0.0  # total time chosen to wait between attempts
    in_flight: int = 0


def server_root(base_url: str) -> str:
    """The server root of an OpenAI base URL: "http://h:8000/v1" -> "http://h:8000"."""
    root = base_url.rstrip("/")
    root = root.removesuffix("/v1")
    return root


def retry_after_s(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class Retry(Exception):
    """Internal to the client: this attempt failed in a retryable way."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after
