"""Which recorded episodes still owe judgements, read from the run directory's files.

A run judged while it ran (`agentsweep run --judge`) can stop before its judge pool is done: a
signal, a kill, a judge endpoint that went away, or a run started without `--judge`. What is
still owed is never what one session remembers: it is every recorded episode (the last record
of each unit in episodes.jsonl) whose judgements, as its benchmark's judges key them (trajectory
hash, judge model, prompt version, kind), are not in judgements.jsonl. A resumed run hands those
episodes to its judge pool, and its summary counts what is still owed afterwards, both from here.

The rules are the pool's (`evaluator.judges.pool`): every kind `Benchmark.judge_kinds` names;
rule checks under the judge model "rule"; an audit kind only once the judgement it audits has a
score; with `retry_errors`, a judgement with an error is owed again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench_data.types import Task
from evaluator.benchmarks.base import BenchmarkOptions
from evaluator.records import EpisodeRecord, Judgement
from evaluator.run.results import iter_records

from .pool import RULE_JUDGE_MODEL, JudgementKey, judgement_key, read_judgements
from .settings import JudgeSettings
from .transcript import trajectory_hash


@dataclass(frozen=True)
class Owed:
    """What a run still owes its judges: `episodes` lacking at least one judgement, and the
    `judgements` known to be missing (an audit whose audited judgement is missing is not
    counted yet: whether it is needed depends on that judgement's score)."""

    episodes: int = 0
    judgements: int = 0


def judged(run_dir: str | Path, settings: JudgeSettings) -> dict[JudgementKey, Judgement]:
    """The latest judgement of each key in RUN_DIR/judgements.jsonl (with `retry_errors`, keys
    whose latest judgement is an error are left out: they are owed again)."""
    latest = {judgement_key(j): j for j in read_judgements(run_dir)}
    if settings.retry_errors:
        return {k: j for k, j in latest.items() if j.error is None}
    return latest


def missing(record: EpisodeRecord, task: Task | None, settings: JudgeSettings, model: str,
            prompts: Any, have: Mapping[JudgementKey, Judgement],
            options: BenchmarkOptions | None = None) -> list[JudgementKey]:
    """The judgement keys `record` needs that `have` lacks ([]: fully judged, or no judge
    applies: a benchmark not registered, or one that declines the record). `options`: the
    run's `[options]` (judgement versions may name them, `JudgeSpec.key_version`)."""
    from evaluator import benchmarks
    from evaluator.benchmarks.base import Unjudgeable

    bench = benchmarks.find(record.benchmark)
    if bench is None:
        return []
    try:
        kinds = bench.judge_kinds(record, task, settings)
    except Unjudgeable:
        return []
    thash = trajectory_hash(record)
    opts = (options or BenchmarkOptions(None)).of(bench)
    found: dict[str, Judgement] = {}
    out: list[JudgementKey] = []
    for kind in kinds:
        spec = bench.judges[kind]
        key = (thash, RULE_JUDGE_MODEL if spec.rule else model,
               spec.key_version(settings, prompts, opts), kind)
        if spec.audits:
            audited = found.get(spec.audits)
            if audited is None or audited.score is None:
                continue  # nothing to audit (yet)
        j = have.get(key)
        if j is None:
            out.append(key)
        else:
            found[kind] = j
    return out


class OwingScan:
    """The last record of each unit that lacks judgements, fed one record at a time in file
    order (`add`); holds only the owing records."""

    def __init__(self, run_dir: str | Path, settings: JudgeSettings, model: str, prompts: Any,
                 tasks: Mapping[str, Task], options: BenchmarkOptions | None = None) -> None:
        self.have = judged(run_dir, settings)
        self.settings, self.model, self.prompts, self.tasks = settings, model, prompts, tasks
        self.options = options or BenchmarkOptions(None)
        self.owing: dict[str, tuple[EpisodeRecord, int]] = {}

    def add(self, rec: EpisodeRecord) -> None:
        n = len(missing(rec, self.tasks.get(rec.unit.task), self.settings, self.model,
                        self.prompts, self.have, self.options))
        if n:
            self.owing[rec.unit.key] = (rec, n)  # a later record of the unit replaces one
        else:
            self.owing.pop(rec.unit.key, None)

    def result(self) -> list[tuple[EpisodeRecord, int]]:
        """(record, judgements it lacks), in the order the units were first recorded."""
        return list(self.owing.values())


def latest_owing(run_dir: str | Path, settings: JudgeSettings, model: str, prompts: Any,
                 tasks: Mapping[str, Task], options: BenchmarkOptions | None = None
                 ) -> list[tuple[EpisodeRecord, int]]:
    """(record, judgements it lacks) of each unit's last record that lacks judgements, in the
    order the units were first recorded."""
    scan = OwingScan(run_dir, settings, model, prompts, tasks, options)
    for rec in iter_records(run_dir):
        scan.add(rec)
    return scan.result()


def count_owed(run_dir: str | Path, settings: JudgeSettings, model: str, prompts: Any,
               tasks: Mapping[str, Task], options: BenchmarkOptions | None = None) -> Owed:
    """What RUN_DIR still owes its judges, from its files."""
    episodes = judgements = 0
    for _, n in latest_owing(run_dir, settings, model, prompts, tasks, options):
        episodes += 1
        judgements += n
    return Owed(episodes=episodes, judgements=judgements)


def pool_owed(pool: Any) -> Owed:
    """What a judge pool's run still owes, from its files, keyed as the pool judges (its
    settings, judge model, prompt set, tasks and options)."""
    return count_owed(pool.run_dir, pool.settings, pool.model, pool.prompts, pool.tasks,
                      pool.options)
