"""Process-tree helpers for servers started in their own session: log tails, liveness (a
zombie counts as gone), killing a whole tree (process group plus descendants that left it),
and a reaper that kills the group when its owner dies without cleaning up.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

__all__ = ["Reaper", "alive", "descendants", "kill_process_tree", "read_log_tail",
           "start_reaper"]


def read_log_tail(path: Path | None, lines: int = 40, max_bytes: int = 32_768) -> str:
    """The last `lines` lines of a log file ('' if it is missing)."""
    if path is None:
        return ""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - max_bytes))
            data = fh.read()
    except OSError:
        return ""
    return "\n".join(data.decode("utf-8", "replace").splitlines()[-lines:])


def descendants(pid: int) -> list[int]:
    try:
        import psutil
    except ImportError:
        return []
    try:
        return [p.pid for p in psutil.Process(pid).children(recursive=True)]
    except psutil.Error:  # the process is already gone
        return []


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie child of ours counts as gone
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _signal_all(pgid: int, pids: Sequence[int], sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def kill_process_tree(proc: subprocess.Popen, grace_s: float = 15.0) -> int | None:
    """Terminate `proc` (a session leader), its process group and all its descendants:
    SIGTERM, wait up to `grace_s`, then SIGKILL. Returns the leader's exit code."""
    pgid = proc.pid
    tree = descendants(proc.pid)
    _signal_all(pgid, tree, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    try:
        proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        pass
    tree = sorted(set(tree) | set(descendants(proc.pid)))
    while time.monotonic() < deadline and any(alive(p) for p in tree):
        time.sleep(0.05)
    _signal_all(pgid, tree, signal.SIGKILL)
    try:
        return proc.wait(timeout=5.0)
    except subprocess.TimeoutExpired:
        return None


# The reaper is a separate small interpreter whose stdin is the read end of a pipe that only
# the owning process holds open (Python's pipe fds are close-on-exec, so no exec'd child
# inherits the write end). When the owner dies for any reason (SIGKILL, a Ray worker torn
# down, a host that swallowed SIGTERM, a server started off the main thread where
# PDEATHSIG cannot be used), the kernel closes the write end, read() returns EOF, and the
# reaper terminates the whole process group: API server, EngineCore and workers alike.
_REAPER_SRC = """
import os, signal, sys, time
pgid, grace = int(sys.argv[1]), float(sys.argv[2])
signal.signal(signal.SIGINT, signal.SIG_IGN)
while os.read(0, 4096):
    pass
def group_alive():
    try:
        os.killpg(pgid, 0)
        return True
    except OSError:
        return False
if group_alive():
    os.killpg(pgid, signal.SIGTERM)
    end = time.monotonic() + grace
    while time.monotonic() < end and group_alive():
        time.sleep(0.1)
    if group_alive():
        os.killpg(pgid, signal.SIGKILL)
"""


class Reaper:
    """Handle on a started reaper; `release()` after a normal stop (idempotent)."""

    def __init__(self, proc: subprocess.Popen, write_fd: int) -> None:
        self.proc, self._fd = proc, write_fd

    def release(self) -> None:
        """The owner cleaned up itself: stop the reaper first, so it never signals a
        process group id that the kernel may since have handed to someone else."""
        if self._fd < 0:
            return
        try:
            self.proc.kill()
            self.proc.wait(timeout=5.0)
        except (OSError, subprocess.TimeoutExpired):
            pass
        os.close(self._fd)
        self._fd = -1


def start_reaper(pgid: int, grace_s: float = 15.0) -> Reaper | None:
    """Start a reaper for process group `pgid` (module comment). None if it cannot start."""
    r, w = os.pipe()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _REAPER_SRC, str(pgid), f"{grace_s:g}"],
            stdin=r, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
    except OSError:
        os.close(w)
        return None
    finally:
        os.close(r)
    return Reaper(proc, w)
