"""Process-wide cleanup of every live `VLLMServer`: stopped at interpreter exit and on SIGTERM /
SIGHUP where the host has not installed its own handler (the default action would kill the
process without running atexit), and a preexec hook that has the kernel SIGTERM a server whose
starting thread died (Linux `PR_SET_PDEATHSIG`). `backends.server` registers each server it
starts with `track` and removes it with `untrack`."""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import threading
import weakref
from collections.abc import Callable
from typing import Any

_LIVE: weakref.WeakSet[Any] = weakref.WeakSet()
_HOOKS_LOCK = threading.Lock()
_HOOKS_INSTALLED = False


def _stop_all() -> None:
    for server in list(_LIVE):
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            server.stop()


def _on_fatal_signal(signum: int, frame: object) -> None:
    _stop_all()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _install_hooks() -> None:
    global _HOOKS_INSTALLED
    with _HOOKS_LOCK:
        if _HOOKS_INSTALLED:
            return
        _HOOKS_INSTALLED = True
        atexit.register(_stop_all)
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGTERM, signal.SIGHUP):
            # Only where the default action would kill us without running atexit;
            # a host's own handler stays in charge (and should call stop()).
            if signal.getsignal(sig) is signal.SIG_DFL:
                signal.signal(sig, _on_fatal_signal)


def track(server: Any) -> None:
    """Stop `server` (anything with `stop()`) at exit or on a fatal signal, if still live."""
    _install_hooks()
    _LIVE.add(server)


def untrack(server: Any) -> None:
    _LIVE.discard(server)


def parent_death_hook() -> Callable[[], None] | None:
    """A preexec_fn that makes the kernel SIGTERM the server if the thread that started it
    dies (Linux prctl PR_SET_PDEATHSIG), or None. prctl is looked up before the fork."""
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    sig = int(signal.SIGTERM)

    def hook() -> None:
        prctl(1, sig)

    return hook
