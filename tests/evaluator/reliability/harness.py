"""Run the `agentsweep` CLI in-process on one input: exit code, captured stdout/stderr, and a
hard bound on its time enforced by the harness (never a timing assertion).

The bound is two-layered: SIGALRM raises `Hang` (a BaseException, so the CLI's own handlers
cannot swallow it) after `timeout_s`; `faulthandler.dump_traceback_later` kills the whole
process a minute later if even that did not get through (a hang inside C code). The bound
is generous (the corpus's 180 s against commands of well under a second) because it must tell
a hang from a busy machine: a CI host shared with the engine session once stalled a 0.04 s
command for 42 s. An engine start is an error of the corpus, not of the input: `start_engine`,
`VLLMServer()` and `VLLMServer.start` are replaced by a guard that raises `EngineWouldStart`.
"""

from __future__ import annotations

import contextlib
import faulthandler
import hashlib
import io
import signal
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


class Hang(BaseException):
    """The command ran past the harness's bound."""


class EngineWouldStart(BaseException):
    """The command got as far as starting a model engine (the corpus must fail before)."""


@dataclass
class Outcome:
    code: int
    out: str
    err: str


@contextlib.contextmanager
def bounded(timeout_s: float) -> Iterator[None]:
    def on_alarm(signum: int, frame: object) -> None:
        raise Hang(f"still running after {timeout_s}s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout_s)
    faulthandler.dump_traceback_later(timeout_s + 60, exit=True)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        faulthandler.cancel_dump_traceback_later()


@contextlib.contextmanager
def no_engine() -> Iterator[None]:
    from backends import server
    from evaluator.run import resources, sweep

    async def guard(*args: object, **kwargs: object) -> None:
        raise EngineWouldStart("start_engine was called")

    def guard_sync(*args: object, **kwargs: object) -> None:
        raise EngineWouldStart("VLLMServer.start was called")

    saved = (sweep.start_engine, resources.start_engine, server.VLLMServer.start,
             server.VLLMServer.__init__)
    sweep.start_engine = resources.start_engine = guard  # type: ignore[assignment]
    server.VLLMServer.start = guard_sync  # type: ignore[method-assign]
    server.VLLMServer.__init__ = guard_sync  # type: ignore[method-assign]
    try:
        yield
    finally:
        (sweep.start_engine, resources.start_engine, server.VLLMServer.start,
         server.VLLMServer.__init__) = saved


def run_cli(argv: list[str], timeout_s: float = 180.0) -> Outcome:
    """`agentsweep ARGV` in this process: (exit code, stdout, stderr)."""
    from evaluator.cli import main

    out, err = io.StringIO(), io.StringIO()
    with bounded(timeout_s), no_engine(), contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse usage errors
            code = exc.code if isinstance(exc.code, int) else 2
    return Outcome(int(code), out.getvalue(), err.getvalue())


def snapshot(paths: list[Path]) -> dict[str, str]:
    """Every file under `paths` (recursively) -> sha256 of its bytes (or its file type)."""
    found: dict[str, str] = {}
    for root in paths:
        items = [root] if not root.is_dir() or root.is_symlink() else sorted(root.rglob("*"))
        for p in items:
            try:
                st = p.lstat()
            except FileNotFoundError:
                found[str(p)] = "missing"
                continue
            if stat.S_ISREG(st.st_mode):
                found[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
            elif not stat.S_ISDIR(st.st_mode):
                found[str(p)] = f"mode {stat.S_IFMT(st.st_mode):o}"
    return found


def stderr_is_one_line(err: str) -> bool:
    lines = [line for line in err.splitlines() if line.strip()]
    return len(lines) == 1

