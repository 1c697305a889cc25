"""Scores from episodes + judgements: TravelBench instance and subset scores, rubric tasks.

TravelBench (paper section 4): instance score
    S = ((mean rating - 1) / 4) * (s_meta / 5, or 1 without meta) * (1 - errors / calls, or 1
    without calls),
unsolvable y = 1 when the first response carries the refusal tag. A subset's score in one
trial is the mean over its scored instances; the reported subset score is the mean over
trials with the (population) standard deviation across trials; the overall score is the mean
of the three subset scores, per trial and then over trials. Scores are in [0, 1]; reports
multiply by 100.

Deliberate difference from the reference implementation: its overall average is the mean of
the per-dimension final means, which differs from the per-instance formula when a dimension is
missing for some trajectory. Here a judgement must rate every dimension (else it is a judge
error), and we follow the paper's per-instance formula (eq. 3-6).
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import msgspec

from evaluator.judges.pool import latest_records, read_judgements
from evaluator.judges.settings import JudgeSettings
from evaluator.judges.sliding_window import SLIDING_WINDOW_KIND
from evaluator.judges.sliding_window import prompt_version as window_version
from evaluator.judges.transcript import trajectory_hash
from evaluator.judges.travel import (
    DIMENSIONS,
    META_KIND,
    META_PROMPT_VERSION,
    RUBRIC_KIND,
    RUBRIC_PROMPT_VERSION,
)
from evaluator.judges.unsolvable import UNSOLVABLE_KIND, rule_version
from evaluator.records import EpisodeRecord, Judgement, UnitScore

TRAVEL_SUBSETS = ("single_turn", "multi_turn", "unsolvable")


def travel_instance_score(
    ratings: dict[str, float], meta: float | None, tool_calls: int, tool_errors: int
) -> float:
    """((mean(ratings) - 1) / 4) * (meta / 5 if meta else 1) * (1 - errors / calls if calls
    else 1)."""
    if not ratings:
        raise ValueError("travel_instance_score needs at least one rating")
    for name, r in ratings.items():
        if not 1 <= r <= 5:
            raise ValueError(f"rating {name}={r} is outside 1..5")
    if meta is not None and not 1 <= meta <= 5:
        raise ValueError(f"meta rating {meta} is outside 1..5")
    if tool_calls < 0 or not 0 <= tool_errors <= max(tool_calls, 0):
        raise ValueError(f"need 0 <= tool_errors <= tool_calls, got {tool_errors}/{tool_calls}")
    raw = (sum(ratings.values()) / len(ratings) - 1.0) / 4.0
    w_meta = meta / 5.0 if meta else 1.0
    w_tool = 1.0 - tool_errors / tool_calls if tool_calls else 1.0
    return raw * w_meta * w_tool


def _error_categories(record: EpisodeRecord) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in record.tool_calls:
        if c.source == "error":
            cat = c.error_category or "error"
            out[cat] = out.get(cat, 0) + 1
    return out


class _Index:
    """Latest judgement per (trajectory hash, kind, prompt version), optionally one model."""

    def __init__(self, judgements: list[Judgement], model: str) -> None:
        self._by: dict[tuple[str, str, str], Judgement] = {}
        for j in judgements:  # file order: later wins
            if model and j.judge_model not in (model, "rule"):
                continue
            self._by[(j.trajectory_hash, j.kind, j.prompt_version)] = j

    def get(self, thash: str, kind: str, version: str) -> Judgement | None:
        return self._by.get((thash, kind, version))


def score_record(record: EpisodeRecord, index: _Index, settings: JudgeSettings) -> UnitScore | None:
    """The UnitScore of one episode; None when no judge applies to it."""
    thash = trajectory_hash(record)
    base = UnitScore(unit=record.unit, benchmark=record.benchmark, subset=record.subset,
                     task_id=record.task_id, score=None, tool_calls=record.n_tool_calls,
                     tool_errors=record.n_tool_errors,
                     error_categories=_error_categories(record))
    if record.benchmark == "travelbench" and record.subset == "unsolvable":
        j = index.get(thash, UNSOLVABLE_KIND, rule_version(settings.unsolvable_tags))
        if j is None:
            base.judge_error = "not judged"
            return base
        base.score = j.score
        base.success = bool(j.score)
        return base
    if record.benchmark == "travelbench" and record.subset in DIMENSIONS:
        rubric = index.get(thash, RUBRIC_KIND, RUBRIC_PROMPT_VERSION)
        if rubric is None or rubric.score is None:
            base.judge_error = "not judged" if rubric is None else f"rubric: {rubric.error}"
            return base
        meta: float | None = None
        if settings.meta_judge:
            mj = index.get(thash, META_KIND, META_PROMPT_VERSION)
            if mj is None or mj.score is None:
                base.judge_error = ("meta: not judged" if mj is None else f"meta: {mj.error}")
                base.dims = dict(rubric.scores)
                return base
            meta = mj.scores.get("meta", mj.score * 5.0)
        base.score = travel_instance_score(rubric.scores, meta, record.n_tool_calls,
                                           record.n_tool_errors)
        base.success = base.score >= settings.success_threshold
        base.dims = dict(rubric.scores)
        if meta is not None:
            base.dims["meta"] = meta
        return base
    j = index.get(thash, SLIDING_WINDOW_KIND,
                  window_version(settings.window_turns, settings.window_overlap))
    if j is None:
        return None if record.benchmark != "vitabench" else _missing(base)
    if j.score is None:
        base.judge_error = j.error or "judge error"
        return base
    base.score = j.score
    base.success = j.score >= 1.0
    base.dims = dict(j.scores)
    if j.scores:
        base.dims["rubric_accuracy"] = sum(j.scores.values()) / len(j.scores)
    return base


def _missing(base: UnitScore) -> UnitScore:
    base.judge_error = "not judged"
    return base


def score_run(run_dir: str | Path, settings: JudgeSettings) -> list[UnitScore]:
    """One UnitScore per unit of RUN_DIR that some judge applies to."""
    index = _Index(read_judgements(run_dir), settings.judge_model)
    out = []
    for rec in latest_records(run_dir):
        us = score_record(rec, index, settings)
        if us is not None:
            out.append(us)
    return out


# ---------------------------------------------------------------- aggregation

class SubsetSummary(msgspec.Struct):
    """One subset: per-trial mean instance score, their mean and std across trials.

    n_units counts units seen, n_scored those with a score, n_errors those without one
    (judge errors or not yet judged; they are left out of the means and reported).
    dims: mean per dimension over scored units (ratings 1..5, `meta`, or rubric accuracy).
    """

    subset: str
    per_trial: dict[int, float]
    mean: float | None
    std: float | None
    n_units: int
    n_scored: int
    n_errors: int
    dims: dict[str, float] = msgspec.field(default_factory=dict)


class TravelSummary(msgspec.Struct):
    """Subsets plus the overall score = mean of the subset scores (per trial, then over
    trials). `complete` is true when all three TravelBench subsets were scored."""

    subsets: dict[str, SubsetSummary]
    overall_per_trial: dict[int, float]
    overall: float | None
    overall_std: float | None
    complete: bool


def _mean_std(values: list[float]) -> tuple[float | None, float | None]:
    if not values:
        return None, None
    m = sum(values) / len(values)
    return m, math.sqrt(sum((v - m) ** 2 for v in values) / len(values))


def summarize_subset(subset: str, scores: list[UnitScore]) -> SubsetSummary:
    by_trial: dict[int, list[float]] = defaultdict(list)
    dims: dict[str, list[float]] = defaultdict(list)
    for u in scores:
        if u.score is None:
            continue
        by_trial[u.unit.trial].append(u.score)
        for d, v in u.dims.items():
            dims[d].append(v)
    per_trial = {t: sum(v) / len(v) for t, v in sorted(by_trial.items())}
    mean, std = _mean_std(list(per_trial.values()))
    n_scored = sum(1 for u in scores if u.score is not None)
    return SubsetSummary(subset=subset, per_trial=per_trial, mean=mean, std=std,
                         n_units=len(scores), n_scored=n_scored,
                         n_errors=len(scores) - n_scored,
                         dims={d: sum(v) / len(v) for d, v in sorted(dims.items())})


def travel_summary(unit_scores: list[UnitScore]) -> TravelSummary:
    """Aggregate TravelBench unit scores (other benchmarks' units are ignored)."""
    groups: dict[str, list[UnitScore]] = defaultdict(list)
    for u in unit_scores:
        if u.benchmark == "travelbench" and u.subset in TRAVEL_SUBSETS:
            groups[u.subset].append(u)
    subsets = {s: summarize_subset(s, groups[s]) for s in TRAVEL_SUBSETS if s in groups}
    trials = sorted({t for s in subsets.values() for t in s.per_trial})
    overall_per_trial: dict[int, float] = {}
    for t in trials:
        vals = [s.per_trial[t] for s in subsets.values() if t in s.per_trial]
        overall_per_trial[t] = sum(vals) / len(vals)
    overall, overall_std = _mean_std(list(overall_per_trial.values()))
    complete = all(s in subsets and subsets[s].n_scored for s in TRAVEL_SUBSETS)
    return TravelSummary(subsets=subsets, overall_per_trial=overall_per_trial, overall=overall,
                         overall_std=overall_std, complete=complete)
