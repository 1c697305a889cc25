"""Append-only miss log; content addresses of the answer stores (`cache_store/answers.py`).

Miss log: JSON lines, each written by one `os.write` on an O_APPEND descriptor under an
exclusive `flock`, so a crash loses at most the record being written; a torn last line is
skipped on export. The imported store is never written.

Answer stores (simulated answers, live overlay) are one append-only log per store, the first
writer winning in every process: `AnswerStore` in `cache_store/answers.py`, re-exported here.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections import defaultdict
from pathlib import Path

import msgspec

from .answers import AnswerStore

__all__ = ["AnswerStore", "MissLog", "MissRecord", "content_address", "export_misses",
           "read_misses"]


class MissRecord(msgspec.Struct):
    tool: str
    params: str                 # the reference's intermediate key (JSON of {"params", "time"})
    simulated_result: str
    timestamp: float
    source: str = "simulated"   # simulated | live | miss | error


class MissLog:
    """The single writer of one miss-log file (one per Sandbox)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._enc = msgspec.json.Encoder()

    def append(self, record: MissRecord) -> None:
        line = self._enc.encode(record) + b"\n"
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            os.write(self._fd, line)
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def flush(self) -> None:
        if self._fd >= 0:
            os.fsync(self._fd)

    def close(self) -> None:
        if self._fd >= 0:
            os.fsync(self._fd)
            os.close(self._fd)
            self._fd = -1


def read_misses(path: str | Path, skipped: list[int] | None = None) -> list[MissRecord]:
    """All complete records; a torn or garbled line (crash mid-write) is skipped, and its
    1-based number appended to `skipped` when given."""
    dec = msgspec.json.Decoder(MissRecord)
    out: list[MissRecord] = []
    with open(path, "rb") as f:
        for n, line in enumerate(f, start=1):
            if not line.endswith(b"\n"):
                break
            if not line.strip():
                continue
            try:
                line.decode("utf-8")
                out.append(dec.decode(line))
            except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
                if skipped is not None:
                    skipped.append(n)
    return out


def export_misses(log_path: str | Path, out_dir: str | Path, *, dedupe: bool = False,
                  skipped: list[int] | None = None) -> dict[str, int]:
    """Write `<tool>_missed.json` files in the reference's shape; returns counts per tool.
    Undecodable lines are skipped (their numbers go to `skipped`); a log with such lines and
    no record at all is a ValueError (not a miss log)."""
    by_tool: dict[str, list[dict]] = defaultdict(list)
    seen: set[tuple[str, str]] = set()
    bad: list[int] = [] if skipped is None else skipped
    records = read_misses(log_path, bad)
    if bad and not records:
        raise ValueError(f"{log_path}: no miss record, {len(bad)} undecodable line(s) (first: "
                         f"line {bad[0]}); not a miss log?")
    for r in records:
        if dedupe:
            if (r.tool, r.params) in seen:
                continue
            seen.add((r.tool, r.params))
        by_tool[r.tool].append({"params": r.params, "simulated_result": r.simulated_result,
                                "timestamp": r.timestamp})
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for tool, rows in by_tool.items():
        tmp = out / f".{tool}_missed.json.tmp{os.getpid()}"
        tmp.write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")
        os.replace(tmp, out / f"{tool}_missed.json")
    return {t: len(r) for t, r in by_tool.items()}


def content_address(*parts: str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()
