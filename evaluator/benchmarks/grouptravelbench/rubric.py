"""The process-quality judge's rubric as data, and its score arithmetic.

Five dimensions, each rated on a five-level word scale (1..5). Per trajectory: the average of
the dimensions that parsed; each score and the average normalised to 0..100 as
(s - 1) / 4 x 100; with an optional meta-judge rating m (1..5) the final score is
normalised x m / 5 (the normalised one when the meta-judge fails). A crashed run (empty chat)
scores 1 everywhere, 0 normalised, and is kept; a trajectory the judge never rated is dropped.
There is no tool-error penalty. The criteria below are this project's wording; the prompt
that carries them is written with the judge (later).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import msgspec


@dataclass(frozen=True)
class JudgeDimension:
    key: str
    title: str
    criteria: tuple[str, ...]


DIMENSIONS: tuple[JudgeDimension, ...] = (
    JudgeDimension("hallucination_factuality", "Factuality", (
        "Prices, place names and times in the agent's messages come from tool results.",
        "Nothing is invented; uncertain facts are presented as uncertain.",
    )),
    JudgeDimension("tool_usage_reasoning", "Tool-use reasoning", (
        "Tool calls are staged and purposeful, neither redundant nor missing.",
        "Tool results are used correctly in later reasoning and replies.",
    )),
    JudgeDimension("interaction_quality", "Interaction quality", (
        "@-mentions target the right member; questions are specific and natural.",
        "No internal field names leak into the chat; the pace is neither pushy nor passive.",
    )),
    JudgeDimension("conflict_coordination", "Conflict coordination", (
        "Conflicts between members are noticed early and addressed explicitly.",
        "Mediation is even-handed, and quieter members get a fair hearing.",
    )),
    JudgeDimension("plan_humanization", "Plan humanization", (
        "Days leave room for meals and rest and vary from one another.",
        "Special needs (elderly, children) are met; routes are efficient with local character.",
    )),
)
"""The judge scores only what the rule metrics cannot: never formats, time arithmetic or
exact preference matching."""
DIMENSION_KEYS = tuple(d.key for d in DIMENSIONS)

RATING_WORDS: tuple[tuple[str, int], ...] = (
    ("极差", 1), ("较差", 2), ("一般", 3), ("较好", 4), ("优秀", 5))
"""The reference's rating words, worst to best. A rating is read by exact word first, then
by the first of these words (in this order) contained in it, after a leading 评级: label."""
_RATING = dict(RATING_WORDS)


def rating_to_score(rating: str | None) -> int | None:
    if not rating:
        return None
    text = rating.strip()
    for label in ("评级：", "评级:"):
        if text.startswith(label):
            text = text[len(label):].strip()
            break
    if text in _RATING:
        return _RATING[text]
    return next((score for word, score in RATING_WORDS if word in text), None)


def normalise(score: float) -> float:
    """1..5 -> 0..100, rounded to 2 decimals."""
    return round((score - 1) / 4 * 100, 2)


class JudgeScores(msgspec.Struct, frozen=True):
    raw: dict[str, int | None]  # per dimension, 1..5
    average: float  # mean of the parsed dimensions, 1..5
    normalised: dict[str, float | None]
    normalised_average: float
    meta: int | None = None
    final: dict[str, float | None] = {}
    final_average: float = 0.0
    crashed: bool = False


def score_ratings(ratings: Mapping[str, str | None], meta_rating: str | None = None
                  ) -> JudgeScores | None:
    """Scores from the judge's rating words per dimension (and the meta-judge's). None when
    no dimension parsed: the reference retries the call, and drops the trajectory if it
    never parses."""
    return score_values({key: rating_to_score(ratings.get(key)) for key in DIMENSION_KEYS},
                        rating_to_score(meta_rating))


def score_values(raw_scores: Mapping[str, float | None], meta: float | None = None
                 ) -> JudgeScores | None:
    """Scores from ratings already on the 1..5 scale (and the meta-judge's 1..5, if any);
    None when no dimension is rated."""
    raw: dict[str, int | None] = {}
    for key in DIMENSION_KEYS:
        value = raw_scores.get(key)
        raw[key] = None if value is None else int(value)
    parsed = [s for s in raw.values() if s is not None]
    if not parsed:
        return None
    average = sum(parsed) / len(parsed)
    normalised = {k: None if s is None else normalise(s) for k, s in raw.items()}
    norm_average = normalise(average)
    if meta is None:
        return JudgeScores(raw, average, normalised, norm_average, None, dict(normalised),
                           norm_average)
    weight = meta / 5.0
    final = {k: None if v is None else round(v * weight, 2) for k, v in normalised.items()}
    return JudgeScores(raw, average, normalised, norm_average, int(meta), final,
                       round(norm_average * weight, 2))


def crashed_run() -> JudgeScores:
    """A run that crashed before any dialogue: kept, scored as the lowest rating."""
    raw: dict[str, int | None] = {key: 1 for key in DIMENSION_KEYS}
    zero: dict[str, float | None] = {key: 0.0 for key in DIMENSION_KEYS}
    return JudgeScores(raw, 1.0, zero, 0.0, None, dict(zero), 0.0, crashed=True)


def judge_statistics(results: Iterable[JudgeScores]) -> dict[str, object]:
    """Batch statistics over the kept trajectories: per dimension mean/min/max/count of the
    raw scores, the mean raw average (1..5), the mean final average (0..100) and, when the
    meta-judge ran, its count, mean and 1..5 distribution."""
    results = list(results)
    if not results:
        return {}
    per_dim = {key: [r.raw[key] for r in results if r.raw.get(key) is not None]
               for key in DIMENSION_KEYS}
    metas = [r.meta for r in results if r.meta is not None]
    stats: dict[str, object] = {
        "total_evaluated": len(results),
        "raw_scores_1_5": {key: {"mean": round(sum(v) / len(v), 2) if v else 0,
                                 "min": min(v) if v else 0, "max": max(v) if v else 0,
                                 "count": len(v)} for key, v in per_dim.items()},
        "raw_average_1_5": round(sum(r.average for r in results) / len(results), 2),
        "final_average_0_100": round(sum(r.final_average for r in results) / len(results), 2),
    }
    if metas:
        stats["meta_judge"] = {"count": len(metas), "mean": round(sum(metas) / len(metas), 2),
                               "distribution": {i: metas.count(i) for i in range(1, 6)}}
    return stats
