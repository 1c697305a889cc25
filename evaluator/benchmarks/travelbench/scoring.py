"""TravelBench scoring: instance scores from judgements, subset and overall scores.

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

from collections import defaultdict

import msgspec

from bench_data.travelbench import SUBSET_FILES
from evaluator.benchmarks.base import JudgementLookup, ScoreContext
from evaluator.judges.transcript import trajectory_hash
from evaluator.records import EpisodeRecord, UnitScore
from evaluator.scoring import base_unit_score, mean_std, per_trial_scores

from .judges import DIMENSIONS, META_KIND, RUBRIC_KIND, meta_version, rubric_version
from .unsolvable import UNSOLVABLE_KIND, rule_version

TRAVEL_SUBSETS = tuple(SUBSET_FILES)
"""The subsets, in the order the paper reports them."""


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


def score_record(record: EpisodeRecord, index: JudgementLookup, ctx: ScoreContext
                 ) -> UnitScore | None:
    """The UnitScore of one episode; None when no judge applies to it. Judgements of the
    run's prompt set (`ctx.prompts`; None = built-in) are the current ones."""
    settings, prompts, options = ctx.settings, ctx.prompts, ctx.options
    thash = trajectory_hash(record)
    base = base_unit_score(record)
    if record.subset == "unsolvable":
        j = index.get(thash, UNSOLVABLE_KIND, rule_version(settings.abstain_tags))
        if j is None:
            base.judge_error = "not judged"
            return base
        base.score = j.score
        base.success = bool(j.score)
        return base
    if record.subset not in DIMENSIONS:
        return None
    rubric = index.current_or_latest(thash, RUBRIC_KIND, rubric_version(prompts, options))
    if rubric is None:
        base.judge_error = "not judged"
        return base
    ratings = {d: v for d, v in rubric.scores.items() if d in DIMENSIONS[record.subset]}
    if rubric.score is None or not ratings:
        base.judge_error = f"rubric: {rubric.error or 'no dimension rated'}"
        return base
    meta: float | None = None
    if settings.meta_judge:
        mj = index.current_or_latest(thash, META_KIND, meta_version(prompts, options))
        if mj is None:  # not judged yet (judging incomplete): not scored
            base.judge_error = "meta: not judged"
            base.dims = dict(ratings)
            return base
        if mj.score is not None:  # a failed meta-judge: weight 1, as the reference
            meta = mj.scores.get("meta", mj.score * 5.0)
    base.score = travel_instance_score(ratings, meta, record.n_tool_calls, record.n_tool_errors)
    base.success = base.score >= settings.success_threshold
    base.dims = dict(ratings)
    if meta is not None:
        base.dims["meta"] = meta
    return base


# ---------------------------------------------------------------- aggregation

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


def pooled_subset_score(units: list[UnitScore], subset: str) -> float | None:
    """`Benchmark.subset_score`: a subset's units pooled as the reference does."""
    return subset_score(units, DIMENSIONS.get(subset))


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
    per_trial = per_trial_scores(scored, lambda units: subset_score(units, dimensions))
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
    """Aggregate TravelBench unit scores (the caller passes this benchmark's units)."""
    groups: dict[str, list[UnitScore]] = defaultdict(list)
    for u in unit_scores:
        if u.subset in TRAVEL_SUBSETS:
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
