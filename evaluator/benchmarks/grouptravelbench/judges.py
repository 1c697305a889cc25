"""GroupTravelBench's process-quality judge (five dimensions) and its meta-judge.

What they read and how it is laid out is the reference's (`judge_inputs.py`); the texts are the
run's prompt set (`judge_system` then `judge`; `meta_system` then `meta`). Answers are read as
the reference reads them (`judge_parse.py`, `options.judge_parser = "reference"`): the review
is tried up to `judge.max_attempts` times (10 in the paper profile; the 8th to 10th at 0.7), and
the meta-judge's up to the same number at its own temperature; what the reading rejects is a
failed attempt. With `judge_parser = "tolerant"`, or guided JSON (`judge.structured_output`),
the generic tolerant parser reads JSON or XML answers.

The `gtb_judge` Judgement keeps each dimension's 1..5 rating in `scores`, the reasoning per
dimension and the normalised mean (0..1) in `score`; the meta-judge (`gtb_meta`, when
`judge.meta_judge` is on, as in the paper) rates the review 1..5 and its `score` is s / 5;
scoring multiplies: S = 100 x mean((r - 1) / 4) x s / 5. A failed meta-judge leaves S
uncalibrated; a review that never parses is a judge error.

Crashed runs are rated 1 on every dimension (S = 0) without a call, as in the reference: with
`options.crash_rule = "failed_run"` every run that ended in an error (context overflow, agent
or user error), with "no_agent_message" only a chat where the agent never spoke. The options
that change a judgement are part of its version (`judge_version`), so judgements made under
other options are never reused. Nothing is cut unless `judge.context_tokens` is set: then the
context guard shortens the longest chat texts until the prompt and the answer budget fit.
With `options.judge_layout = "prefix"` the built-in judge and meta prompts put the sections
that hold no field of the task first (`prompting.prefix_layout`), so the judge calls of a run
share one prefix the engine caches; their versions get `+prefix`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from string import Template
from typing import Any

from evaluator.benchmarks.base import JudgeInput
from evaluator.judges.call import JudgeFailed, call_judge, fit_prompt
from evaluator.judges.parse import (
    META_SCHEMA,
    RATING_NAMES,
    JudgeParseError,
    parse_meta,
    parse_rubric,
    rubric_schema,
)
from evaluator.judges.transcript import CONTEXT_GUARD_NOTE
from evaluator.records import EpisodeRecord, Judgement

from .chat import AGENT
from .judge_inputs import judge_fields, judge_view, meta_review, render_view, view_texts, with_texts
from .judge_parse import rating_score, read_meta, read_review, review_scores, words_for
from .kinds import JUDGE_KIND, JUDGE_VERSION, META_KIND, META_VERSION
from .options import GroupOptions, options_of, prefix_judges
from .prompting import Texts, prefix_template
from .rubric import DIMENSION_KEYS, score_values

CRASHED_NOTE = "_crashed"
FAILED_RUNS = frozenset({"agent_error", "user_error", "context_overflow"})
"""Terminations of a run that ended in an error (the reference keeps no chat for those)."""
_CHINESE_LABELS = {1: "极差", 2: "较差", 3: "一般", 4: "较好", 5: "优秀"}


def options_suffix(options: Any) -> str:
    """What of the options changes a judge's judgement, as a version suffix ("" = paper's)."""
    o = options_of(options)
    out = "" if o.crash_rule == "failed_run" else f"+crash={o.crash_rule}"
    return out + ("" if o.judge_parser == "reference" else f"+parser={o.judge_parser}")


def _prefix(prompts: Any, options: Any) -> bool:
    """The prefix layout is used: asked for, and the prompts are the built-in ones (an
    imported set keeps its own order)."""
    return prefix_judges(options) and (prompts is None or prompts.builtin)


def _version(base: str, prompts: Any, options: Any) -> str:
    """`base` with the prompt set's label, the options' suffix and the layout's `+prefix`."""
    base = base if prompts is None else prompts.version(base)
    return base + options_suffix(options) + ("+prefix" if _prefix(prompts, options) else "")


def judge_version(prompts: Any, options: Any) -> str:
    return _version(JUDGE_VERSION, prompts, options)


def meta_version(prompts: Any, options: Any) -> str:
    return _version(META_VERSION, prompts, options)


def _template(inp: JudgeInput, role: str, texts: Texts) -> Template:
    """The judge role's template in the run's layout."""
    return prefix_template(role) if _prefix(inp.prompts, inp.options) else texts.templates[role]


def crashed(record: EpisodeRecord, options: Any = None) -> bool:
    """Rated as an empty conversation under the run's crash rule."""
    if options_of(options).crash_rule == "failed_run" and record.termination in FAILED_RUNS:
        return True
    return not any(e.get("role") == AGENT for e in record.extra.get("chat") or [])


def _tolerant(inp: JudgeInput) -> bool:
    return options_of(inp.options).judge_parser == "tolerant" or inp.settings.structured_output


def judge_prompt(inp: JudgeInput, conversation: str) -> str:
    texts = Texts.of(inp.prompts)
    return _template(inp, "judge", texts).substitute(
        conversation=conversation, **judge_fields(inp.record, inp.task, texts))


def first_review(inp: JudgeInput, judged: Judgement) -> tuple[str, str]:
    """The first review as the meta-judge reads it: (ratings, reasoning)."""
    texts = Texts.of(inp.prompts)
    if not _tolerant(inp):
        words = words_for(texts.builtin)
        parsed = read_review(judged.raw, DIMENSION_KEYS, words) or {}
        return meta_review(parsed, review_scores(parsed, DIMENSION_KEYS, words),
                           DIMENSION_KEYS, texts)
    names = RATING_NAMES if texts.builtin else _CHINESE_LABELS
    scores = {d: int(judged.scores[d]) if d in judged.scores else None for d in DIMENSION_KEYS}
    parsed = {d: {"reasoning": judged.reasoning.get(d, ""),
                  "rating": names.get(scores[d], "") if scores[d] else ""}
              for d in DIMENSION_KEYS}
    return meta_review(parsed, scores, DIMENSION_KEYS, texts)


def meta_prompt(inp: JudgeInput, judged: Judgement, conversation: str) -> str:
    texts = Texts.of(inp.prompts)
    ratings, reasoning = first_review(inp, judged)
    return _template(inp, "meta", texts).substitute(
        conversation=conversation, ratings=ratings, reasoning=reasoning,
        **judge_fields(inp.record, inp.task, texts))


async def fitted(inp: JudgeInput, build: Callable[[str], str], system: str) -> tuple[str, str]:
    """`build(conversation)`, the chat shortened by the context guard when
    `judge.context_tokens` is set and the prompt would not fit: (prompt, guard note or "")."""
    texts = Texts.of(inp.prompts)
    view = judge_view(inp.record.extra.get("chat") or [], texts)
    return await fit_prompt(
        (lambda parts: build(render_view(with_texts(view, parts), texts)), view_texts(view)),
        inp.settings, inp.client, inp.model, system=system)


def _review_reader(inp: JudgeInput) -> Callable[[str], dict[str, Any]]:
    """The judge's answer -> {dim: (rating 1..5, reasoning)} for the rated dimensions."""
    if _tolerant(inp):
        def tolerant(text: str) -> dict[str, Any]:
            verdict = parse_rubric(text, list(DIMENSION_KEYS))
            return {k: (v, verdict.reasoning.get(k, "")) for k, v in verdict.ratings.items()}
        return tolerant
    words = words_for(Texts.of(inp.prompts).builtin)

    def reference(text: str) -> dict[str, Any]:
        parsed = read_review(text, DIMENSION_KEYS, words)
        scores = review_scores(parsed, DIMENSION_KEYS, words)
        if not parsed or not any(v is not None for v in scores.values()):
            raise JudgeParseError("no dimension rated (reference reading)")
        return {d: (s, parsed[d]["reasoning"]) for d, s in scores.items() if s is not None}
    return reference


def _meta_reader(inp: JudgeInput) -> Callable[[str], tuple[int, str]]:
    if _tolerant(inp):
        def tolerant(text: str) -> tuple[int, str]:
            verdict = parse_meta(text)
            return verdict.rating, verdict.reasoning
        return tolerant
    words = words_for(Texts.of(inp.prompts).builtin)

    def reference(text: str) -> tuple[int, str]:
        parsed = read_meta(text)
        score = rating_score(parsed["rating"], words) if parsed else None
        if parsed is None or score is None:
            raise JudgeParseError("no meta rating (reference reading)")
        return score, parsed["reasoning"]
    return reference


def _base(inp: JudgeInput, version: str, kind: str) -> dict[str, Any]:
    return {"unit": inp.record.unit, "trajectory_hash": inp.thash, "judge_model": inp.model,
            "prompt_version": version, "kind": kind}


async def run_judge(inp: JudgeInput) -> Judgement:
    record, options = inp.record, options_of(inp.options)
    base = _base(inp, judge_version(inp.prompts, options), JUDGE_KIND)
    if crashed(record, options):
        why = (f"the run ended in {record.termination}" if record.termination in FAILED_RUNS
               and options.crash_rule == "failed_run" else "no agent message")
        return Judgement(**base, score=0.0, scores={k: 1.0 for k in DIMENSION_KEYS},
                         reasoning={CRASHED_NOTE: f"{why}: rated 1 everywhere, as an empty "
                                                  "conversation"}, created_at=time.time())
    texts = Texts.of(inp.prompts)
    system = texts.text("judge_system")
    prompt, guard = await fitted(inp, lambda chat: judge_prompt(inp, chat), system)
    notes = {CONTEXT_GUARD_NOTE: guard} if guard else {}
    tolerant = _tolerant(inp)
    try:
        verdict, attempts, raw = await call_judge(
            inp.client, inp.model, prompt, schema_name=JUDGE_KIND,
            schema=rubric_schema(DIMENSION_KEYS) if tolerant else {},
            parse=_review_reader(inp), settings=inp.settings, system=system)
    except JudgeFailed as exc:
        return Judgement(**base, score=None, error=exc.detail, attempts=exc.attempts,
                         raw=exc.raw, reasoning=notes, created_at=time.time())
    scores = {k: float(v[0]) for k, v in verdict.items()}
    rated = score_values(scores)
    assert rated is not None  # the readers return at least one rating
    return Judgement(**base, score=rated.normalised_average / 100, scores=scores,
                     reasoning={**{k: v[1] for k, v in verdict.items()}, **notes},
                     attempts=attempts, raw=raw, created_at=time.time())


async def run_meta(inp: JudgeInput) -> Judgement:
    judged = inp.audited
    if judged is None or judged.score is None:
        raise ValueError("the meta-judge needs a successful judgement to review")
    base = _base(inp, meta_version(inp.prompts, inp.options), META_KIND)
    if CRASHED_NOTE in judged.reasoning:  # the reference reviews no crashed run
        return Judgement(**base, score=None, reasoning={CRASHED_NOTE: "not reviewed"},
                         attempts=0, created_at=time.time())
    texts = Texts.of(inp.prompts)
    system = texts.text("meta_system")
    prompt, guard = await fitted(inp, lambda chat: meta_prompt(inp, judged, chat), system)
    notes = {CONTEXT_GUARD_NOTE: guard} if guard else {}
    tolerant = _tolerant(inp)
    try:
        (rating, reasoning), attempts, raw = await call_judge(
            inp.client, inp.model, prompt, schema_name=META_KIND,
            schema=META_SCHEMA if tolerant else {}, parse=_meta_reader(inp),
            settings=inp.settings, system=system,
            retry_temperature=inp.settings.meta_retry_temperature)
    except JudgeFailed as exc:
        return Judgement(**base, score=None, error=exc.detail, attempts=exc.attempts,
                         raw=exc.raw, reasoning=notes, created_at=time.time())
    return Judgement(**base, score=rating / 5.0, scores={"meta": float(rating)},
                     reasoning={"meta": reasoning, **notes}, attempts=attempts, raw=raw,
                     created_at=time.time())


__all__ = ["JUDGE_KIND", "META_KIND", "GroupOptions", "run_judge", "run_meta"]
