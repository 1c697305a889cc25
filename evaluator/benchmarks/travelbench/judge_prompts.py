"""The TravelBench judges' prompts: the rubric prompt and the meta prompt, filled from the run's
prompt set (built-in or imported) and laid out as the run's `options.rendering` says.

"project" (this project's layout): the numbered transcript and tool lines of
`evaluator.judges.transcript`, "(none)" for an empty context, the first evaluation's ratings
as English labels. "reference": judge_render.py's layout of the reference (the conversation,
the tool list as JSON for the rubric judge and as Python renders it for the meta-judge, the
context as it is, the first evaluation's scores, average and rating texts). Both are built as
the context guard's `Parts` (the texts it may cut: the tool outputs).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from string import Template
from typing import TYPE_CHECKING, Any

from backends.types import ChatMessage
from bench_data.types import Task
from evaluator.benchmarks.travelbench.data import TravelBenchTask
from evaluator.judges.parse import RATING_LABELS, RATING_NAMES
from evaluator.judges.settings import JudgeSettings
from evaluator.judges.transcript import (
    Parts,
    conversation_turns,
    first_user_text,
    fit_parts,
    render_conversation,
    render_tools,
    tool_output_parts,
)
from evaluator.prompt_sets import dimension_sections
from evaluator.records import EpisodeRecord, Judgement

from . import judge_answers, judge_render
from .answer_formats import meta_format, meta_scale, rubric_format
from .options import prefix_judges, reference_answers, reference_rendering
from .prompting import JUDGE_DIMENSIONS, PROMPT_DIR

if TYPE_CHECKING:
    from evaluator.prompt_sets import PromptSet

TOOL_OUTPUTS = "tool outputs"  # what the context guard cuts, as its note names them


@cache
def prompt_text(name: str) -> str:
    return (PROMPT_DIR / name).read_text(encoding="utf-8")


@cache
def dimension_definitions() -> dict[str, str]:
    """`## name` sections of prompts/travel_dimensions.txt."""
    return dimension_sections(prompt_text("travel_dimensions.txt"))


TOOLS_SECTION = "## Available tools\n${tools}\n\n"
"""The tool list's section of the built-in judge prompts, where the reference has it."""
TOOLS_FIRST = "# Available tools\nThe tools the assistant could call:\n${tools}\n\n"
"""The same list in the prefix layout: before the prompt's first top-level heading."""


@cache
def builtin_template(name: str, prefix: bool) -> Template:
    """The built-in judge prompt `<name>.txt`: as written (the tool list after the task's
    request, the reference's order) or, in the prefix layout (`options.judge_layout`), with
    its tool-list section moved before its first top-level heading, right after the
    instructions, so that every judge call of a run shares one prefix."""
    text = prompt_text(f"{name}.txt")
    if prefix:
        if TOOLS_SECTION not in text:
            raise ValueError(f"{PROMPT_DIR / name}.txt: no `{TOOLS_SECTION.strip()}` section")
        text = text.replace(TOOLS_SECTION, "", 1)
        at = text.index("\n# ") + 1
        text = text[:at] + TOOLS_FIRST + text[at:]
    return Template(text)


def imported(prompts: PromptSet | None) -> PromptSet | None:
    """The prompt set when it is not the built-in one (whose files are read above)."""
    return None if prompts is None or prompts.builtin else prompts


def dimensions_for(subset: str) -> list[str]:
    try:
        return JUDGE_DIMENSIONS[subset]
    except KeyError:
        raise ValueError(f"no TravelBench rubric for subset {subset!r}") from None


def query_and_context(record: EpisodeRecord, task: Task | None,
                      reference: bool = False) -> tuple[str, str]:
    """The task's query and context; the reference shows the context as it is ("" when
    there is none), this project's layout "(none)" for an empty one."""
    empty = "" if reference else "(none)"
    if task is not None and isinstance(task.payload, TravelBenchTask):
        return task.payload.query, task.payload.context or empty
    return first_user_text(record), empty


def judge_tools(tools: list[dict[str, Any]] | None,
                prompts: PromptSet | None) -> list[dict[str, Any]] | None:
    """The tool list the judges are shown: the prompt set's `judge_tools` (the reference's own
    copy, when imported), else the agent's."""
    ps = imported(prompts)
    text = ps.templates["judge_tools"].substitute() if ps else ""
    return json.loads(text) if text.strip() else tools


def fit(parts: Parts, settings: JudgeSettings) -> tuple[str, str]:
    return fit_parts(parts, settings.context_tokens, settings.sampling.max_tokens or 0,
                     TOOL_OUTPUTS)


def rubric_parts(record: EpisodeRecord, task: Task | None, settings: JudgeSettings,
                 tools: list[dict[str, Any]] | None = None, prompts: PromptSet | None = None,
                 options: Any = None) -> Parts:
    """The rubric prompt as the context guard's `Parts` (its texts: the tool outputs)."""
    dims = dimensions_for(record.subset)
    ps = imported(prompts)
    defs = ps.sections("judge_dimensions") if ps else dimension_definitions()
    reference = reference_rendering(options)
    query, context = query_and_context(record, task, reference)
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
    template = (ps.templates[f"judge_rubric_{record.subset}"] if ps
                else builtin_template("travel_rubric", prefix_judges(options)))
    shown = judge_tools(tools, prompts)
    return _parts(template, record, settings, reference,
                  judge_render.tools_json(shown) if reference else render_tools(shown),
                  context=context, query=query,
                  dimensions="\n\n".join(f"### {d}\n{defs.get(d, '')}" for d in dims),
                  interaction_note=note, example=example,
                  answer_format=rubric_format(dims, reference_answers(options)))


def _parts(template: Template, record: EpisodeRecord, settings: JudgeSettings, reference: bool,
           tools_text: str, **fields: str) -> Parts:
    """TEMPLATE filled with FIELDS, the tool list and the conversation, as the context guard's
    `Parts`: the conversation's tool outputs are what it may shorten."""
    names = judge_render.tool_names(record)
    convert: Callable[[list[ChatMessage]], str] = (
        (lambda turns: judge_render.conversation(turns, names)) if reference else
        (lambda turns: render_conversation(turns, settings.max_transcript_chars)))

    def render(turns: list[ChatMessage]) -> str:
        return template.safe_substitute(tools=tools_text, conversation=convert(turns), **fields)

    return tool_output_parts(render, conversation_turns(record))


def build_rubric_prompt(record: EpisodeRecord, task: Task | None, settings: JudgeSettings,
                        tools: list[dict[str, Any]] | None = None,
                        prompts: PromptSet | None = None, options: Any = None) -> str:
    """The rubric prompt, the context guard on estimated tokens (the judge call counts with
    the judge server when it can)."""
    return fit(rubric_parts(record, task, settings, tools, prompts, options), settings)[0]


def first_evaluation(rubric: Judgement, dims: list[str]
                     ) -> tuple[dict[str, int | None], float | None,
                                dict[str, judge_answers.Dimension]]:
    """The rubric judgement as the reference hands it to its meta-judge: per dimension the
    score (None when unrated), their mean, and the rating and reasoning texts of the answer.
    The answer is read again with the reference's reader; one it cannot read (a judgement read
    by the tolerant parser) is shown from the judgement: its ratings as the scale's words."""
    parsed = judge_answers.read_rubric(rubric.raw, dims)
    if parsed is not None:
        scores, average = judge_answers.rubric_scores(parsed, dims)
        if average is not None:
            return scores, average, parsed
    words = {v: k for k, v in judge_answers.RATING_WORDS.items()}
    scores = {d: int(rubric.scores[d]) if d in rubric.scores else None for d in dims}
    values = [s for s in scores.values() if s is not None]
    texts = {d: judge_answers.Dimension(rubric.reasoning.get(d, ""), words.get(s, ""))
             for d, s in scores.items() if s is not None}
    return scores, (sum(values) / len(values) if values else None), texts


def meta_parts(record: EpisodeRecord, task: Task | None, rubric: Judgement,
               settings: JudgeSettings, tools: list[dict[str, Any]] | None = None,
               prompts: PromptSet | None = None, options: Any = None) -> Parts:
    """The meta prompt as the context guard's `Parts` (its texts: the tool outputs)."""
    reference = reference_rendering(options)
    query, context = query_and_context(record, task, reference)
    dims = JUDGE_DIMENSIONS.get(record.subset) or list(rubric.scores)
    if reference:
        scores, average, texts = first_evaluation(rubric, dims)
        ratings = judge_render.meta_scores(dims, scores, average)
        reasoning = judge_render.meta_reasoning(dims, texts)
    else:
        ratings = "\n".join(
            f"- {d}: {RATING_NAMES.get(int(rubric.scores[d]), rubric.scores[d])}"
            if d in rubric.scores else f"- {d}: N/A (not rated)" for d in dims)
        reasoning = "\n".join(
            f"- {d}: {r}" for d, r in rubric.reasoning.items() if not d.startswith("_")
        ) or "(none)"
    ps = imported(prompts)
    template = (ps.templates["judge_meta"] if ps
                else builtin_template("travel_meta", prefix_judges(options)))
    shown = judge_tools(tools, prompts)
    answers = reference_answers(options)
    return _parts(template, record, settings, reference,
                  judge_render.tools_python(shown) if reference else render_tools(shown),
                  context=context, query=query, ratings=ratings, reasoning=reasoning,
                  answer_format=meta_format(answers), scale_note=meta_scale(answers))


def build_meta_prompt(record: EpisodeRecord, task: Task | None, rubric: Judgement,
                      settings: JudgeSettings, tools: list[dict[str, Any]] | None = None,
                      prompts: PromptSet | None = None, options: Any = None) -> str:
    """The meta prompt, the context guard on estimated tokens. Dimensions the rubric judge did
    not rate are shown as N/A (None in the reference's layout), as in the reference.
    `prompts`: the prompt set (None = built-in)."""
    return fit(meta_parts(record, task, rubric, settings, tools, prompts, options),
               settings)[0]
