"""Content-addressed answer stores (simulated answers, live overlay): one append-only log.

A store is a directory holding `answers.log`, a sequence of framed records

    A <sha256 address> <payload bytes> <crc32 of payload, 8 hex>\\n<payload>\\n

appended by one `os.write` on an O_APPEND descriptor under an exclusive `flock`, then fsynced.
Each process indexes the log in memory (address -> offset, length), reading only what was
appended since it last looked, and reads answers with `pread`: one descriptor per store, however
many answers it holds (the earlier layout was one file per answer).

First writer wins in every process: under the lock a writer first reads the log's new tail, and
if the address is there it returns that answer instead of appending. Crash safety: a record
torn by a crash (short, or its checksum wrong) is never returned; the next writer cuts a torn
tail off before appending, and a damaged record inside the log is skipped (reading resumes at
the next record header). Stores written in the old layout (`<dir>/<hh>/<sha256>`, one file per
answer) are still read, and their answers still win over new ones.
"""

from __future__ import annotations

import fcntl
import os
import re
import zlib
from pathlib import Path

LOG_NAME = "answers.log"
_HEADER = re.compile(rb"A ([0-9a-f]{64}) ([0-9]{1,10}) ([0-9a-f]{8})\n")
_MAX_HEADER = 2 + 64 + 1 + 10 + 1 + 8 + 1


def _encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogatepass")


def frame(address: str, text: str) -> bytes:
    """The bytes of one record."""
    payload = _encode(text)
    crc = zlib.crc32(payload) & 0xFFFFFFFF
    return b"A %s %d %08x\n%s\n" % (address.encode("ascii"), len(payload), crc, payload)


class AnswerStore:
    """Write-once answers addressed by a sha256, in one append-only log; first writer wins
    across processes."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.path = self.root / LOG_NAME
        self._fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        self._index: dict[str, tuple[int, int]] = {}  # address -> (payload offset, length)
        self._scanned = 0  # bytes of the log indexed so far (up to the last good record)
        self.skipped = 0   # damaged records passed over
        self._legacy = any(len(p.name) == 2 and p.is_dir() for p in self.root.iterdir())

    # -- reading ----------------------------------------------------------------------------
    def _refresh(self) -> int:
        """Index the records appended since the last look; returns the log's size."""
        size = os.fstat(self._fd).st_size
        if size > self._scanned:
            data = os.pread(self._fd, size - self._scanned, self._scanned)
            self._scanned += self._parse(data, self._scanned)
        return size

    def _parse(self, data: bytes, base: int) -> int:
        """Index the complete records of `data` (log bytes from `base`); returns how many
        bytes were consumed (the rest is a torn tail, or a record still being written)."""
        pos = good = 0
        n = len(data)
        while pos < n:
            m = _HEADER.match(data, pos, min(n, pos + _MAX_HEADER))
            if m is None:
                nxt = data.find(b"\nA ", pos)  # damaged: resume at the next header
                if nxt < 0:
                    break
                pos = nxt + 1
                self.skipped += 1
                continue
            start, length = m.end(), int(m.group(2))
            end = start + length
            if end + 1 > n:
                break  # not all here yet
            payload = data[start:end]
            if data[end:end + 1] != b"\n" or (zlib.crc32(payload) & 0xFFFFFFFF) != int(
                    m.group(3), 16):
                nxt = data.find(b"\nA ", pos + 1)
                if nxt < 0:
                    break
                pos = nxt + 1
                self.skipped += 1
                continue
            self._index.setdefault(m.group(1).decode("ascii"), (base + start, length))
            pos = good = end + 1
        return good if pos < n else pos

    def _read(self, where: tuple[int, int]) -> str:
        offset, length = where
        return _decode(os.pread(self._fd, length, offset))

    def _legacy_get(self, address: str) -> str | None:
        if not self._legacy:
            return None
        try:
            return _decode((self.root / address[:2] / address).read_bytes())
        except FileNotFoundError:
            return None

    def get(self, address: str) -> str | None:
        where = self._index.get(address)
        if where is None:
            legacy = self._legacy_get(address)
            if legacy is not None:
                return legacy
            self._refresh()
            where = self._index.get(address)
            if where is None:
                return None
        return self._read(where)

    def __len__(self) -> int:
        self._refresh()
        return len(self._index)

    # -- writing ----------------------------------------------------------------------------
    def put(self, address: str, text: str) -> str:
        """Persist `text` unless an answer exists; returns the answer that is now stored."""
        legacy = self._legacy_get(address)
        if legacy is not None:
            return legacy
        record = frame(address, text)
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            size = self._refresh()
            where = self._index.get(address)
            if where is not None:
                return self._read(where)
            if size > self._scanned:  # a torn tail (a writer died mid-record): cut it off
                os.ftruncate(self._fd, self._scanned)
            offset = self._scanned
            view = memoryview(record)
            while view:
                view = view[os.write(self._fd, view):]
            os.fsync(self._fd)
            header = len(record) - len(_encode(text)) - 1
            self._index[address] = (offset + header, len(record) - header - 1)
            self._scanned = offset + len(record)
            return text
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:  # a store dropped without close() keeps no descriptor
        try:
            self.close()
        except (OSError, AttributeError):
            pass
