"""Scoring one agent answer (paper 3.5): the 4 feasibility checks, the 8 soundness checks and
the task's user-constraint rubrics, aggregated as

    Overall_strict = 1(F_feas = 0 and F_sound = 0 and F_user = 0)
    Overall_loose  = 1(F_feas = 0 and F_sound <= 2 and F_user <= 1)

where F_feas, F_sound and F_user count the *violated* feasibility checks, soundness checks and
user constraints (a check with several findings counts once; the findings are kept per check).
An answer whose plan cannot be parsed violates every check and every constraint.
"""

from __future__ import annotations

import msgspec

from . import feasibility, rubrics, soundness
from .common import Violation, WorldView
from .plan import ParsedPlan, TripPlan, parse_plan, with_previous
from .task import EvalTask

LOOSE_MAX_SOUND = 2
LOOSE_MAX_USER = 1


class RubricResult(msgspec.Struct, omit_defaults=True):
    type: str
    passed: bool
    params: dict = msgspec.field(default_factory=dict)
    error: str | None = None


class Evaluation(msgspec.Struct, omit_defaults=True):
    """The judgement of one answer; `feasibility`/`soundness` map every check to its number of
    findings (0 = passed)."""

    parsed: bool
    feasibility: dict[str, int]
    soundness: dict[str, int]
    rubrics: list[RubricResult]
    f_feas: int
    f_sound: int
    f_user: int
    strict: bool
    loose: bool
    violations: list[Violation] = msgspec.field(default_factory=list)
    parse_error: str | None = None


def overall(f_feas: int, f_sound: int, f_user: int) -> tuple[bool, bool]:
    """(Overall_strict, Overall_loose) from the three violation counts."""
    strict = f_feas == 0 and f_sound == 0 and f_user == 0
    loose = f_feas == 0 and f_sound <= LOOSE_MAX_SOUND and f_user <= LOOSE_MAX_USER
    return strict, loose


def _judge(parsed: ParsedPlan, task: EvalTask, world: WorldView) -> Evaluation:
    specs = list(task.rubrics)
    if parsed.plan is None:
        message = parsed.error or "no plan"
        feas = {name: 1 for name in feasibility.CHECKS}
        sound = {name: 1 for name in soundness.CHECKS}
        results = [RubricResult(rubrics.definition(e).name, False, msgspec.to_builtins(e),
                                "plan not parsed") for e in specs]
        violations = [Violation(name, message) for name in (*feas, *sound)]
        return Evaluation(False, feas, sound, results, len(feas), len(sound), len(results),
                          False, False, violations, message)
    violations: list[Violation] = []
    counts: list[dict[str, int]] = []
    for table in (feasibility.CHECKS, soundness.CHECKS):
        found = {}
        for name, check in table.items():
            hits = check(parsed, world, task)
            found[name] = len(hits)
            violations += hits
        counts.append(found)
    results = []
    for e in specs:
        name = rubrics.definition(e).name
        try:
            passed, error = rubrics.validate(e, parsed.plan, world, task), None
        except (KeyError, TypeError, ValueError) as exc:  # a plan too broken for the rubric
            passed, error = False, f"{type(exc).__name__}: {exc}"
        results.append(RubricResult(name, passed, msgspec.to_builtins(e), error))
    f_feas = sum(1 for n in counts[0].values() if n)
    f_sound = sum(1 for n in counts[1].values() if n)
    f_user = sum(1 for r in results if not r.passed)
    strict, loose = overall(f_feas, f_sound, f_user)
    return Evaluation(True, counts[0], counts[1], results, f_feas, f_sound, f_user, strict,
                      loose, violations)


def evaluate(plan_text: str, task: EvalTask, world: WorldView,
             previous: TripPlan | None = None) -> Evaluation:
    """Judge the agent's answer `plan_text` for `task` against `world`. With `previous` (the
    plan standing before this turn), an answer with an empty `daily_schedule` -- "no change"
    in the agent's rules (F.1 VII) -- is judged as the previous days under its own header."""
    return _judge(with_previous(parse_plan(plan_text), previous), task, world)
