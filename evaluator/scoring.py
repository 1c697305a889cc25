"""Scores from episodes + judgements, for any benchmark: the generic half of scoring.

`score_run(run_dir, settings, prompts)` reads the run's latest record per unit and every
judgement, and asks each record's benchmark (`Benchmark.score`, looked up in the registry) for
its `UnitScore`; records of benchmarks that are not registered, or that no judge applies to,
are left out. How a benchmark turns judgements into a unit score and a subset score is its own
(TravelBench: its package's `scoring.py`); this module holds what they share:
the judgement lookup, the unit score's common fields, per-trial scores and mean ± std.
Scores are in [0, 1]; reports multiply by 100.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from evaluator.judges.pool import RULE_JUDGE_MODEL, latest_records, read_judgements
from evaluator.judges.settings import JudgeSettings
from evaluator.records import EpisodeRecord, Judgement, UnitScore

Aggregate = Callable[[list[UnitScore]], "float | None"]


class JudgementIndex:
    """Latest judgement per (trajectory hash, kind, prompt version), optionally one model
    (rule checks are always kept)."""

    def __init__(self, judgements: list[Judgement], model: str) -> None:
        self._by: dict[tuple[str, str, str], Judgement] = {}
        self._any: dict[tuple[str, str], Judgement] = {}
        for j in judgements:  # file order: later wins
            if model and j.judge_model not in (model, RULE_JUDGE_MODEL):
                continue
            self._by[(j.trajectory_hash, j.kind, j.prompt_version)] = j
            self._any[(j.trajectory_hash, j.kind)] = j

    def get(self, thash: str, kind: str, version: str) -> Judgement | None:
        return self._by.get((thash, kind, version))

    def current_or_latest(self, thash: str, kind: str, version: str) -> Judgement | None:
        """The judgement of the current prompt version, else the last one written with any
        version (runs judged before a prompt version bump still score)."""
        return self._by.get((thash, kind, version)) or self._any.get((thash, kind))


def error_categories(record: EpisodeRecord) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in record.tool_calls:
        if c.source == "error":
            cat = c.error_category or "error"
            out[cat] = out.get(cat, 0) + 1
    return out


def base_unit_score(record: EpisodeRecord) -> UnitScore:
    """A record's UnitScore with its common fields set and no score yet."""
    return UnitScore(unit=record.unit, benchmark=record.benchmark, subset=record.subset,
                     task_id=record.task_id, score=None, tool_calls=record.n_tool_calls,
                     tool_errors=record.n_tool_errors,
                     error_categories=error_categories(record))


def score_records(records: list[EpisodeRecord], judgements: list[Judgement],
                  settings: JudgeSettings, prompts: Any = None,
                  options: Mapping[str, Any] | None = None) -> list[UnitScore]:
    """One UnitScore per record that its benchmark scores (`prompts`: the run's prompt set,
    whose judgements are the current ones; None = built-in; `options`: the run config's
    `[options]` table, None = each benchmark's defaults)."""
    from evaluator import benchmarks
    from evaluator.benchmarks.base import BenchmarkOptions, ScoreContext

    index = JudgementIndex(judgements, settings.judge_model)
    read = BenchmarkOptions(options)
    contexts: dict[str, ScoreContext] = {}
    out = []
    for rec in records:
        bench = benchmarks.find(rec.benchmark)
        if bench is None:
            continue
        ctx = contexts.get(bench.name)
        if ctx is None:
            ctx = contexts[bench.name] = ScoreContext(settings=settings, prompts=prompts,
                                                      options=read.of(bench))
        us = bench.score(rec, index, ctx)
        if us is not None:
            out.append(us)
    return out


def score_run(run_dir: str | Path, settings: JudgeSettings, prompts: Any = None,
              options: Mapping[str, Any] | None = None) -> list[UnitScore]:
    """One UnitScore per unit of RUN_DIR that some judge applies to (`prompts`: the run's
    prompt set, None = built-in; `options`: the run config's `[options]` table)."""
    return score_records(latest_records(run_dir), read_judgements(run_dir), settings, prompts,
                         options)


def mean_score(units: list[UnitScore]) -> float | None:
    scored = [u.score for u in units if u.score is not None]
    return sum(scored) / len(scored) if scored else None


def per_trial_scores(units: list[UnitScore], aggregate: Aggregate = mean_score
                     ) -> dict[int, float]:
    """`aggregate` of each trial index's scored units (trials without one left out)."""
    by_trial: dict[int, list[UnitScore]] = defaultdict(list)
    for u in units:
        if u.score is not None:
            by_trial[u.unit.trial].append(u)
    return {t: aggregate(v) for t, v in sorted(by_trial.items())}  # type: ignore[misc]


def mean_std(values: list[float]) -> tuple[float | None, float | None]:
    """Mean and sample standard deviation (ddof=1; None with fewer than two values)."""
    if not values:
        return None, None
    m = sum(values) / len(values)
    if len(values) < 2:
        return m, None
    return m, math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))


def subset_aggregate(benchmark: str, subset: str) -> Aggregate:
    """How the benchmark pools one subset's units (`Benchmark.subset_score`); the mean unit
    score for a benchmark that is not registered."""
    from evaluator import benchmarks

    bench = benchmarks.find(benchmark)
    if bench is None:
        return mean_score
    return lambda units: bench.subset_score(units, subset)
