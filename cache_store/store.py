"""The immutable, memory-mapped tool-cache store (one file holds every tool).

Layout (little endian; offsets are absolute and 8-byte aligned):

    preamble (80 bytes)  magic "AGSWCST1", format version, header/table/blob offsets and sizes,
                         crc32 of the header JSON, crc32 of the table region
    blob                 records: u32 key_len, u32 value_len, u32 crc32(key+value), u16 tool id,
                         u16 reserved, key bytes, value bytes (UTF-8)
    table                open-addressing hash table: `capacity` slots of (u64 hash, u64 offset),
                         hash 0 = empty; capacity is a power of two >= 2 x entries
    entries              per tool, the record offsets in import order (u64), for the index
    header               JSON (`StoreHeader`)

Opening reads the preamble and the header and checks the header and table checksums (a few
milliseconds for 250,000 entries); it parses no records. A truncated file fails the size check.
Each hit checks its full key and its record crc32; `verify()` hashes the whole blob (sha256).
"""

from __future__ import annotations

import hashlib
import mmap
import os
import struct
import zlib
from collections.abc import Iterator
from hashlib import blake2b as _blake2b
from pathlib import Path
from typing import Self

import msgspec

MAGIC = b"AGSWCST1"
FORMAT_VERSION = 1
_PREAMBLE = struct.Struct("<8sIIQQQQQQII")   # magic, version, flags, header off/len,
_PREAMBLE_SIZE = 80                           # table off/len, blob off/len, header crc, table crc
_RECORD = struct.Struct("<IIIHH")
_RECORD_SIZE = _RECORD.size


class CorruptStoreError(Exception):
    """The store file is truncated, damaged or not a store at all."""


class ToolInfo(msgspec.Struct):
    name: str
    n_entries: int
    entries_offset: int           # absolute offset of this tool's u64 record-offset array


class StoreHeader(msgspec.Struct):
    tools: list[ToolInfo]
    n_entries: int
    capacity: int
    blob_sha256: str
    source_fingerprint: str = ""  # cheap stat-based fingerprint of the import source
    source_sha256: str = ""       # sha256 over the source files' bytes
    synthetic: bool = False       # True for generated benchmark caches
    label: str = ""


def key_hash(tool: str, key: bytes) -> int:
    """64-bit blake2b of tool name, NUL, key bytes; never 0 (0 marks an empty slot)."""
    h = int.from_bytes(_blake2b(tool.encode() + b"\0" + key, digest_size=8).digest(), "little")
    return h or 1


def _align8(n: int) -> int:
    return (n + 7) & ~7


class StoreWriter:
    """Streams records into a new store file; `finish()` writes table and header atomically."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.tmp = self.path.with_name(self.path.name + f".tmp{os.getpid()}")
        self._f = open(self.tmp, "wb")  # noqa: SIM115 - closed by finish()/abort()
        self._f.write(b"\0" * _PREAMBLE_SIZE)
        self._pos = _PREAMBLE_SIZE
        self._sha = hashlib.sha256()
        self._tools: list[str] = []
        self._entries: list[list[int]] = []
        self._hashes: list[int] = []
        self._offsets: list[int] = []

    def begin_tool(self, name: str) -> int:
        if name in self._tools:
            raise ValueError(f"tool {name!r} added twice")
        self._tools.append(name)
        self._entries.append([])
        return len(self._tools) - 1

    def add(self, tool_id: int, key: str, value: str) -> None:
        kb = key.encode("utf-8", "surrogatepass")
        vb = value.encode("utf-8", "surrogatepass")
        crc = zlib.crc32(vb, zlib.crc32(kb))
        rec = _RECORD.pack(len(kb), len(vb), crc, tool_id, 0) + kb + vb
        pad = _align8(len(rec)) - len(rec)
        rec += b"\0" * pad
        self._f.write(rec)
        self._sha.update(rec)
        self._entries[tool_id].append(self._pos)
        self._hashes.append(key_hash(self._tools[tool_id], kb))
        self._offsets.append(self._pos)
        self._pos += len(rec)

    def finish(self, *, source_fingerprint: str = "", source_sha256: str = "",
               synthetic: bool = False, label: str = "") -> Path:
        import numpy as np

        blob_off, blob_len = _PREAMBLE_SIZE, self._pos - _PREAMBLE_SIZE
        n = len(self._offsets)
        capacity = 16
        while capacity < 2 * n:
            capacity *= 2
        table = np.zeros(capacity * 2, dtype="<u8")
        hashes = np.asarray(self._hashes, dtype=np.uint64)
        offsets = np.asarray(self._offsets, dtype=np.uint64)
        mask = capacity - 1
        slots = table.reshape(capacity, 2)
        # Linear probing; later duplicates of a (tool, key) are dropped by the importer already.
        for h, off in zip(hashes.tolist(), offsets.tolist()):
            i = h & mask
            while slots[i, 0]:
                i = (i + 1) & mask
            slots[i, 0] = h
            slots[i, 1] = off
        table_off = self._pos
        region = bytearray(table.tobytes())
        tools: list[ToolInfo] = []
        for name, entries in zip(self._tools, self._entries):
            tools.append(ToolInfo(name, len(entries), table_off + len(region)))
            region += np.asarray(entries, dtype="<u8").tobytes()
        self._f.write(region)
        header = StoreHeader(
            tools=tools, n_entries=n, capacity=capacity, blob_sha256=self._sha.hexdigest(),
            source_fingerprint=source_fingerprint, source_sha256=source_sha256,
            synthetic=synthetic, label=label,
        )
        hbytes = msgspec.json.encode(header)
        header_off = table_off + len(region)
        self._f.write(hbytes)
        self._f.seek(0)
        self._f.write(_PREAMBLE.pack(
            MAGIC, FORMAT_VERSION, 0, header_off, len(hbytes), table_off, len(region),
            blob_off, blob_len, zlib.crc32(hbytes), zlib.crc32(region),
        ).ljust(_PREAMBLE_SIZE, b"\0"))
        self._f.flush()
        os.fsync(self._f.fileno())
        self._f.close()
        os.replace(self.tmp, self.path)
        return self.path

    def abort(self) -> None:
        self._f.close()
        self.tmp.unlink(missing_ok=True)


def read_header(path: str | Path) -> StoreHeader:
    """The header of a store file (checksummed), without mapping the table."""
    with open(path, "rb") as f:
        pre = f.read(_PREAMBLE_SIZE)
        fields = _check_preamble(str(path), pre, os.fstat(f.fileno()).st_size)
        f.seek(fields[3])
        hbytes = f.read(fields[4])
    return _decode_header(str(path), hbytes, fields[9])


def _check_preamble(path: str, pre: bytes, size: int) -> tuple:
    if len(pre) < _PREAMBLE_SIZE or pre[:8] != MAGIC:
        raise CorruptStoreError(f"{path}: not an agentsweep cache store (bad magic)")
    fields = _PREAMBLE.unpack_from(pre)
    if fields[1] != FORMAT_VERSION:
        raise CorruptStoreError(f"{path}: store format version {fields[1]}, expected {FORMAT_VERSION}")
    end = fields[3] + fields[4]
    if size != end:
        raise CorruptStoreError(f"{path}: file is {size} bytes, header says {end}: truncated or damaged")
    return fields


def _decode_header(path: str, hbytes: bytes, crc: int) -> StoreHeader:
    if zlib.crc32(hbytes) != crc:
        raise CorruptStoreError(f"{path}: header checksum mismatch")
    try:
        return msgspec.json.decode(hbytes, type=StoreHeader)
    except msgspec.DecodeError as exc:
        raise CorruptStoreError(f"{path}: unreadable header: {exc}") from None


class CacheStore:
    """A read-only, memory-mapped view of a store file; safe to share by many processes."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        with open(self.path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < _PREAMBLE_SIZE:
                raise CorruptStoreError(f"{self.path}: file is {size} bytes: truncated or not a store")
            self._mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        mm = self._mm
        fields = _check_preamble(self.path, mm[:_PREAMBLE_SIZE], size)
        _, _, _, h_off, h_len, t_off, t_len, self._blob_off, self._blob_len, h_crc, t_crc = fields
        self.header = _decode_header(self.path, mm[h_off:h_off + h_len], h_crc)
        self._mv = memoryview(mm)
        self._region = region = self._mv[t_off:t_off + t_len]
        if zlib.crc32(region) != t_crc:
            raise CorruptStoreError(f"{self.path}: hash-table checksum mismatch")
        cap = self.header.capacity
        self._table = region[: cap * 16].cast("Q")
        self._mask = cap - 1
        self._tools = {t.name: t for t in self.header.tools}

    @property
    def tools(self) -> list[str]:
        return list(self._tools)

    def n_entries(self, tool: str) -> int:
        info = self._tools.get(tool)
        return info.n_entries if info else 0

    def get(self, tool: str, key: str) -> str | None:
        """The cached response for (tool, normalised key), or None. O(1), full key verified."""
        kb = key.encode("utf-8", "surrogatepass")
        h = key_hash(tool, kb)
        table, mask, mm = self._table, self._mask, self._mm
        i = h & mask
        while True:
            slot_hash = table[2 * i]
            if slot_hash == 0:
                return None
            if slot_hash == h:
                off = table[2 * i + 1]
                klen, vlen, crc, _, _ = _RECORD.unpack_from(mm, off)
                start = off + _RECORD_SIZE
                if klen == len(kb) and mm[start:start + klen] == kb:
                    rec = self._mv[start:start + klen + vlen]
                    if zlib.crc32(rec) != crc:
                        raise CorruptStoreError(f"{self.path}: record at offset {off} fails its checksum")
                    return str(rec[klen:], "utf-8", "surrogatepass")
            i = (i + 1) & mask

    def __contains__(self, tool_key: tuple[str, str]) -> bool:
        return self.get(*tool_key) is not None

    def _record(self, off: int) -> tuple[str, str]:
        klen, vlen, _, _, _ = _RECORD.unpack_from(self._mm, off)
        s = off + _RECORD_SIZE
        mv = self._mv
        return (str(mv[s:s + klen], "utf-8", "surrogatepass"),
                str(mv[s + klen:s + klen + vlen], "utf-8", "surrogatepass"))

    def entry(self, tool: str, i: int) -> tuple[str, str]:
        """The i-th (key, value) of a tool in import order (the embedding index's row i)."""
        info = self._tools[tool]
        if not 0 <= i < info.n_entries:
            raise IndexError(f"{tool}: entry {i} out of range 0..{info.n_entries - 1}")
        (off,) = struct.unpack_from("<Q", self._mm, info.entries_offset + 8 * i)
        return self._record(off)

    def iter_entries(self, tool: str) -> Iterator[tuple[str, str]]:
        for i in range(self.n_entries(tool)):
            yield self.entry(tool, i)

    def verify(self) -> None:
        """Full check: blob sha256 and every record's crc32. Raises CorruptStoreError."""
        blob = self._mv[self._blob_off:self._blob_off + self._blob_len]
        if hashlib.sha256(blob).hexdigest() != self.header.blob_sha256:
            raise CorruptStoreError(f"{self.path}: blob checksum mismatch")
        pos, end = self._blob_off, self._blob_off + self._blob_len
        while pos < end:
            klen, vlen, crc, _, _ = _RECORD.unpack_from(self._mm, pos)
            s = pos + _RECORD_SIZE
            if zlib.crc32(self._mv[s:s + klen + vlen]) != crc:
                raise CorruptStoreError(f"{self.path}: record at offset {pos} fails its checksum")
            pos += _align8(_RECORD_SIZE + klen + vlen)

    def close(self) -> None:
        for view in (self._table, self._region, self._mv):
            view.release()
        try:
            self._mm.close()
        except BufferError:  # a caller still holds a view; the map closes when it is dropped
            pass

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
