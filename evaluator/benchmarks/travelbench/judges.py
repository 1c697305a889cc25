"""TravelBench rubric judge and meta-judge (paper section 4, appendix F).

The rubric judge rates a single-turn or multi-turn trajectory on the subset's dimensions
(Very Poor..Excellent -> 1..5); its Judgement's `score` is the normalised raw score
(mean - 1) / 4. The meta-judge audits that evaluation and answers s in 1..5; its Judgement's
`score` is the calibration factor s / 5. Tool penalty and calibration are combined in
`scoring.py`, from the stored judgements and the episode's tool-call counts.

As in the reference, a dimension the judge did not rate on the scale is left out of
`scores` (and named under `UNRATED_NOTE` in `reasoning`); a judgement needs at least one
rating. When the context guard shortened tool outputs the judgement says so under
`CONTEXT_GUARD_NOTE` in `reasoning`. Keys of `reasoning` starting with "_" are such notes.

The run's options (options.py) choose how the prompts are put together (`rendering`,
judge_prompts.py) and how answers are read (`judge_answers`: judge_answers.py reads them as the
reference does, else the tolerant `evaluator.judges.parse`); both are part of the judgements'
prompt version. Answers read as the reference reads them are asked for without a JSON schema
(`judge.structured_output` would force JSON, which that reading refuses).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import msgspec

from bench_data.types import Task
from evaluator.judges import parse
from evaluator.judges.call import JudgeClient, JudgeFailed, call_judge, fit_prompt
from evaluator.judges.parse import META_SCHEMA, rubric_schema
from evaluator.judges.settings import JudgeSettings
from evaluator.judges.transcript import CONTEXT_GUARD_NOTE, trajectory_hash
from evaluator.records import EpisodeRecord, Judgement

from . import judge_answers
from .judge_prompts import (
    TOOL_OUTPUTS,
    build_meta_prompt,
    build_rubric_prompt,
    dimensions_for,
    imported,
    meta_parts,
    rubric_parts,
)
from .kinds import META_KIND, RUBRIC_KIND
from .options import prefix_judges, reference_answers, reference_rendering
from .prompting import JUDGE_DIMENSIONS

if TYPE_CHECKING:
    from evaluator.prompt_sets import PromptSet

__all__ = ["build_meta_prompt", "build_rubric_prompt", "judge_meta", "judge_rubric",
           "meta_parts", "meta_version", "rubric_parts", "rubric_version"]

# v2: the output example has placeholders instead of rating every dimension "Good". Scoring
# still reads judgements of earlier versions when no current one exists (evaluator.scoring).
# `+prefix`: the built-in prompts' tool list first (options.judge_layout).
RUBRIC_PROMPT_VERSION = "travel-rubric-v2"
META_PROMPT_VERSION = "travel-meta-v1"

DIMENSIONS: dict[str, list[str]] = JUDGE_DIMENSIONS
SINGLE_TURN_DIMENSIONS = DIMENSIONS["single_turn"]
MULTI_TURN_DIMENSIONS = DIMENSIONS["multi_turn"]
UNRATED_NOTE = "_unrated"


def _modes(options: Any, prompts: PromptSet | None) -> str:
    """The options' part of a prompt version: "" for this project's rendering and reading and
    the reference's order of the built-in prompts."""
    parts = [p for p, on in (("ref-render", reference_rendering(options)),
                             ("ref-answers", reference_answers(options)),
                             ("prefix", prefix_judges(options) and imported(prompts) is None))
             if on]
    return "".join(f"+{p}" for p in parts)


def rubric_version(prompts: PromptSet | None = None, options: Any = None) -> str:
    """The rubric judgements' prompt_version (+ the options' modes, + `<name>@<digest>` of a
    non-built-in set)."""
    base = RUBRIC_PROMPT_VERSION + _modes(options, prompts)
    return prompts.version(base) if prompts else base


def meta_version(prompts: PromptSet | None = None, options: Any = None) -> str:
    base = META_PROMPT_VERSION + _modes(options, prompts)
    return prompts.version(base) if prompts else base


def _reading(settings: JudgeSettings, options: Any) -> JudgeSettings:
    """No JSON schema for answers read as the reference reads them."""
    if reference_answers(options) and settings.structured_output:
        return msgspec.structs.replace(settings, structured_output=False)
    return settings


def normalised_rubric_score(ratings: dict[str, float]) -> float:
    """(mean rating - 1) / 4, in [0, 1]."""
    if not ratings:
        raise ValueError("no ratings")
    return (sum(ratings.values()) / len(ratings) - 1.0) / 4.0


async def judge_rubric(
    record: EpisodeRecord,
    task: Task | None,
    client: JudgeClient,
    model: str,
    settings: JudgeSettings,
    tools: list[dict[str, Any]] | None = None,
    thash: str | None = None,
    prompts: PromptSet | None = None,
    options: Any = None,
) -> Judgement:
    """Rubric-judge one single/multi-turn trajectory. Judge failures become a Judgement with
    `error`; infrastructure errors propagate. `prompts`: the prompt set (None = built-in);
    `options`: the run's TravelBench options (None = the defaults)."""
    dims = dimensions_for(record.subset)
    base = {
        "unit": record.unit,
        "trajectory_hash": thash or trajectory_hash(record),
        "judge_model": model,
        "prompt_version": rubric_version(prompts, options),
        "kind": RUBRIC_KIND,
    }
    ps = imported(prompts)
    system = ps.texts["judge_system"] if ps else ""
    reader = judge_answers.parse_rubric if reference_answers(options) else parse.parse_rubric
    prompt, guard = await fit_prompt(rubric_parts(record, task, settings, tools, prompts, options),
                                     settings, client, model, system=system, what=TOOL_OUTPUTS)
    notes = {CONTEXT_GUARD_NOTE: guard} if guard else {}
    try:
        verdict, attempts, raw = await call_judge(
            client, model, prompt,
            schema_name="travel_rubric", schema=rubric_schema(dims),
            parse=lambda text: reader(text, dims), settings=_reading(settings, options),
            system=system,
        )
    except JudgeFailed as exc:
        return Judgement(**base, score=None, reasoning=notes, error=exc.detail,
                         attempts=exc.attempts, raw=exc.raw, created_at=time.time())
    scores = {d: float(v) for d, v in verdict.ratings.items()}
    if verdict.unrated:
        notes[UNRATED_NOTE] = "; ".join(f"{d}: {why}" for d, why in verdict.unrated.items())
    return Judgement(**base, score=normalised_rubric_score(scores), scores=scores,
                     reasoning={**verdict.reasoning, **notes}, attempts=attempts, raw=raw,
                     created_at=time.time())


async def judge_meta(
    record: EpisodeRecord,
    task: Task | None,
    rubric: Judgement,
    client: JudgeClient,
    model: str,
    settings: JudgeSettings,
    tools: list[dict[str, Any]] | None = None,
    prompts: PromptSet | None = None,
    options: Any = None,
) -> Judgement:
    """Audit a successful rubric judgement; `score` = s / 5. A failed audit is recorded as a
    judge error, which scoring reads as s = 5 (weight 1), as the reference does."""
    if rubric.score is None:
        raise ValueError("the meta-judge needs a successful rubric judgement")
    base = {
        "unit": record.unit,
        "trajectory_hash": rubric.trajectory_hash,
        "judge_model": model,
        "prompt_version": meta_version(prompts, options),
        "kind": META_KIND,
    }
    ps = imported(prompts)
    system = ps.texts["judge_meta_system"] if ps else ""
    reader = judge_answers.parse_meta if reference_answers(options) else parse.parse_meta
    prompt, guard = await fit_prompt(
        meta_parts(record, task, rubric, settings, tools, prompts, options),
        settings, client, model, system=system, what=TOOL_OUTPUTS)
    notes = {CONTEXT_GUARD_NOTE: guard} if guard else {}
    try:
        verdict, attempts, raw = await call_judge(
            client, model, prompt, schema_name="travel_meta", schema=META_SCHEMA,
            parse=reader, settings=_reading(settings, options),
            retry_temperature=settings.meta_retry_temperature, system=system,
        )
    except JudgeFailed as exc:
        return Judgement(**base, score=None, reasoning=notes, error=exc.detail,
                         attempts=exc.attempts, raw=exc.raw, created_at=time.time())
    return Judgement(**base, score=verdict.rating / 5.0, scores={"meta": float(verdict.rating)},
                     reasoning={"meta": verdict.reasoning, **notes}, attempts=attempts, raw=raw,
                     created_at=time.time())
