"""GroupTravelBench's own settings, the run config's `[options]` table.

The defaults are the reference's behaviour, which is this project's behaviour too, except
`rendering`, whose default "project" is what runs were made with before it existed; the paper
profile names the reference's value of each, so a run that changes one lists it as a deviation.
The POI table's path is not a profile field (any path of the reference's table is the paper's
table); under the `paper` profile a run needs the table, and `poi_table = "none"` (running
without it) is recorded as a deviation ("GU/GF/PV without POI table").
"""

from __future__ import annotations

import msgspec

POI_NONE = "none"
POI_FILE = ("poi2category", "all_poi_by_city.json")
"""Where the reference keeps its POI table, relative to its data: also looked for beside the
task file when `poi_table` is empty."""

CRASH_RULES = ("failed_run", "no_agent_message")
JUDGE_AVERAGES = ("tasks", "units")
SUMMARY_STYLES = ("mediation", "table")
JUDGE_PARSERS = ("reference", "tolerant")
RENDERINGS = ("project", "reference")
JUDGE_LAYOUTS = ("reference", "prefix")


class GroupOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """GroupTravelBench's options.

    poi_table: the reference's POI table (`all_poi_by_city.json`: each place's category and
        opening hours), which GU, GF and PV read for restaurants, category preferences, hotels
        and opening hours. "" = `poi2category/all_poi_by_city.json` beside the task file
        (`agentsweep run --poi-table PATH` sets a path); "none" = score without it (under the
        paper profile a deviation: "GU/GF/PV without POI table"; a paper run that finds no
        table refuses to start).
    crash_rule: which runs the LLM judge rates as an empty conversation (every dimension 1,
        S 0, no judge call): "failed_run" (the reference: a run that ended in an error,
        context overflow included) or "no_agent_message" (only a chat where the agent never
        spoke; a failed run's chat is judged as it is).
    judge_average: how the report averages the judge score S: "tasks" (the reference: trials
        averaged per task, a task the judge never rated counts 0, then tasks) or "units" (the
        units the judge rated).
    summary_style: what the agent's opening and periodic summaries ask for: "mediation" (the
        reference: mediate a conflict, ask one @-question, or give the plan, in natural
        language) or "table" (post the group's preference table as JSON in the chat).
    judge_parser: how the judge's and meta-judge's answers are read: "reference" (the
        reference's XML reading; what it rejects is a failed attempt) or "tolerant" (JSON or
        XML, English or Chinese rating words; also used whenever judge.structured_output is
        on, since guided decoding answers JSON).
    rendering: what of the reference's requests and tools is reproduced beyond the message
        texts and layout (which are the reference's under either value): "reference" (the
        paper profile) sends the agent's requests in the reference client's shape (a tool
        call with "type": "function" and its arguments always, empty `reasoning_content` and
        `reasoning` on an assistant message with tool calls, a tool message's keys in its
        order), gives the agent the tool list of an imported prompt set (the reference's
        registry: Chinese descriptions), shows the tool simulator the schema of the set's
        copy (`TOOLS_SCHEMAS`) as Python renders a dict, lets an argument named like a
        parameter of the reference's dispatcher (`name`) fail as it fails there, and marks a
        failed simulation as no tool error, as the reference does; "project" (the default,
        what runs were made with before) sends the generic request shape, the data's tool
        list (the bundled English schemas unless a tools.json is beside the tasks) and shows
        the simulator that list's schema as sorted JSON.
    judge_layout: the order of the built-in judge and meta-judge prompts: "reference" (the
        default: the task's material and the chat before the rules and the rating standards,
        the reference's order) or "prefix" (the sections that hold no field of the task, the
        instructions, rules, standards, output format and example, first, the task's material
        and the chat last, so every judge call of a run shares ~4,500 tokens the engine caches
        and prefills only its own task; judgement versions get `+prefix`). An imported prompt
        set keeps its own order either way.
    """

    poi_table: str = ""
    crash_rule: str = "failed_run"
    judge_average: str = "tasks"
    summary_style: str = "mediation"
    judge_parser: str = "reference"
    rendering: str = "project"
    judge_layout: str = "reference"

    def __post_init__(self) -> None:
        for name, allowed in (("crash_rule", CRASH_RULES), ("judge_average", JUDGE_AVERAGES),
                              ("summary_style", SUMMARY_STYLES),
                              ("judge_parser", JUDGE_PARSERS), ("rendering", RENDERINGS),
                              ("judge_layout", JUDGE_LAYOUTS)):
            value = getattr(self, name)
            if value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")


DEFAULT_OPTIONS = GroupOptions()


def options_of(value: object) -> GroupOptions:
    """The run's GroupOptions (the defaults when a caller passes none)."""
    return value if isinstance(value, GroupOptions) else DEFAULT_OPTIONS


def reference_rendering(value: object) -> bool:
    return options_of(value).rendering == "reference"


def prefix_judges(value: object) -> bool:
    return options_of(value).judge_layout == "prefix"
