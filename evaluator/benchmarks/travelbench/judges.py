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
"""

from __future__ import annotations

import json
import time
from functools import cache
from string import Template
from typing import TYPE_CHECKING, Any

from backends.types import ChatMessage
from bench_data.types import Task
from evaluator.benchmarks.travelbench.data import TravelBenchTask
from evaluator.judges.call import JudgeClient, JudgeFailed, call_judge, fit_prompt
from evaluator.judges.parse import (
    META_SCHEMA,
    RATING_LABELS,
    RATING_NAMES,
    parse_meta,
    parse_rubric,
    rubric_schema,
)
from evaluator.judges.settings import JudgeSettings
from evaluator.judges.transcript import (
    CONTEXT_GUARD_NOTE,
    Parts,
    conversation_turns,
    first_user_text,
    fit_parts,
    render_conversation,
    render_tools,
    tool_output_parts,
    trajectory_hash,
)
from evaluator.prompt_sets import dimension_sections
from evaluator.records import EpisodeRecord, Judgement

from .prompting import JUDGE_DIMENSIONS, PROMPT_DIR

if TYPE_CHECKING:
    from evaluator.prompt_sets import PromptSet

RUBRIC_KIND = "travel_rubric"
META_KIND = "meta"
# v2: the output example has placeholders instead of rating every dimension "Good". Scoring
# still reads judgements of earlier versions when no current one exists (evaluator.scoring).
RUBRIC_PROMPT_VERSION = "travel-rubric-v2"
META_PROMPT_VERSION = "travel-meta-v1"

DIMENSIONS: dict[str, list[str]] = JUDGE_DIMENSIONS
SINGLE_TURN_DIMENSIONS = DIMENSIONS["single_turn"]
MULTI_TURN_DIMENSIONS = DIMENSIONS["multi_turn"]
UNRATED_NOTE = "_unrated"
TOOL_OUTPUTS = "tool outputs"  # what the context guard cuts, as its note names them


@cache
def prompt_text(name: str) -> str:
    return (PROMPT_DIR / name).read_text(encoding="utf-8")


@cache
def dimension_definitions() -> dict[str, str]:
    """`## name` sections of prompts/travel_dimensions.txt."""
    return dimension_sections(prompt_text("travel_dimensions.txt"))


def _imported(prompts: PromptSet | None) -> PromptSet | None:
    """The prompt set when it is not the built-in one (whose files are read above)."""
    return None if prompts is None or prompts.builtin else prompts


def rubric_version(prompts: PromptSet | None = None) -> str:
    """The rubric judgements' prompt_version (+ `<name>@<digest>` of a non-built-in set)."""
    return prompts.version(RUBRIC_PROMPT_VERSION) if prompts else RUBRIC_PROMPT_VERSION


def meta_version(prompts: PromptSet | None = None) -> str:
    return prompts.version(META_PROMPT_VERSION) if prompts else META_PROMPT_VERSION


def dimensions_for(subset: str) -> list[str]:
    try:
        return DIMENSIONS[subset]
    except KeyError:
        raise ValueError(f"no TravelBench rubric for subset {subset!r}") from None


def _query_and_context(record: EpisodeRecord, task: Task | None) -> tuple[str, str]:
    if task is not None and isinstance(task.payload, TravelBenchTask):
        return task.payload.query, task.payload.context or "(none)"
    return first_user_text(record), "(none)"


def build_rubric_prompt(
    record: EpisodeRecord,
    task: Task | None,
    settings: JudgeSettings,
    tools: list[dict[str, Any]] | None = None,
    prompts: PromptSet | None = None,
) -> str:
    """The rubric prompt, the context guard on estimated tokens (the judge call counts with
    the judge server when it can)."""
    return _fit(rubric_parts(record, task, settings, tools, prompts), settings)[0]


def rubric_parts(
    record: EpisodeRecord,
    task: Task | None,
    settings: JudgeSettings,
    tools: list[dict[str, Any]] | None = None,
    prompts: PromptSet | None = None,
) -> Parts:
    """The rubric prompt as the context guard's `Parts` (its texts: the tool outputs)."""
    dims = dimensions_for(record.subset)
    imported = _imported(prompts)
    defs = imported.sections("judge_dimensions") if imported else dimension_definitions()
    query, context = _query_and_context(record, task)
    # placeholders, not ratings: an example that rates anything would anchor the judge
    example = json.dumps(
        {d: {"reasoning": f"<your reasoning on {d}>",
             "rating": "<" + " | ".join(RATING_LABELS) + ">"} for d in dims},
        ensure_ascii=False,
    )
    note = ""
    if "user_interaction" in dims:
        note = (", and whether follow-up questions were necessary, few, not replaceable by a "
                "tool call and on the user's intent")
    template = (imported.templates[f"judge_rubric_{record.subset}"] if imported
                else Template(prompt_text("travel_rubric.txt")))
    return _parts(template, record, settings, tools, context=context, query=query,
                  dimensions="\n\n".join(f"### {d}\n{defs.get(d, '')}" for d in dims),
                  interaction_note=note, example=example)


def _parts(template: Template, record: EpisodeRecord, settings: JudgeSettings,
           tools: list[dict[str, Any]] | None, **fields: str) -> Parts:
    """TEMPLATE filled with FIELDS, the tool schemas and the conversation, as the context
    guard's `Parts`: the conversation's tool outputs are what it may shorten."""
    rendered_tools = render_tools(tools)

    def render(turns: list[ChatMessage]) -> str:
        return template.safe_substitute(
            tools=rendered_tools,
            conversation=render_conversation(turns, settings.max_transcript_chars),
            **fields,
        )

    return tool_output_parts(render, conversation_turns(record))


def _fit(parts: Parts, settings: JudgeSettings) -> tuple[str, str]:
    return fit_parts(parts, settings.context_tokens, settings.sampling.max_tokens or 0,
                     TOOL_OUTPUTS)


def build_meta_prompt(
    record: EpisodeRecord,
    task: Task | None,
    rubric: Judgement,
    settings: JudgeSettings,
    tools: list[dict[str, Any]] | None = None,
    prompts: PromptSet | None = None,
) -> str:
    """The meta prompt, the context guard on estimated tokens. Dimensions the rubric judge did
    not rate are shown as N/A, as in the reference. `prompts`: the prompt set (None =
    built-in)."""
    return _fit(meta_parts(record, task, rubric, settings, tools, prompts), settings)[0]


def meta_parts(
    record: EpisodeRecord,
    task: Task | None,
    rubric: Judgement,
    settings: JudgeSettings,
    tools: list[dict[str, Any]] | None = None,
    prompts: PromptSet | None = None,
) -> Parts:
    """The meta prompt as the context guard's `Parts` (its texts: the tool outputs)."""
    query, context = _query_and_context(record, task)
    dims = DIMENSIONS.get(record.subset) or list(rubric.scores)
    ratings = "\n".join(
        f"- {d}: {RATING_NAMES.get(int(rubric.scores[d]), rubric.scores[d])}"
        if d in rubric.scores else f"- {d}: N/A (not rated)" for d in dims
    )
    reasoning = "\n".join(
        f"- {d}: {r}" for d, r in rubric.reasoning.items() if not d.startswith("_")
    ) or "(none)"
    imported = _imported(prompts)
    template = (imported.templates["judge_meta"] if imported
                else Template(prompt_text("travel_meta.txt")))
    return _parts(template, record, settings, tools, context=context, query=query,
                  ratings=ratings, reasoning=reasoning)


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
) -> Judgement:
    """Rubric-judge one single/multi-turn trajectory. Judge failures become a Judgement with
    `error`; infrastructure errors propagate. `prompts`: the prompt set (None = built-in)."""
    dims = dimensions_for(record.subset)
    base = {
        "unit": record.unit,
        "trajectory_hash": thash or trajectory_hash(record),
        "judge_model": model,
        "prompt_version": rubric_version(prompts),
        "kind": RUBRIC_KIND,
    }
    imported = _imported(prompts)
    system = imported.texts["judge_system"] if imported else ""
    prompt, guard = await fit_prompt(rubric_parts(record, task, settings, tools, prompts),
                                     settings, client, model, system=system, what=TOOL_OUTPUTS)
    notes = {CONTEXT_GUARD_NOTE: guard} if guard else {}
    try:
        verdict, attempts, raw = await call_judge(
            client, model, prompt,
            schema_name="travel_rubric", schema=rubric_schema(dims),
            parse=lambda text: parse_rubric(text, dims), settings=settings, system=system,
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
) -> Judgement:
    """Audit a successful rubric judgement; `score` = s / 5. A failed audit is recorded as a
    judge error, which scoring reads as s = 5 (weight 1), as the reference does."""
    if rubric.score is None:
        raise ValueError("the meta-judge needs a successful rubric judgement")
    base = {
        "unit": record.unit,
        "trajectory_hash": rubric.trajectory_hash,
        "judge_model": model,
        "prompt_version": meta_version(prompts),
        "kind": META_KIND,
    }
    imported = _imported(prompts)
    system = imported.texts["judge_meta_system"] if imported else ""
    prompt, guard = await fit_prompt(meta_parts(record, task, rubric, settings, tools, prompts),
                                     settings, client, model, system=system, what=TOOL_OUTPUTS)
    notes = {CONTEXT_GUARD_NOTE: guard} if guard else {}
    try:
        verdict, attempts, raw = await call_judge(
            client, model, prompt, schema_name="travel_meta", schema=META_SCHEMA,
            parse=parse_meta, settings=settings,
            retry_temperature=settings.meta_retry_temperature, system=system,
        )
    except JudgeFailed as exc:
        return Judgement(**base, score=None, reasoning=notes, error=exc.detail,
                         attempts=exc.attempts, raw=exc.raw, created_at=time.time())
    return Judgement(**base, score=verdict.rating / 5.0, scores={"meta": float(verdict.rating)},
                     reasoning={"meta": verdict.reasoning, **notes}, attempts=attempts, raw=raw,
                     created_at=time.time())
