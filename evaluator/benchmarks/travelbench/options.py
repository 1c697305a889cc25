"""TravelBench's own settings, the run config's `[options]` table.

The defaults are the project's behaviour (what a run gets without a profile, and what old run
directories were made with); the `paper` profile sets the reference's values, and a run that
changes one lists it as a deviation (docs/prompts.md, docs/judges.md).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

RENDERINGS = ("project", "reference")
JUDGE_ANSWERS = ("tolerant", "reference")


class TravelBenchOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """TravelBench's options.

    rendering: how the texts every model receives are put together from the prompt set and
        the trajectory: "reference" (the `paper` profile) builds them as the TravelBench
        reference code does, so that with an imported prompt set the message lists sent to
        the agent, the user simulator, the tool simulator and both judges are byte-identical
        to the reference's (prompts keep their final newline and the task's context as it
        is; assistant messages without text carry no content; tool messages carry the tool's
        name; earlier tool-call arguments are re-serialised as the reference does; the judges
        see the tool list as indented JSON and the conversation and meta-judge inputs in the
        reference's layout; the tool simulator sees the schema as the reference renders it;
        unparseable arguments are validated as {"raw_arguments": text}). "project": this
        project's own layout (numbered transcript, tool list as name/description lines,
        "(none)" for an empty context, English rating labels in the meta-judge input).
    judge_answers: how judge answers are read: "reference" (the `paper` profile) parses them
        as the reference does (XML with its tag repair, the exact rating words 极差..优秀;
        anything else is a failed attempt, retried as the reference retries); "tolerant"
        reads JSON or XML, English labels, numbers and sloppy markup.
    judge_layout: where the built-in rubric and meta prompts show the tool list: "reference"
        (the default, the reference's order: after the task's context and request) or
        "prefix" (the `smoke` profile: right after the instructions, so every judge call of a
        run shares the instructions and the tool list as one prefix the engine caches, and
        prefills only the task's material; judgement versions get `+prefix`). An imported
        prompt set keeps its own order either way.
    """

    rendering: Literal["project", "reference"] = "project"
    judge_answers: Literal["tolerant", "reference"] = "tolerant"
    judge_layout: Literal["reference", "prefix"] = "reference"


DEFAULT = TravelBenchOptions()


def of(options: Any) -> TravelBenchOptions:
    """The run's TravelBench options (None, e.g. a caller without options: the defaults)."""
    return options if isinstance(options, TravelBenchOptions) else DEFAULT


def reference_rendering(options: Any) -> bool:
    return of(options).rendering == "reference"


def reference_answers(options: Any) -> bool:
    return of(options).judge_answers == "reference"


def prefix_judges(options: Any) -> bool:
    return of(options).judge_layout == "prefix"
