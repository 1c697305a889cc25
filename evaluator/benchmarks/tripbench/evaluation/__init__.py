"""TRIP-Bench rule evaluation (paper 3.5, B.2, B.4): pure functions over an agent's answer, the
task and the world database; no model calls. See docs/tripbench_evaluation.md.

    evaluate(plan_text, task, world) -> Evaluation     scoring.py
    parse_plan(text) -> ParsedPlan                      plan.py
    feasibility.CHECKS / soundness.CHECKS               name -> check(parsed, world, task)
    rubrics.RUBRICS                                     type -> RubricDef (G, V(e, i), V(e, plan))
"""

from .plan import ParsedPlan, TripPlan, parse_plan
from .scoring import Evaluation, evaluate, overall
from .task import EvalTask, Stay

__all__ = ["EvalTask", "Evaluation", "ParsedPlan", "Stay", "TripPlan", "evaluate", "overall",
           "parse_plan"]
