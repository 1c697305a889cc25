"""The keep-alive connections of one `ChatClient` (`backends/http.py` is the transport): at
most `limit` open at once, waiters served in order, idle ones reused newest first."""

from __future__ import annotations

import asyncio
import collections
from typing import TYPE_CHECKING

from .http import HttpConnectError, HttpConnection, Target

if TYPE_CHECKING:
    import ssl

__all__ = ["HttpPool"]


class HttpPool:
    """Keep-alive connections of one client, at most `limit` open at once (waiters queue in
    order); idle ones are reused newest first and closed after `keepalive_s` idle."""

    def __init__(self, limit: int = 4096, keepalive_s: float = 60.0) -> None:
        self.limit = max(1, limit)
        self.keepalive_s = keepalive_s
        self.open = 0  # connections open or opening
        self._idle: dict[tuple[bool, str, int], collections.deque[HttpConnection]] = {}
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        self._ssl: ssl.SSLContext | None = None
        self.closed = False

    def idle(self, target: Target) -> HttpConnection | None:
        """An idle connection to `target` when there is one and nobody waits (no waiting)."""
        idle = self._idle.get(target.key)
        if not idle or self._waiters:
            return None
        return self._pop_idle(target.key, idle[-1].loop.time())

    async def acquire(self, target: Target) -> HttpConnection:
        """An idle connection to `target`, else a new one, waiting in order for room under
        `limit` (a woken waiter that finds none goes back to the front)."""
        loop = asyncio.get_running_loop()
        queued = False
        while True:
            if queued or not self._waiters:
                conn = self._pop_idle(target.key, loop.time())
                if conn is not None:
                    return conn
                if self.open < self.limit or self._close_an_idle():
                    break
            fut = loop.create_future()
            if queued:
                self._waiters.appendleft(fut)
            else:
                self._waiters.append(fut)
            queued = True
            try:
                await fut
            except BaseException:
                if fut.done() and not fut.cancelled():
                    self._wake()  # pass the room we were given on
                raise
        self.open += 1
        try:
            ctx = self._ssl_context() if target.tls else None
            _, proto = await loop.create_connection(
                lambda: HttpConnection(loop, target.key), target.host, target.port,
                ssl=ctx, server_hostname=target.host if ctx is not None else None)
        except BaseException as exc:
            self.open -= 1
            self._wake()
            if isinstance(exc, OSError) and not isinstance(exc, TimeoutError):
                reason = exc.strerror or str(exc) or type(exc).__name__
                raise HttpConnectError(exc.errno, f"Cannot connect to host {target.host}:"
                                       f"{target.port}: {reason}") from exc
            raise
        return proto

    def release(self, conn: HttpConnection) -> None:
        """Give a connection back after its answer (kept when reusable, else closed)."""
        if conn.reusable and not self.closed:
            conn.reused = True
            conn.idle_since = conn.loop.time()
            self._idle.setdefault(conn.key, collections.deque()).append(conn)
        else:
            self.discard(conn)
            return
        self._wake()

    def discard(self, conn: HttpConnection) -> None:
        """Close a connection whose answer is incomplete or unusable."""
        conn.abort()
        self.open -= 1
        self._wake()

    def _pop_idle(self, key: tuple[bool, str, int], now: float) -> HttpConnection | None:
        idle = self._idle.get(key)
        while idle:
            conn = idle.pop()
            if conn.closed or now - conn.idle_since > self.keepalive_s:
                conn.abort()
                self.open -= 1
                continue
            return conn
        return None

    def _close_an_idle(self) -> bool:
        """Make room under the limit by closing the oldest idle connection (of any target)."""
        for idle in self._idle.values():
            while idle:
                conn = idle.popleft()
                conn.abort()
                self.open -= 1
                return True
        return False

    def _wake(self) -> None:
        while self._waiters:
            fut = self._waiters.popleft()
            if not fut.done():
                fut.set_result(None)
                return

    def _ssl_context(self) -> ssl.SSLContext:
        if self._ssl is None:
            import ssl  # only for https endpoints

            self._ssl = ssl.create_default_context()
        return self._ssl

    def close(self) -> None:
        self.closed = True
        for idle in self._idle.values():
            while idle:
                idle.pop().close()
                self.open -= 1
        self._idle.clear()
        while self._waiters:
            fut = self._waiters.popleft()
            if not fut.done():
                fut.set_exception(ConnectionResetError("client closed"))
