"""Toybench's scoring and report section.

A unit scores 1 when the rule check found the expected number in the final answer; the LLM
grader's verdict is kept beside it (`dims["graded"]`). A subset's score is its accuracy (the
mean unit score, the default). The report section adds one table: accuracy and the grader's
agreement with the rule check, per run.
"""

from __future__ import annotations

import msgspec

from evaluator.benchmarks.base import JudgementLookup, ReportSection, ScoreContext
from evaluator.judges.transcript import trajectory_hash
from evaluator.records import EpisodeRecord, UnitScore
from evaluator.report.tables import Table, num
from evaluator.scoring import base_unit_score

from .judges import EXACT, GRADE, GRADER_VERSION


def score(record: EpisodeRecord, judgements: JudgementLookup, ctx: ScoreContext
          ) -> UnitScore | None:
    thash = trajectory_hash(record)
    unit = base_unit_score(record)
    rule = judgements.get(thash, EXACT, "toy-exact-v1")
    if rule is None:
        unit.judge_error = "not judged"
        return unit
    unit.score = rule.score
    unit.success = rule.score == 1.0
    graded = judgements.get(thash, GRADE, GRADER_VERSION)
    if graded is not None and graded.score is not None:
        unit.dims["graded"] = graded.score
        weight = ctx.options.grader_weight if ctx.options is not None else 0.0
        if weight and rule.score is not None:
            unit.score = (1 - weight) * rule.score + weight * graded.score
    return unit


class ToySummary(msgspec.Struct):
    units: int
    accuracy: float | None
    grader_agrees: float | None


def summarize(units: list[UnitScore]) -> ToySummary | None:
    scored = [u for u in units if u.score is not None]
    both = [u for u in scored if "graded" in u.dims]
    return ToySummary(
        units=len(units),
        accuracy=sum(u.score for u in scored) / len(scored) if scored else None,  # type: ignore[misc]
        grader_agrees=(sum(u.dims["graded"] == u.score for u in both) / len(both)
                       if both else None))


def tables(runs: list[tuple[str, ToySummary | None]]) -> list[Table]:
    t = Table("Toybench", ["run", "units", "accuracy", "grader agrees"])
    for label, s in runs:
        if s is not None:
            t.rows.append([label, str(s.units), num(s.accuracy), num(s.grader_agrees)])
    return [t] if t.rows else []


def judge_lines(s: ToySummary) -> list[str]:
    return [f"  toybench     accuracy {num(s.accuracy)} over {s.units} units"]


SECTION = ReportSection(summarize=summarize, tables=tables, judge_lines=judge_lines)
