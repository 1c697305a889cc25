"""A seeded corpus of bad inputs to the `agentsweep` CLI, one `Case` each: the files it needs
(written under a fresh directory), the command line, and what must come out: the exit code and
the words of the single stderr line (the file, line, field or flag it names). `Case`, `REPO`,
`FIFO` and the other shared parts live in corpus_base.py and are re-exported here.

Kinds: `config` (TOML run configs: wrong types of every field, values outside every bound,
NaN/inf, paths, URLs, names, nesting, size; in corpus_config.py), `flag` (command-line flags;
corpus_flags.py), and in corpus_files.py `task` (task files), `schema` (tool-schema files),
`cache` (release-layout cache directories for `cache import`) and `rundir` (run directories for
`report`, `judge` and `run --resume`). Every case fails before a model engine would start (the
harness turns an engine start into a failure). Where an input is deliberately accepted, the
case says so in `accepted` (the reason; the docs say it too) and runs
`agentsweep run --check`, which validates everything a run would and starts nothing.

`{d}` in argv, expected words and file contents is the case's directory. `build(seed)` is
deterministic: the same seed gives the same corpus.
"""

from __future__ import annotations

import random

from tests.evaluator.reliability.corpus_base import (
    FAILED,
    FIFO,
    REPO,
    SAMPLE,
    SCALE,
    USAGE,
    Case,
)
from tests.evaluator.reliability.corpus_config import config_cases
from tests.evaluator.reliability.corpus_files import (
    cache_cases,
    rundir_cases,
    schema_cases,
    task_cases,
)
from tests.evaluator.reliability.corpus_flags import flag_cases

__all__ = ["FAILED", "FIFO", "KINDS", "REPO", "SAMPLE", "SCALE", "USAGE", "Case", "build",
           "cache_cases", "config_cases", "flag_cases", "rundir_cases", "schema_cases",
           "task_cases"]


KINDS = {"config": config_cases, "flag": flag_cases, "task": task_cases,
         "schema": schema_cases, "cache": cache_cases, "rundir": rundir_cases}


def build(seed: int = 15) -> list[Case]:
    """The whole corpus, deterministic for a seed."""
    cases = [case for kind, make in KINDS.items()  # one stream per kind: stable when one grows
             for case in make(random.Random(f"{seed}-{kind}"))]
    seen: set[str] = set()
    unique = []
    for case in cases:
        if case.id not in seen:
            seen.add(case.id)
            unique.append(case)
    return unique
