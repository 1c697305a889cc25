"""Starting `perf.stub_server` in subprocesses for tests and measurements: `start_stub(...)`
returns a `StubProcess` once it accepts connections (also importable from perf.stub_server);
`stub_counters(url)` reads what a running stub has counted."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from typing import Self

READY_LINE = "STUB LISTENING "


class StubProcess:
    """One or more stub processes sharing a port (SO_REUSEPORT when more than one)."""

    def __init__(self, procs: list[subprocess.Popen[str]], root: str) -> None:
        self.procs = procs
        self.root = root
        self.url = root + "/v1"

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.procs]

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            if p.stdout is not None:
                p.stdout.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _spawn(args: list[str], timeout_s: float) -> tuple[subprocess.Popen[str], str]:
    env = dict(os.environ)
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = repo + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.Popen(
        [sys.executable, "-m", "perf.stub_server", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout_s
    lines: list[str] = []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if line.startswith(READY_LINE):
            return proc, line[len(READY_LINE) :].strip()
        lines.append(line)
    proc.kill()
    proc.wait()
    raise RuntimeError("stub server did not start; output:\n" + "".join(lines[-20:]))


def start_stub(
    *args: str, processes: int = 1, timeout_s: float = 30.0, port: int = 0
) -> StubProcess:
    """Start the stub in subprocess(es) with CLI `args`; returns once it accepts connections.
    `port`: 0 picks a free one; a given port lets a test restart a stub where it was."""
    extra = ["--reuse-port"] if processes > 1 else []
    first, root = _spawn([*args, "--port", str(port), *extra], timeout_s)
    procs = [first]
    try:
        port = root.rsplit(":", 1)[1]
        for _ in range(processes - 1):
            procs.append(_spawn([*args, "--port", port, *extra], timeout_s)[0])
    except BaseException:
        StubProcess(procs, root).stop()
        raise
    return StubProcess(procs, root)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stub_counters(url: str) -> dict[str, int]:
    """A stub's `GET /stub/counters` (faults injected, chat-completion requests received);
    `url` is its base URL, with or without the trailing /v1."""
    root = url.removesuffix("/v1")
    with urllib.request.urlopen(root + "/stub/counters", timeout=10) as resp:
        return {k: int(v) for k, v in json.loads(resp.read()).items()}
