"""The wait for a starting vLLM server (`StartWait`, a base of `backends.server.VLLMServer`).

The server answers (`/health`, its model in `/v1/models`) or the start fails: its process
exited, its log says the engine died (vLLM can leave its API server running), or the
deadline passed. At the deadline a start whose processes are still working (using CPU:
compiling on a slow or busy machine) is given more time, a window at a time, up to
STARTUP_WAIT_FACTOR times `startup_timeout_s`. `_boot` is that logic as steps; `start` and
`astart` perform them (blocking, or off the event loop).
"""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Generator
from pathlib import Path
from typing import Self

from .errors import ServerStartError
from .process_tree import read_log_tail
from .server_probe import tree_cpu_s

_POLL_S = 0.5
STARTUP_WINDOW_S = 60.0
"""Past `startup_timeout_s`, the start waits on in steps of this long (at most) while the
server's processes are working: they used at least STARTUP_WORK_S of CPU over a
STARTUP_SAMPLE_S look."""
STARTUP_WORK_S = 0.1
STARTUP_SAMPLE_S = 2.0
ENGINE_DEAD = ("EngineCore encountered a fatal error", "Engine core initialization failed")
"""Log lines of a start that has failed although the API server process lives on."""
STARTUP_WAIT_FACTOR = 3.0
"""A start that keeps working waits at most this many times `startup_timeout_s`."""


class StartWait:
    """`start` / `astart` of `VLLMServer`, which sets what is declared here (`_spawn` starts
    the process)."""

    _proc: subprocess.Popen[bytes] | None
    _log_path: Path
    _model_path: object
    _polls: int
    _started_at: float
    startup_timeout_s: float
    startup_extensions: int

    _attached: bool

    def _spawn(self) -> None:
        raise NotImplementedError

    def stop(self) -> int | None:
        raise NotImplementedError

    def _cleanup_dead(self) -> None:
        raise NotImplementedError

    def _check_alive(self) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is not None:
            code = proc.returncode
            self._cleanup_dead()
            raise ServerStartError(
                f"vLLM server for {self._model_path} exited with code {code} during startup",
                str(self._log_path), read_log_tail(self._log_path),
            )
        self._polls += 1
        if self._polls % 20 == 0 and self._engine_died():  # every ~10 s
            self.stop()
            raise ServerStartError(
                f"vLLM engine for {self._model_path} failed during startup (its API "
                "server still ran)", str(self._log_path), read_log_tail(self._log_path))

    def _engine_died(self) -> bool:
        """The log says the engine core failed (vLLM can leave its API server running)."""
        tail = read_log_tail(self._log_path, lines=200)
        return any(marker in tail for marker in ENGINE_DEAD)

    def _timed_out(self) -> ServerStartError:
        tail = read_log_tail(self._log_path)
        waited = self.startup_timeout_s
        if self.startup_extensions:
            waited = round(time.monotonic() - self._started_at)
        self.stop()
        return ServerStartError(
            f"vLLM server for {self._model_path} was not ready after {waited:g}s"
            + (" (its processes had stopped working)" if self.startup_extensions else ""),
            str(self._log_path), tail,
        )

    def _tree_cpu_s(self) -> float | None:
        """CPU seconds used so far by the server's process tree; None when unknown."""
        return None if self._proc is None else tree_cpu_s(self._proc.pid)

    def _working(self, sleep) -> bool:
        """Whether the server's processes are using CPU now: at least 5% of a core over two
        looks STARTUP_SAMPLE_S apart (an idle vLLM tree polls at about 2% of a core, a compiling
        one uses its core share);
        an unreadable tree counts as working (the wait stays bounded). A log that says the
        engine died is not working, whatever its processes do."""
        if self._engine_died():
            return False
        a = self._tree_cpu_s()
        sleep(STARTUP_SAMPLE_S)
        b = self._tree_cpu_s()
        return a is None or b is None or b - a >= STARTUP_WORK_S

    def _later_deadline(self, working: bool) -> float | None:
        """At the start's deadline: a later one while the server's processes keep working (a
        slow machine compiling, not a hung start), up to STARTUP_WAIT_FACTOR times the
        timeout; None: time out now."""
        now = time.monotonic()
        cap = self._started_at + self.startup_timeout_s * STARTUP_WAIT_FACTOR
        if not working or now >= cap:
            return None
        self.startup_extensions += 1
        return min(cap, now + min(STARTUP_WINDOW_S, self.startup_timeout_s))

    def _boot(self) -> Generator[str, bool, None]:
        """The wait for a start, as steps its driver (`start`, `astart`) performs and answers:
        "probe" (send whether the server answers), "working" (whether its processes use CPU),
        "sleep" (send anything). Ends when the server answers; raises ServerStartError."""
        deadline: float | None = time.monotonic() + self.startup_timeout_s
        while True:
            self._check_alive()
            if (yield "probe"):
                return
            if deadline is not None and time.monotonic() >= deadline:
                deadline = self._later_deadline((yield "working"))
                if deadline is None:
                    if (yield "probe"):  # it may have begun to answer while we looked
                        return
                    raise self._timed_out()
            yield "sleep"

    def start(self) -> Self:
        """Start the server and block until it answers (or raise ServerStartError)."""
        if self._attached:
            return self
        self._spawn()
        steps = self._boot()
        try:
            step = next(steps)
            while True:
                if step == "probe":
                    step = steps.send(self._probe())
                elif step == "working":
                    step = steps.send(self._working(time.sleep))
                else:
                    time.sleep(_POLL_S)
                    step = steps.send(False)
        except StopIteration:
            return self
        except BaseException:
            self.stop()
            raise

    async def astart(self) -> Self:
        """start() for event loops: the loop keeps running while the server boots."""
        if self._attached:
            return self
        self._spawn()
        steps = self._boot()
        try:
            step = next(steps)
            while True:
                if step == "probe":
                    step = steps.send(await asyncio.to_thread(self._probe))
                elif step == "working":
                    step = steps.send(await asyncio.to_thread(self._working, time.sleep))
                else:
                    await asyncio.sleep(_POLL_S)
                    step = steps.send(False)
        except StopIteration:
            return self
        except BaseException:
            self.stop()
            raise
