"""Typed errors of the backends layer.

`InfrastructureError` marks failures that are not the model's fault (connection loss,
5xx/429 after retries, timeouts, a dead server, a 200 whose body is not a chat completion).
The evaluator retries episodes that hit one and never records them as agent failures.
"""

from __future__ import annotations


class BackendError(Exception):
    """Base class of everything the backends layer raises."""


class InfrastructureError(BackendError):
    """Not the model's fault: retry the episode, never score it."""


class ConnectionFailed(InfrastructureError):
    pass


class RequestTimeout(InfrastructureError):
    def __init__(self, url: str, timeout_s: float) -> None:
        super().__init__(f"request to {url} timed out after {timeout_s:g}s")
        self.url = url
        self.timeout_s = timeout_s


class RetriesExhausted(InfrastructureError):
    def __init__(self, url: str, attempts: int, last: BaseException | str) -> None:
        super().__init__(f"request to {url} failed after {attempts} attempts; last error: {last}")
        self.url = url
        self.attempts = attempts
        self.last = last


class HTTPStatusError(BackendError):
    """A 4xx answer (other than 429): the request itself is wrong; retrying will not help."""

    def __init__(self, url: str, status: int, body: str) -> None:
        super().__init__(f"{url} answered HTTP {status}: {body[:500]}")
        self.url = url
        self.status = status
        self.body = body


class MalformedResponse(InfrastructureError):
    """The server answered 200 with a body that is not a valid chat completion (truncated, not
    JSON, no `choices` / `message`). A server or proxy fault, not the model's: the client
    retries it like a 5xx and raises this once its retries are spent (`attempts`)."""

    def __init__(self, url: str, detail: str, body: bytes | str = b"", attempts: int = 1) -> None:
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        tries = f" (after {attempts} attempts)" if attempts > 1 else ""
        super().__init__(f"malformed response from {url}{tries}: {detail}; "
                         f"body starts: {text[:300]!r}")
        self.url = url
        self.detail = detail
        self.body = text
        self.attempts = attempts


class ServerStartError(InfrastructureError):
    """The embedded engine died or never became healthy; carries the log tail."""

    def __init__(self, message: str, log_path: str | None = None, log_tail: str = "") -> None:
        full = message
        if log_path:
            full += f"\n(server log: {log_path})"
        if log_tail:
            full += "\n--- last lines of the server log ---\n" + log_tail
        super().__init__(full)
        self.log_path = log_path
        self.log_tail = log_tail
