"""The shared parts of the bad-input corpus (corpus.py builds it): a `Case` is one bad input to
the `agentsweep` CLI: the files it needs (written under a fresh directory), the command line,
and what must come out: the exit code and the words of the single stderr line (the file, line,
field or flag it names). `{d}` in argv, expected words and file contents is the case's
directory; `FIFO` as a file's content makes a named pipe there.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "bench_data" / "samples" / "travel_sample"

FIFO = object()  # a file content that means: make a named pipe here
# the seeded random mutations per kind are multiplied by this (a deeper soak, not for CI):
# AGENTSWEEP_CORPUS_SCALE=20 pytest tests/evaluator/reliability
SCALE = max(1, int(os.environ.get("AGENTSWEEP_CORPUS_SCALE", "1")))
USAGE, FAILED = 2, 1


@dataclass(frozen=True)
class Case:
    kind: str
    name: str
    argv: tuple[str, ...]
    code: int
    says: tuple[str, ...]  # substrings of the one stderr line (or of stdout, see `where`)
    files: dict[str, object] = field(default_factory=dict)  # rel path -> str | bytes | FIFO
    copies: tuple[tuple[str, str], ...] = ()  # (source under REPO, rel destination)
    where: str = "err"  # "err": the stderr line names it; "out": `data check`'s issue lines
    accepted: str = ""  # a deliberate acceptance: the documented reason
    # a bound on a hang, not on speed: a command here takes well under a second, but a CI host
    # has stalled one for 42 s (the machine shared with the engine session and other jobs)
    timeout_s: float = 180.0

    @property
    def id(self) -> str:
        return f"{self.kind}:{self.name}"
