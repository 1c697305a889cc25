"""The result store of a run directory: one writer task, append-only JSON lines, resume.

`ResultWriter` owns an append-only JSON-lines file: producers `put()` records (never block, no
I/O), the writer task takes everything queued, appends it in one write, flushes and fsyncs
(off the event loop thread), then takes the next batch. `close()` drains and stops it.

`scan_lines` reads such a file safely: a torn last line (a `kill -9` mid-write) is dropped and,
with `repair=True`, truncated so appends start on a clean line. A bad line elsewhere is an error
naming the file and line.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from evaluator.records import EpisodeRecord, UnitId

EPISODES_FILE = "episodes.jsonl"
FAILURES_FILE = "failures.jsonl"


class FailureRecord(msgspec.Struct, omit_defaults=True):
    """A unit that did not finish: infrastructure retries exhausted, or an unexpected error.

    Not an agent failure and never scored; `--resume` runs the unit again.
    kind: "infrastructure" | "error".
    """

    unit: UnitId
    kind: str
    error: str
    attempts: int
    at: float = 0.0


# what decoding one JSON line can raise: msgspec's errors, invalid UTF-8 inside a string (a
# UnicodeDecodeError from msgspec), nesting deeper than the decoder recurses
UNDECODABLE = (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError, RecursionError)


def decode_line(decoder: msgspec.json.Decoder, line: bytes) -> Any:
    """One JSON line, which must be UTF-8 as a whole: msgspec skips the names of fields it
    does not know without checking them, so a line with a corrupt byte in a field name would
    otherwise decode, silently missing that field (the issue-15 corpus found it)."""
    line.decode("utf-8")  # UnicodeDecodeError names the position
    return decoder.decode(line)


class ResultsCorrupt(ValueError):
    """A line other than the last one of a results file cannot be decoded."""


def corrupt_line(path: Path, n: int, what: str, exc: BaseException) -> ResultsCorrupt:
    """The error for line `n` of a results file: the file, the line, what is wrong, and the
    command that moves such lines aside (one line)."""
    return ResultsCorrupt(f"{path}:{n}: cannot decode {what}: {exc}; "
                          f"`agentsweep repair {path.parent}` moves undecodable lines aside")


class _UnitOnly(msgspec.Struct):
    unit: UnitId


_encoder = msgspec.json.Encoder()
_unit_decoder = msgspec.json.Decoder(_UnitOnly)
_record_decoder = msgspec.json.Decoder(EpisodeRecord)


def scan_lines(path: str | Path, *, repair: bool = False) -> Iterator[tuple[int, bytes]]:
    """(1-based line number, bytes) of each complete line. A torn last line (no newline) is
    skipped and, with `repair`, cut off the file."""
    p = Path(path)
    if not p.exists():
        return
    data = p.read_bytes()
    end = data.rfind(b"\n") + 1
    if end < len(data) and repair:
        with open(p, "r+b") as fh:
            fh.truncate(end)
            fh.flush()
            os.fsync(fh.fileno())
    start = 0
    n = 0
    while start < end:
        nl = data.index(b"\n", start)
        n += 1
        line = data[start:nl]
        start = nl + 1
        if line.strip():
            yield n, line


def _decode(decoder: msgspec.json.Decoder, path: Path, n: int, line: bytes) -> Any:
    try:
        return decode_line(decoder, line)
    except UNDECODABLE as exc:
        raise corrupt_line(path, n, "record", exc) from None


def finished_keys(run_dir: str | Path, *, repair: bool = False) -> set[str]:
    """Unit keys with a record in RUN_DIR/episodes.jsonl (the torn last line ignored)."""
    path = Path(run_dir) / EPISODES_FILE
    return {_decode(_unit_decoder, path, n, line).unit.key for n, line in scan_lines(path, repair=repair)}


def iter_records(run_dir: str | Path) -> Iterator[EpisodeRecord]:
    """Every complete EpisodeRecord of RUN_DIR/episodes.jsonl, in file order."""
    path = Path(run_dir) / EPISODES_FILE
    for n, line in scan_lines(path):
        yield _decode(_record_decoder, path, n, line)


def iter_failures(run_dir: str | Path) -> Iterator[FailureRecord]:
    path = Path(run_dir) / FAILURES_FILE
    dec = msgspec.json.Decoder(FailureRecord)
    for n, line in scan_lines(path):
        yield _decode(dec, path, n, line)


class ResultWriter:
    """The single writer of one JSON-lines file. Start with `start()`, finish with `close()`."""

    def __init__(self, path: str | Path, *, fsync: bool = True, repair: bool = True,
                 fsync_every_s: float = 0.0) -> None:
        self.path = Path(path)
        self.fsync = fsync
        self.fsync_every_s = fsync_every_s  # > 0: fsync at most this often (and at close)
        self._synced_at = 0.0
        self._unsynced = False
        self.written = 0
        self.batches = 0
        self._pending: list[bytes] = []
        self._wake = asyncio.Event()
        self._closing = False
        self._task: asyncio.Task[None] | None = None
        self._fh: Any = None
        self._repair = repair
        self._error: BaseException | None = None

    def start(self) -> ResultWriter:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self._repair:
            for _ in scan_lines(self.path, repair=True):
                pass
        self._fh = open(self.path, "ab", buffering=0)  # noqa: SIM115 - owned by the writer task
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"writer:{self.path.name}")
        return self

    def put(self, record: msgspec.Struct) -> None:
        """Queue one record (no I/O here). Raises if the writer has failed."""
        if self._error is not None:
            raise RuntimeError(f"result writer for {self.path} failed: {self._error}")
        self._pending.append(_encoder.encode(record) + b"\n")
        self._wake.set()

    def put_line(self, line: bytes) -> None:
        """Queue one encoded line, ending in a newline (no I/O here)."""
        if self._error is not None:
            raise RuntimeError(f"result writer for {self.path} failed: {self._error}")
        self._pending.append(line)
        self._wake.set()

    async def _run(self) -> None:
        try:
            while True:
                if not self._pending:
                    if self._closing:
                        return
                    if self._unsynced:  # fsync_every_s: the last batch is fsynced when idle
                        try:
                            await asyncio.wait_for(self._wake.wait(), self.fsync_every_s)
                        except TimeoutError:
                            await asyncio.to_thread(self._sync)
                            continue
                    else:
                        await self._wake.wait()
                    self._wake.clear()
                    continue
                batch, self._pending = self._pending, []
                await asyncio.to_thread(self._append, b"".join(batch))
                self.written += len(batch)
                self.batches += 1
        except BaseException as exc:
            self._error = exc
            raise

    def _append(self, data: bytes) -> None:
        fh = self._fh
        view = memoryview(data)
        while view:
            n = fh.write(view)
            view = view[n:]
        if self.fsync:
            if self.fsync_every_s > 0:
                now = time.monotonic()
                if now - self._synced_at < self.fsync_every_s:
                    self._unsynced = True
                    return
                self._synced_at = now
            os.fsync(fh.fileno())
            self._unsynced = False

    def _sync(self) -> None:
        if self._fh is not None and self._unsynced:
            self._unsynced = False
            os.fsync(self._fh.fileno())
            self._synced_at = time.monotonic()

    async def flush(self) -> None:
        """Wait until everything queued so far is on disk."""
        target = self.written + len(self._pending)
        while self.written < target and self._error is None:
            if self._task is None or self._task.done():
                break
            await asyncio.sleep(0.005)

    async def close(self) -> None:
        """Write what is queued, then stop. Safe to call twice."""
        self._closing = True
        self._wake.set()
        if self._task is not None:
            try:
                await asyncio.shield(self._task)
            finally:
                self._task = None
        if self._fh is not None:
            if self._unsynced:
                os.fsync(self._fh.fileno())
            self._fh.close()
            self._fh = None
