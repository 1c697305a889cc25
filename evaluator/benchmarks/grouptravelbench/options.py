"""GroupTravelBench's own settings, the run config's `[options]` table.

The defaults are the reference's behaviour, which is this project's behaviour too; the paper
profile names the same values, so a run that changes one lists it as a deviation. The POI
table's path is not a profile field (any path of the reference's table is the paper's table);
under the `paper` profile a run needs the table, and `poi_table = "none"` (running without it)
is recorded as a deviation ("GU/GF/PV without POI table").
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
    """

    poi_table: str = ""
    crash_rule: str = "failed_run"
    judge_average: str = "tasks"
    summary_style: str = "mediation"
    judge_parser: str = "reference"

    def __post_init__(self) -> None:
        for name, allowed in (("crash_rule", CRASH_RULES), ("judge_average", JUDGE_AVERAGES),
                              ("summary_style", SUMMARY_STYLES),
                              ("judge_parser", JUDGE_PARSERS)):
            value = getattr(self, name)
            if value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")


DEFAULT_OPTIONS = GroupOptions()


def options_of(value: object) -> GroupOptions:
    """The run's GroupOptions (the defaults when a caller passes none)."""
    return value if isinstance(value, GroupOptions) else DEFAULT_OPTIONS
