"""GroupTravelBench's rule judge and unit scores (the report section is `report.py`).

The rule judge (`gtb_metrics`, no model) scores one chat with `aggregate.score_trial` from the
record's `extra` (chat, agent table, effective table, plan_generated) and the run's POI table
(`options.poi_table`; `poi_file.resolve`): PC, GU, GF, PV go to `Judgement.scores`, with the
plan-validity issue counts by type under `pv:<type>` (a metric that could not be computed is
left out; the reason is in `reasoning`, and `_poi_table` names the table used). A run that
ended in an error (`judges.FAILED_RUNS`) scores as the reference scores a failed run: every
metric an error (0 in the averages).

A unit's score is PV (1 when the final plan is valid); `dims` holds the four metrics, the judge
score `lj` (S / 100, calibrated when the meta-judge ran) with its dimensions `lj:<dimension>`
(normalised, 0..1), the validity issue counts and the compromise statistics
(`cmp:solicited|accepted|refused|invalid`); `labels` holds the task's difficulty and the run's
`judge_average` option. A failed LLM judgement (or meta-judgement) is the unit's
`judge_error`; its rule metrics still count. A run the crash rule rates as crashed scores
S = 0 on every dimension.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from evaluator.benchmarks.base import JudgeInput, JudgementLookup, ScoreContext
from evaluator.judges.settings import JudgeSettings
from evaluator.judges.transcript import trajectory_hash
from evaluator.records import EpisodeRecord, Judgement, UnitScore
from evaluator.scoring import base_unit_score

from .aggregate import score_trial
from .judges import (
    FAILED_RUNS,
    JUDGE_KIND,
    META_KIND,
    crashed,
    judge_version,
    meta_version,
)
from .kinds import METRICS, METRICS_VERSION
from .options import POI_NONE, options_of
from .poi_file import PoiTableError, load_poi_table, path_tag, resolve
from .rubric import DIMENSION_KEYS, JudgeScores, crashed_run, score_values

DIMS = ("pc", "gu", "gf", "pv")
PV_PREFIX = "pv:"
CMP_PREFIX = "cmp:"
CMP_KEYS = ("solicited", "accepted", "refused", "invalid")
LJ = "lj"
DIFFICULTY = "difficulty"
AVERAGE = "judge_average"
POI_NOTE = "_poi_table"
POI_LABEL = "poi_table"


def metrics_version(options: Any) -> str:
    """The rule judge's version: a POI table given by path, or "none", is part of it (the
    table beside the data is the default's)."""
    o = options_of(options)
    if not o.poi_table:
        return METRICS_VERSION
    tag = POI_NONE if o.poi_table == POI_NONE else path_tag(Path(o.poi_table).expanduser())
    return f"{METRICS_VERSION}+poi={tag}"


def task_file(inp: JudgeInput) -> str | None:
    return inp.task.source.rsplit(":", 1)[0] if inp.task is not None else None


def metrics(inp: JudgeInput) -> Judgement:
    record = inp.record
    extra = record.extra
    options = options_of(inp.options)
    base: dict[str, Any] = {
        "unit": record.unit, "trajectory_hash": inp.thash, "judge_model": "rule",
        "prompt_version": metrics_version(options), "kind": METRICS}
    path = resolve(options.poi_table, task_file(inp))
    try:
        poi = load_poi_table(path) if path is not None else None
    except PoiTableError as exc:
        return Judgement(**base, score=None, error=str(exc), created_at=time.time())
    trial = score_trial(
        task_id=record.task_id, history=extra.get("chat") or [],
        agent_table=extra.get("agent_table"), effective=extra.get("effective") or {},
        users=extra.get("users") or [], plan_generated=bool(extra.get("plan_generated")),
        success=record.termination not in FAILED_RUNS, trial=record.unit.trial,
        subset=record.subset, poi=poi)
    values = {"pc": trial.pc, "gu": trial.gu, "gf": trial.gf, "pv": trial.pv}
    scores = {k: float(v) for k, v in values.items() if v is not None}
    if trial.validity is not None:
        scores.update({PV_PREFIX + t: float(n) for t, n in trial.validity.issue_counts.items()})
    reasoning = {**trial.errors, POI_NOTE: str(path) if path is not None else POI_NONE}
    return Judgement(**base, score=scores.get("pv", 0.0), scores=scores, reasoning=reasoning,
                     created_at=time.time())


def judge_kinds(record: EpisodeRecord, task: Any, settings: JudgeSettings) -> list[str]:
    kinds = [METRICS, JUDGE_KIND]
    if settings.meta_judge:
        kinds.append(META_KIND)
    return kinds


def score(record: EpisodeRecord, judgements: JudgementLookup, ctx: ScoreContext
          ) -> UnitScore | None:
    options = options_of(ctx.options)
    unit = base_unit_score(record)
    unit.labels = {DIFFICULTY: str(record.extra.get(DIFFICULTY) or "unknown"),
                   AVERAGE: options.judge_average}
    stats = record.extra.get("compromise_stats") or {}
    thash = trajectory_hash(record)
    found = judgements.get(thash, METRICS, metrics_version(options))
    if found is None or found.error is not None:
        unit.judge_error = f"{METRICS}: {found.error}" if found is not None else "not judged"
        return unit
    scores = found.scores or {}
    unit.labels[POI_LABEL] = found.reasoning.get(POI_NOTE, "")
    unit.dims = {k: v for k, v in scores.items() if k in DIMS or k.startswith(PV_PREFIX)}
    unit.dims.update({CMP_PREFIX + k: float(stats.get(k, 0)) for k in CMP_KEYS})
    judged = judgements.get(thash, JUDGE_KIND, judge_version(ctx.prompts, options))
    meta = (judgements.get(thash, META_KIND, meta_version(ctx.prompts, options))
            if ctx.settings.meta_judge else None)
    if judged is not None and judged.error is not None:
        unit.judge_error = f"{JUDGE_KIND}: {judged.error}"
    elif judged is not None and meta is not None and meta.error is not None:
        unit.judge_error = f"{META_KIND}: {meta.error}"
    lj = (crashed_run() if judged is not None and crashed(record, options)
          else judge_score(judged, meta))
    if lj is not None:
        unit.dims[LJ] = lj.final_average / 100
        unit.dims.update({f"{LJ}:{k}": v / 100 for k, v in lj.final.items() if v is not None})
    unit.score = unit.dims.get("pv", 0.0)
    unit.success = unit.score == 1.0
    return unit


def judge_score(judged: Judgement | None, meta: Judgement | None) -> JudgeScores | None:
    """`rubric.score_values` of the stored judgements: S and its dimensions, calibrated by the
    meta-judge's rating when it succeeded; None when the judge never gave a rating."""
    if judged is None or judged.score is None:
        return None
    rating = meta.scores.get("meta") if meta is not None and meta.score is not None else None
    return score_values({k: judged.scores[k] for k in DIMENSION_KEYS if k in judged.scores},
                        rating)
