"""Process-tree helpers for servers started in their own session: log tails, liveness (a
zombie counts as gone), and killing a whole tree (process group plus descendants that left it).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

__all__ = ["alive", "descendants", "kill_process_tree", "read_log_tail"]


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
