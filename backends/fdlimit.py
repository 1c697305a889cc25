"""File descriptors: the open-file limit, the share of it connections may use, and EMFILE.

Thousands of in-flight requests need thousands of sockets, and a login shell's soft
RLIMIT_NOFILE is often 1,024. `raise_nofile_limit()` (called once when `agentsweep` starts)
lifts the soft limit to the hard one; `connection_budget()` says how many sockets the
connection pools may hold beside the files a run keeps open; `is_fd_exhaustion(exc)` tells
"too many open files" (EMFILE, or ENFILE for the whole system) apart from other OS errors:
it is an infrastructure fault (retried, never scored), not the unit's.
"""

from __future__ import annotations

import errno
import os

try:
    import resource
except ImportError:  # pragma: no cover - not on POSIX
    resource = None  # type: ignore[assignment]

# raise the soft limit at most this far when the hard limit is "unlimited"
UNLIMITED_TARGET = 1 << 20
# descriptors kept for everything that is not a connection: result files, stores, the
# engine's pipes, imports, logs; and a share of the rest for the same reasons
RESERVE_FDS = 64
RESERVE_SHARE = 0.1
FD_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE})


def nofile_limit() -> tuple[int, int]:
    """(soft, hard) RLIMIT_NOFILE; a huge number stands for unlimited."""
    if resource is None:  # pragma: no cover
        return UNLIMITED_TARGET, UNLIMITED_TARGET
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    inf = resource.RLIM_INFINITY
    return (UNLIMITED_TARGET if soft == inf else soft, UNLIMITED_TARGET if hard == inf else hard)


def raise_nofile_limit() -> tuple[int, int]:
    """Lift the soft open-file limit to the hard limit (or 2**20 when unlimited); returns the
    (soft, hard) limit now in force. Never fails: a refusal leaves the limit as it was."""
    if resource is None:  # pragma: no cover
        return nofile_limit()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = UNLIMITED_TARGET if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):  # e.g. macOS caps the soft limit below the hard one
            try:
                resource.setrlimit(resource.RLIMIT_NOFILE, (min(target, 10240), hard))
            except (ValueError, OSError):
                pass
    return nofile_limit()


def open_fds() -> int:
    """Descriptors this process has open now (0 when the platform does not say)."""
    for d in ("/proc/self/fd", "/dev/fd"):
        try:
            return len(os.listdir(d))
        except OSError:
            continue
    return 0  # pragma: no cover


def connection_budget() -> int:
    """How many sockets the connection pools of this process may hold in all: the soft limit
    less the descriptors open now and a reserve (at least 4)."""
    soft, _ = nofile_limit()
    free = soft - open_fds()
    return max(4, int(free - RESERVE_FDS - RESERVE_SHARE * free))


def is_fd_exhaustion(exc: BaseException | None) -> bool:
    """True when `exc`, or an exception it was raised from, is EMFILE / ENFILE."""
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, OSError) and exc.errno in FD_ERRNOS:
            return True
        inner = getattr(exc, "os_error", None)  # aiohttp.ClientConnectorError
        if isinstance(inner, OSError) and inner.errno in FD_ERRNOS:
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False
