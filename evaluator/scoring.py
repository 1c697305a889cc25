"""Scores from episodes + judgements: TravelBench instance and subset scores, rubric tasks.

TravelBench, as the reference implementation (`travelbench/evaluation/evaluate.py` and
`utils/eval_util.py`, commit 445a29d) computes it:

- instance: S = ((mean of the rated dimensions - 1) / 4) x w_meta x w_tool, with
  w_meta = s / 5 (1 when the meta-judge is off or failed) and w_tool = 1 - errors / calls
  (1 without calls). A dimension the judge did not rate is left out of the mean;
- subset score (the headline): over ALL scored trajectories of all trials pooled, as the
  reference evaluates one file of every trial's trajectories: per dimension, the mean final
  score (r - 1) / 4 x w_meta x w_tool over the trajectories that rated it (0 when none did),
  then the mean over the subset's dimensions. When every trajectory rated every dimension this
  is the mean of the instance scores (paper eq. 3-6). Unsolvable: the pooled mean of y;
- beside it, per trial the same number over that trial's trajectories, their mean and sample
  standard deviation (ddof=1, as the paper's Table 5);
- overall = mean of the three subset scores (and per trial, the mean of that trial's).

Trajectories whose rubric judgement failed are dropped, as the reference drops them. Scores are
in [0, 1]; reports multiply by 100.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import msgspec

from evaluator.judges.pool import latest_records, read_judgements
from evaluator.judges.settings import JudgeSettings
from evaluator.judges.sliding_window import SLIDING_WINDOW_KIND
from evaluator.judges.sliding_window import prompt_version as window_version
from evaluator.judges.transcript import trajectory_hash
from evaluator.judges.travel import (
    DIMENSIONS,
    META_KIND,
    RUBRIC_KIND,
    meta_version,
    rubric_version,
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
        self._any: dict[tuple[str, str], Judgement] = {}
        for j in judgements:  # file order: later wins
            if model and j.judge_model not in (model, "rule"):
                continue
            self._by[(j.trajectory_hash, j.kind, j.prompt_version)] = j
            self._any[(j.trajectory_hash, j.kind)] = j

    def get(self, thash: str, kind: str, version: str) -> Judgement | None:
        return self._by.get((thash, kind, version))

    def current_or_latest(self, thash: str, kind: str, version: str) -> Judgement | None:
        """The judgement of the current prompt version, else the last one written with any
        version (runs judged before a prompt version bump still score)."""
        return self._by.get((thash, kind, version)) or self._any.get((thash, kind))


def score_record(record: EpisodeRecord, index: _Index, settings: JudgeSettings,
                 prompts: Any = None) -> UnitScore | None:
    """The UnitScore of one episode; None when no judge applies to it. `prompts`: the run's
    prompt set (`evaluator.prompt_sets`; None = built-in), whose judgements are current."""
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
        rubric = index.current_or_latest(thash, RUBRIC_KIND, rubric_version(prompts))
        if rubric is None:
            base.judge_error = "not judged"
            return base
        ratings = {d: v for d, v in rubric.scores.items() if d in DIMENSIONS[record.subset]}
        if rubric.score is None or not ratings:
            base.judge_error = f"rubric: {rubric.error or 'no dimension rated'}"
            return base
        meta: float | None = None
        if settings.meta_judge:
            mj = index.current_or_latest(thash, META_KIND, meta_version(prompts))
            if mj is None:  # not judged yet (judging incomplete): not scored
                base.judge_error = "meta: not judged"
                base.dims = dict(ratings)
                return base
            if mj.score is not None:  # a failed meta-judge: weight 1, as the reference
                meta = mj.scores.get("meta", mj.score * 5.0)
        base.score = travel_instance_score(ratings, meta, record.n_tool_calls,
                                           record.n_tool_errors)
        base.success = base.score >= settings.success_threshold
        base.dims = dict(ratings)
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


def score_run(run_dir: str | Path, settings: JudgeSettings, prompts: Any = None
              ) -> list[UnitScore]:
    """One UnitScore per unit of RUN_DIR that some judge applies to (`prompts`: the run's
    prompt set, None = built-in)."""
    index = _Index(read_judgements(run_dir), settings.judge_model)
    out = []
    for rec in latest_records(run_dir):
        us = score_record(rec, index, settings, prompts)
        if us is not None:
            out.append(us)
    return out


# ---------------------------------------------------------------- aggregation

def travel_dimensions(benchmark: str, subset: str) -> list[str] | None:
    """The rubric dimensions of a TravelBench rubric subset; None for any other subset."""
    return DIMENSIONS.get(subset) if benchmark == "travelbench" else None


def final_dimension_scores(unit: UnitScore, dimensions: list[str]) -> dict[str, float]:
    """Per rated dimension of a scored rubric unit: (r - 1) / 4 x w_meta x w_tool, in [0, 1].
    The weights are the unit's own: its score over its unweighted (mean - 1) / 4."""
    ratings = {d: unit.dims[d] for d in dimensions if d in unit.dims}
    if unit.score is None or not ratings:
        return {}
    raw = (sum(ratings.values()) / len(ratings) - 1.0) / 4.0
    weight = unit.score / raw if raw > 0 else 0.0  # raw 0: every rating is 1, every term 0
    return {d: (r - 1.0) / 4.0 * weight for d, r in ratings.items()}


def dimension_means(units: list[UnitScore], dimensions: list[str]) -> dict[str, float]:
    """Per dimension, the mean final score over the scored units that rated it; 0 for a
    dimension no unit rated (the reference's rule)."""
    values: dict[str, list[float]] = {d: [] for d in dimensions}
    for u in units:
        for d, v in final_dimension_scores(u, dimensions).items():
            values[d].append(v)
    return {d: sum(v) / len(v) if v else 0.0 for d, v in values.items()}


def subset_score(units: list[UnitScore], dimensions: list[str] | None = None) -> float | None:
    """The score of a set of units pooled: with `dimensions` (a TravelBench rubric subset) the
    mean over dimensions of `dimension_means`, else the mean unit score. None when no unit is
    scored. Units that carry none of the dimensions' ratings (not scored from a rubric
    judgement) cannot be split by dimension: if there is any, the mean unit score is used."""
    scored = [u for u in units if u.score is not None]
    if not scored:
        return None
    if dimensions and all(any(d in u.dims for d in dimensions) for u in scored):
        means = dimension_means(scored, dimensions)
        return sum(means.values()) / len(means)
    return sum(u.score for u in scored) / len(scored)  # type: ignore[misc]


def per_trial_scores(
    units: list[UnitScore], dimensions: list[str] | None = None
) -> dict[int, float]:
    """`subset_score` of each trial index's units (trials without a scored unit left out)."""
    by_trial: dict[int, list[UnitScore]] = defaultdict(list)
    for u in units:
        if u.score is not None:
            by_trial[u.unit.trial].append(u)
    return {t: subset_score(v, dimensions) for t, v in sorted(by_trial.items())}  # type: ignore[misc]


def mean_std(values: list[float]) -> tuple[float | None, float | None]:
    """Mean and sample standard deviation (ddof=1; None with fewer than two values)."""
    if not values:
        return None, None
    m = sum(values) / len(values)
    if len(values) < 2:
        return m, None
    return m, math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))


class SubsetSummary(msgspec.Struct):
    """One subset. `mean` is the headline: all trials' trajectories pooled (see the module
    docstring); `per_trial` the same number per trial index, `trial_mean` and `std` their mean
    and sample std (std None with one trial).

    n_units counts units seen, n_scored those with a score, n_errors those without one
    (judge errors or not yet judged; they are left out, and reported).
    dims: mean per dimension over the scored units that have it (ratings 1..5, `meta`).
    dim_scores: rubric subsets: per dimension the mean final score, the terms of `mean`.
    """

    subset: str
    mean: float | None
    per_trial: dict[int, float]
    trial_mean: float | None
    std: float | None
    n_units: int
    n_scored: int
    n_errors: int
    dims: dict[str, float] = msgspec.field(default_factory=dict)
    dim_scores: dict[str, float] = msgspec.field(default_factory=dict)


class TravelSummary(msgspec.Struct):
    """Subsets plus the overall score = mean of the subsets' pooled scores; per trial the mean
    of that trial's subset scores, with their mean and sample std. `complete` is true when all
    three TravelBench subsets were scored."""

    subsets: dict[str, SubsetSummary]
    overall: float | None
    overall_per_trial: dict[int, float]
    overall_trial_mean: float | None
    overall_std: float | None
    complete: bool


def summarize_subset(subset: str, scores: list[UnitScore]) -> SubsetSummary:
    dimensions = DIMENSIONS.get(subset)
    scored = [u for u in scores if u.score is not None]
    dims: dict[str, list[float]] = defaultdict(list)
    for u in scored:
        for d, v in u.dims.items():
            dims[d].append(v)
    per_trial = per_trial_scores(scored, dimensions)
    trial_mean, std = mean_std(list(per_trial.values()))
    return SubsetSummary(
        subset=subset, mean=subset_score(scored, dimensions), per_trial=per_trial,
        trial_mean=trial_mean, std=std, n_units=len(scores), n_scored=len(scored),
        n_errors=len(scores) - len(scored),
        dims={d: sum(v) / len(v) for d, v in sorted(dims.items())},
        dim_scores=dimension_means(scored, dimensions) if dimensions and any(
            d in u.dims for u in scored for d in dimensions) else {},
    )


def travel_summary(unit_scores: list[UnitScore]) -> TravelSummary:
    """Aggregate TravelBench unit scores (other benchmarks' units are ignored)."""
    groups: dict[str, list[UnitScore]] = defaultdict(list)
    for u in unit_scores:
        if u.benchmark == "travelbench" and u.subset in TRAVEL_SUBSETS:
            groups[u.subset].append(u)
    subsets = {s: summarize_subset(s, groups[s]) for s in TRAVEL_SUBSETS if s in groups}
    headline = [s.mean for s in subsets.values() if s.mean is not None]
    trials = sorted({t for s in subsets.values() for t in s.per_trial})
    overall_per_trial: dict[int, float] = {}
    for t in trials:
        vals = [s.per_trial[t] for s in subsets.values() if t in s.per_trial]
        overall_per_trial[t] = sum(vals) / len(vals)
    trial_mean, std = mean_std(list(overall_per_trial.values()))
    complete = all(s in subsets and subsets[s].n_scored for s in TRAVEL_SUBSETS)
    return TravelSummary(
        subsets=subsets, overall=sum(headline) / len(headline) if headline else None,
        overall_per_trial=overall_per_trial, overall_trial_mean=trial_mean, overall_std=std,
        complete=complete,
    )
