"""`ChatClient`: the async OpenAI chat-completions client every model call goes through.

One pool of keep-alive HTTP/1.1 connections (`backends.http`, default 4096 connections)
serves thousands of in-flight requests; bodies are encoded and decoded with msgspec. Failures
that are not the request's fault (connection errors, 429, 5xx, a 200 whose body is not a chat
completion) are retried with exponential backoff and full jitter, honouring Retry-After; the
whole call, retries included, is bounded by one deadline, which moves on while the request is
in flight and the server's token counters show it working (`progress_watch`): a slow engine is
not a failed one. No logging on the hot path: counters live in `ChatClient.stats`.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Sequence
from typing import Any, Self

import msgspec

from .chat_wire import (
    TokenCount,
    TokenizeRequest,
    build_request,
    check_tool_choice,
    decode_models,
    decode_response,
    decode_token_count,
    encode_request,
    encode_tools,
    json_schema_format,
    named_tool_choice,
)
from .client_support import ClientStats, Retry, retry_after_s, server_root
from .errors import HTTPStatusError, MalformedResponse, RequestTimeout, RetriesExhausted
from .fdlimit import is_fd_exhaustion
from .http import (
    HttpConnection,
    HttpResponse,
    Target,
    header_lines,
    request_bytes,
    target_of,
)
from .http_pool import HttpPool
from .progress_watch import ProgressWatch
from .types import ChatMessage, ChatResponse, Endpoint, SamplingParams, api_key_of

__all__ = [
    "ChatClient",
    "ClientStats",
    "encode_tools",
    "json_schema_format",
    "named_tool_choice",
    "server_root",
]

DEFAULT_SESSION_HEADER = "X-Session-ID"


class ChatClient:
    """Async client of one OpenAI-compatible endpoint. Create once, share, close at the end."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        max_connections: int = 4096,
        session_header: str = DEFAULT_SESSION_HEADER,
        backoff_base_s: float = 0.5,
        backoff_cap_s: float = 30.0,
        keepalive_timeout_s: float = 60.0,
        max_wait_factor: float = 10.0,
    ) -> None:
        if not endpoint.base_url.startswith(("http://", "https://")):
            raise ValueError(
                f"ChatClient needs an http(s) base_url, got {endpoint.base_url!r}; "
                "start the embedded engine first and use its endpoint()"
            )
        self.endpoint = endpoint
        self.base_url = endpoint.base_url.rstrip("/")
        self.root_url = server_root(self.base_url)
        self.chat_url = self.base_url + "/chat/completions"
        self.session_header = session_header
        self.backoff_base_s = backoff_base_s
        self.backoff_cap_s = backoff_cap_s
        self.max_connections = max_connections
        self.keepalive_timeout_s = keepalive_timeout_s
        self.stats = ClientStats()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        api_key = api_key_of(endpoint)  # MissingApiKey before any request
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        headers.update(endpoint.extra_headers)
        self._headers = header_lines(headers)  # sent with every request, encoded once
        self._chat_target = target_of(self.chat_url)
        self._pool: HttpPool | None = None
        self._model: str | None = endpoint.model or None
        self._model_lock: asyncio.Lock | None = None
        self.progress = ProgressWatch(self._metrics_text)
        self.max_wait_factor = max_wait_factor

    # -- lifecycle -------------------------------------------------------------------------
    def _get_pool(self) -> HttpPool:
        pool = self._pool
        if pool is None or pool.closed:
            pool = self._pool = HttpPool(self.max_connections, self.keepalive_timeout_s)
        return pool

    async def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
        self._pool = None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- public API ------------------------------------------------------------------------
    async def chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        model: str | None = None,
        tools: list[dict[str, Any]] | msgspec.Raw | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        response_format: dict[str, Any] | None = None,
        sampling: SamplingParams | None = None,
        priority: int | None = None,
        session_id: str | None = None,
        extra_headers: dict[str, str] | None = None,
        timeout_s: float | None = None,
    ) -> ChatResponse:
        """One chat completion. Raises the typed errors of `backends.errors`."""
        if tool_choice is not None:
            check_tool_choice(tool_choice)
        if model is None:
            model = self._model or await self.resolve_model()
        body = encode_request(
            build_request(
                model,
                messages,
                tools=tools,
                tool_choice=tool_choice,
                response_format=response_format,
                sampling=sampling,
                priority=priority,
                user=session_id,
            )
        )
        headers = b""
        if extra_headers:
            headers = header_lines(extra_headers)
        if session_id is not None:
            headers += f"{self.session_header}: {session_id}\r\n".encode("latin-1")
        response, latency, attempts = await self._request(
            "POST", self._chat_target, body, headers, timeout_s, decode_response,
            follow_progress=True,
        )
        response.latency_s = latency
        response.attempts = attempts
        return response

    async def list_models(self, *, timeout_s: float | None = None) -> list[dict[str, Any]]:
        """GET /v1/models: the server's model objects (each has an `id`)."""
        url = self.base_url + "/models"
        models, _, _ = await self._request("GET", target_of(url), None, b"", timeout_s,
                                           decode_models)
        return models

    async def count_tokens(
        self, messages: Sequence[ChatMessage], *, model: str | None = None,
        timeout_s: float | None = 60.0,
    ) -> TokenCount | None:
        """The prompt tokens `messages` make on this server, with its context length, from
        vLLM's POST /tokenize (server root); None when the server has no such route (an
        HTTP 404 / 405, as other OpenAI-compatible servers answer). Other errors raise."""
        if model is None:
            model = self._model or await self.resolve_model()
        body = encode_request(TokenizeRequest(model=model, messages=messages))
        try:
            count, _, _ = await self._request("POST", target_of(self.root_url + "/tokenize"),
                                              body, b"", timeout_s, decode_token_count)
        except HTTPStatusError as exc:
            if exc.status in (404, 405):
                return None
            raise
        return count

    async def resolve_model(self) -> str:
        """The endpoint's model, or the first model the server lists (looked up once)."""
        if self._model:
            return self._model
        if self._model_lock is None:
            self._model_lock = asyncio.Lock()
        async with self._model_lock:
            if not self._model:
                models = await self.list_models()
                if not models:
                    raise MalformedResponse(self.base_url + "/models", "server lists no models")
                self._model = models[0]["id"]
        return self._model

    async def get_text(self, path: str, *, timeout_s: float | None = 30.0) -> str:
        """GET a text resource. "/metrics" resolves against the server root (no /v1);
        a full http(s) URL is used as is; anything else is relative to base_url."""
        if path.startswith(("http://", "https://")):
            url = path
        elif path.startswith("/"):
            url = self.root_url + path
        else:
            url = self.base_url + "/" + path
        raw, _, _ = await self._request("GET", target_of(url), None, b"", timeout_s, None)
        return raw.decode("utf-8", "replace")

    async def post(self, url: str, body: bytes, decode: Callable[[bytes], Any] | None = None,
                   *, timeout_s: float | None = None) -> Any:
        """POST a JSON body to `url` with the client's retries and deadline; the decoded
        answer (`decode` rejecting a 2xx body makes it a malformed response, retried)."""
        value, _, _ = await self._request("POST", target_of(url), body, b"", timeout_s, decode)
        return value

    # -- transport -------------------------------------------------------------------------
    def _backoff(self, retry_index: int) -> float:
        """Full jitter: uniform(0, min(cap, base * 2**retry_index))."""
        return random.uniform(0.0, min(self.backoff_cap_s, self.backoff_base_s * (2**retry_index)))

    async def _request(
        self,
        method: str,
        target: Target,
        body: bytes | None,
        headers: bytes,
        timeout_s: float | None,
        decode: Callable[[bytes], Any] | None = None,
        *,
        follow_progress: bool = False,
    ) -> tuple[Any, float, int]:
        """Send with retries. Returns (decoded body, latency of the successful attempt,
        attempts). A 2xx body that `decode` rejects is a malformed response: retried like a
        5xx, then `MalformedResponse` (an InfrastructureError). `decode=None`: the raw bytes.
        The deadline (`timeout_s`, retries included) is fixed, except with `follow_progress`
        (model calls): it moves on while the request is in flight and the server shows
        progress (`ProgressWatch`), up to `max_wait_factor` times `timeout_s`."""
        stats = self.stats
        stats.requests += 1
        stats.in_flight += 1
        total = self.endpoint.timeout_s if timeout_s is None else timeout_s
        max_attempts = max(1, self.endpoint.max_retries + 1)
        pool = self._get_pool()
        loop = asyncio.get_running_loop()
        start = loop.time()
        deadline = start + total
        last_call = start + total * (max(1.0, self.max_wait_factor) if follow_progress else 1.0)
        data = request_bytes(method, target, self._headers + headers, body)
        attempt = 0
        malformed: tuple[str, bytes] | None = None  # the last attempt's bad body
        url = target.url
        try:
            while True:
                attempt += 1
                stats.attempts += 1
                if deadline - loop.time() <= 0:
                    raise self._timed_out(url, total)
                t0 = loop.time()
                try:
                    resp, deadline = await self._send(pool, target, data, deadline, last_call,
                                                      total)
                    if resp is None:
                        raise self._timed_out(url, total)
                    status = resp.status
                    raw = resp.body
                    if 200 <= status < 300:
                        ok, value = self._decoded(raw, decode)
                        if not ok:
                            malformed = (value, raw)
                            raise Retry(f"malformed response: {value}")
                        stats.succeeded += 1
                        return value, loop.time() - t0, attempt
                    malformed = None
                    if status == 429 or status >= 500:
                        stats.retryable_statuses += 1
                        raise Retry(
                            f"HTTP {status}: {raw[:200].decode('utf-8', 'replace')}",
                            retry_after_s(resp.headers.get("retry-after")),
                        )
                    stats.http_errors += 1
                    raise HTTPStatusError(url, status, raw.decode("utf-8", "replace"))
                except Retry as exc:
                    reason, retry_after = exc.reason, exc.retry_after
                except TimeoutError:
                    raise self._timed_out(url, total) from None
                except OSError as exc:  # refused, reset, lost, a broken answer, EMFILE
                    stats.connection_errors += 1
                    if is_fd_exhaustion(exc):
                        stats.fd_exhausted += 1
                    reason, retry_after = f"{type(exc).__name__}: {exc}", None
                    malformed = None
                if attempt >= max_attempts:
                    stats.exhausted += 1
                    if malformed is not None:
                        raise MalformedResponse(url, malformed[0], malformed[1], attempt)
                    raise RetriesExhausted(url, attempt, reason)
                wait = self._backoff(attempt - 1)
                if retry_after is not None:
                    wait = max(wait, retry_after)
                if loop.time() + wait >= deadline:
                    raise self._timed_out(url, total)
                stats.retries += 1
                stats.backoff_s += wait
                await asyncio.sleep(wait)
        except BaseException:
            stats.failed += 1
            raise
        finally:
            stats.in_flight -= 1

    async def _send(self, pool: HttpPool, target: Target, data: bytes, deadline: float,
                    last_call: float, total: float) -> tuple[HttpResponse | None, float]:
        """One attempt: (the answer, the deadline as it stands), or (None, _) when the
        deadline passed with no progress on the server. A reused connection that the server
        had closed before reading the request is replaced once, silently."""
        conn = await self._connect(pool, target, deadline)
        try:
            try:
                conn.send(data)
                resp = await conn.wait(deadline)
            except ConnectionError:
                if not conn.reused or conn.received:
                    raise
                pool.discard(conn)
                conn = await self._connect(pool, target, deadline)
                conn.send(data)
                resp = await conn.wait(deadline)
            window = min(self.progress.window_s, total)
            while resp is None:  # the deadline passed with the request in flight
                if deadline >= last_call or not await self.progress.progressing(window):
                    pool.discard(conn)
                    return None, deadline
                self.stats.deadline_extensions += 1
                deadline = min(last_call, asyncio.get_running_loop().time() + window)
                resp = await conn.wait(deadline)
        except BaseException:
            pool.discard(conn)
            raise
        pool.release(conn)
        return resp, deadline

    async def _connect(self, pool: HttpPool, target: Target, deadline: float) -> HttpConnection:
        conn = pool.idle(target)
        if conn is not None:
            return conn
        remaining = deadline - asyncio.get_running_loop().time()
        if remaining <= 0:
            raise TimeoutError
        async with asyncio.timeout(remaining):
            return await pool.acquire(target)

    async def _metrics_text(self) -> str | None:
        """The server's /metrics page for `ProgressWatch` (None: the server has none). Not
        counted in `stats`: it is not a model call."""
        pool = self._get_pool()
        target = target_of(self.root_url + "/metrics")
        async with asyncio.timeout(10.0):
            conn = await pool.acquire(target)
            try:
                conn.send(request_bytes("GET", target, self._headers, None))
                resp = await conn.wait(None)
            except BaseException:
                pool.discard(conn)
                raise
            pool.release(conn)
        assert resp is not None
        if resp.status in (404, 405):
            return None
        if resp.status != 200:
            raise ConnectionError(f"/metrics answered HTTP {resp.status}")
        return resp.body.decode("utf-8", "replace")

    def _decoded(self, raw: bytes, decode: Callable[[bytes], Any] | None) -> tuple[bool, Any]:
        """(True, `decode(raw)`), or (False, why) when the body is malformed."""
        if decode is None:
            return True, raw
        try:
            return True, decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError, ValueError,
                KeyError, TypeError) as exc:
            self.stats.malformed += 1
            return False, str(exc) or type(exc).__name__

    def _timed_out(self, url: str, total: float) -> RequestTimeout:
        self.stats.timeouts += 1
        return RequestTimeout(url, total)
