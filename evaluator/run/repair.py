"""`agentsweep repair RUN_DIR`: move undecodable lines of a run's JSON-lines files aside.

A line of episodes.jsonl, judgements.jsonl or failures.jsonl that does not decode as its record
type (a disk error, a hand edit, a torn last line from `kill -9`) stops `run --resume`, `judge`
and `report` with the file and line. `repair_run` moves every such line to
RUN_DIR/quarantine.jsonl, one JSON object per line with the file, the line number, the decode
error and the line itself (as text, and base64 of the exact bytes), and rewrites the file with
the good lines only.

Crash safety: the quarantine is appended and fsynced first; the cleaned file is written to a
temporary file, fsynced and renamed over the original (then the directory is fsynced). A crash
leaves either the original file or the cleaned one, never a mix; repeating the command is
safe. Do not run it while `run` or `judge` is writing to the directory.
"""

from __future__ import annotations

import base64
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from evaluator.records import EpisodeRecord, Judgement
from evaluator.run.results import (
    EPISODES_FILE,
    FAILURES_FILE,
    UNDECODABLE,
    FailureRecord,
    decode_line,
)

JUDGEMENTS_FILE = "judgements.jsonl"  # = evaluator.judges.pool.JUDGEMENTS_FILE
QUARANTINE_FILE = "quarantine.jsonl"
FILES: dict[str, type] = {EPISODES_FILE: EpisodeRecord, JUDGEMENTS_FILE: Judgement,
                          FAILURES_FILE: FailureRecord}


class Quarantined(msgspec.Struct):
    """One line moved out of a results file."""

    file: str
    line: int
    error: str
    text: str
    raw_b64: str
    at: float = 0.0


@dataclass
class FileRepair:
    name: str
    kept: int = 0
    moved: list[int] = field(default_factory=list)  # 1-based line numbers


@dataclass
class RepairResult:
    run_dir: Path
    files: list[FileRepair] = field(default_factory=list)

    @property
    def moved(self) -> int:
        return sum(len(f.moved) for f in self.files)

    def lines(self) -> list[str]:
        """What was done, one line per file (and a last line)."""
        out = []
        for f in self.files:
            if f.moved:
                shown = ", ".join(map(str, f.moved[:10])) + (" ..." if len(f.moved) > 10 else "")
                out.append(f"{f.name}: moved {len(f.moved)} undecodable line(s) ({shown}) to "
                           f"{QUARANTINE_FILE}; {f.kept} kept")
            else:
                out.append(f"{f.name}: {f.kept} lines, all readable")
        if self.moved:
            out.append(f"quarantined lines: {self.run_dir / QUARANTINE_FILE}")
        return out


def _bad_lines(data: bytes, decoder: msgspec.json.Decoder) -> tuple[list[bytes], list[
        tuple[int, bytes, str]]]:
    """(good lines with their newline, [(line number, line, error)])."""
    good: list[bytes] = []
    bad: list[tuple[int, bytes, str]] = []
    lines = data.split(b"\n")
    torn = lines.pop()  # after the last newline: b"" unless the last line is torn
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            decode_line(decoder, line)
        except UNDECODABLE as exc:
            bad.append((n, line, str(exc)))
            continue
        good.append(line + b"\n")
    if torn.strip():
        bad.append((len(lines) + 1, torn, "torn last line (no newline): a write cut short"))
    return good, bad


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def repair_file(run_dir: Path, name: str, record_type: type) -> FileRepair | None:
    """Quarantine the undecodable lines of RUN_DIR/name; None when the file is absent."""
    path = run_dir / name
    if not path.is_file():
        return None
    data = path.read_bytes()
    good, bad = _bad_lines(data, msgspec.json.Decoder(record_type))
    result = FileRepair(name, kept=len(good), moved=[n for n, _, _ in bad])
    if not bad:
        return result
    enc = msgspec.json.Encoder()
    now = time.time()
    rows = b"".join(
        enc.encode(Quarantined(file=name, line=n, error=err,
                               text=line.decode("utf-8", "replace"),
                               raw_b64=base64.b64encode(line).decode("ascii"), at=now)) + b"\n"
        for n, line, err in bad)
    qfd = os.open(run_dir / QUARANTINE_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(qfd, rows)
        os.fsync(qfd)
    finally:
        os.close(qfd)
    tmp = path.with_name(f".{name}.repair.{os.getpid()}")
    with open(tmp, "wb") as fh:
        fh.write(b"".join(good))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    _fsync_dir(run_dir)
    return result


def repair_run(run_dir: str | Path) -> RepairResult:
    """Repair every results file of a run directory (see the module docstring)."""
    run_dir = Path(run_dir)
    result = RepairResult(run_dir)
    for name, record_type in FILES.items():
        fixed = repair_file(run_dir, name, record_type)
        if fixed is not None:
            result.files.append(fixed)
    return result


def read_quarantine(run_dir: str | Path) -> list[Quarantined]:
    path = Path(run_dir) / QUARANTINE_FILE
    if not path.exists():
        return []
    dec = msgspec.json.Decoder(Quarantined)
    return [dec.decode(line) for line in path.read_bytes().splitlines() if line.strip()]
