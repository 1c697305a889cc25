"""TRIP-Bench's rule judge and unit scores (paper 3.5); the report section is report.py.

The judge (`tripbench_rules`, no model) evaluates the record's final plan
(`extra["final_plan"]`, else the final answer) with the evaluation package's `evaluate`
against the final requirements: the trip and active preferences of the dialogue graph's last
node. An episode that did not end "completed" (it stopped before the dialogue's end) scores
0, strict and loose; its counts are still those of its final plan. `Judgement.score` is
Overall_strict; `scores` holds strict, loose, finished, F_feas, F_sound, F_user, every check's
finding count (`check:<name>`) and every rubric's outcome (`rubric:<i>:<TYPE>`). Turn-level
results (the paper's per-turn evaluation): each user turn's answer against the node it was
played at (as the episode logged it; infeasible nodes left out), as the means `turn_strict` /
`turn_loose` over `turns_judged` turns.

A unit's score is Overall_strict (success = 1); `dims` holds `loose`, `finished`, the
turn-level means, the three F counts, the findings per check (`viol:<check>`), and the
episode's user turns, tool calls and largest agent prompt (`turns`, `tool_calls`,
`context_tokens`); `labels` its difficulty, hard set and split.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import msgspec

from bench_data.types import Task
from evaluator.benchmarks.base import (
    JudgeInput,
    JudgementLookup,
    ScoreContext,
)
from evaluator.benchmarks.tripbench.data import (
    DIFFICULTY,
    HARD_SET,
    SPLIT,
    VIOL,
    TripTask,
    TurnNode,
    split_of,
)
from evaluator.judges.settings import JudgeSettings
from evaluator.judges.transcript import trajectory_hash
from evaluator.records import EpisodeRecord, Judgement, UnitScore
from evaluator.scoring import base_unit_score

from .evaluation import EvalTask, evaluate, parse_plan
from .evaluation.rubrics import decode_spec
from .settings import RULES, RULES_VERSION
from .synthesis.meta import to_trip
from .world.db import World, open_world

CHECK = "check:"
CRASHED = ("agent_error", "user_error")


def eval_task(task: TripTask, node: TurnNode, active: list[str] | None = None) -> EvalTask:
    """The evaluation's task at a dialogue node: its trip and (by default) its active
    preferences."""
    trip = to_trip(task.trips[node.trip])
    ids = node.active if active is None else active
    return EvalTask(task_id=task.task_id, origin=trip.origin, stays=trip.stays,
                    start_date=trip.start_date, end_date=trip.end_date,
                    number_of_people=trip.number_of_people,
                    rubrics=[decode_spec(task.preferences[p].rubric) for p in ids])


_WORLDS: dict[Path, World] = {}
_LOCK = threading.Lock()


def world_of(task: Task) -> World:
    """The task's world (opened once per process; the environment factory's resolution)."""
    from .environment import ENVIRONMENT

    path = ENVIRONMENT.world_path(task)
    with _LOCK:
        if path not in _WORLDS:
            _WORLDS[path] = open_world(path)
        return _WORLDS[path]


def rules(inp: JudgeInput) -> Judgement:
    record = inp.record

    def judgement(score: float | None, scores: dict[str, float], reasoning: dict[str, str],
                  error: str | None = None) -> Judgement:
        return Judgement(unit=record.unit, trajectory_hash=inp.thash, judge_model="rule",
                         prompt_version=RULES_VERSION, kind=RULES, score=score, scores=scores,
                         reasoning=reasoning, error=error, created_at=time.time())

    if inp.task is None:
        return judgement(None, {}, {}, "the record's task is not in the data")
    task = inp.task.payload_as(TripTask)
    reached = int(record.extra.get("turn_reached") or 1)
    node = task.turns[-1]              # the final requirements, however far the dialogue got
    finished = finished_dialogue(record)
    plan = str(record.extra.get("final_plan") or record.final_answer or "")
    try:
        world = world_of(inp.task)
    except Exception as exc:  # noqa: BLE001 - a missing world is this judgement's error
        return judgement(None, {}, {}, f"world: {exc}")
    result = evaluate(plan, eval_task(task, node), world)
    strict, loose = (result.strict, result.loose) if finished else (False, False)
    scores: dict[str, float] = {"strict": float(strict), "loose": float(loose),
                                "finished": float(finished),
                                "f_feas": float(result.f_feas),
                                "f_sound": float(result.f_sound),
                                "f_user": float(result.f_user)}
    scores.update({CHECK + k: float(v) for k, v in {**result.feasibility,
                                                    **result.soundness}.items()})
    scores.update({f"rubric:{i}:{r.type}": float(r.passed)
                   for i, r in enumerate(result.rubrics)})
    turn_strict, turn_loose, judged = turn_level(record, task, world)
    if judged:
        scores.update({"turn_strict": turn_strict, "turn_loose": turn_loose,
                       "turns_judged": float(judged)})
    reasoning = {"turn": str(reached), "trip": node.trip, "active": ",".join(node.active),
                 "violations": msgspec.json.encode(result.violations[:50]).decode()}
    if not finished:
        reasoning["unfinished"] = (f"the dialogue ended ({record.termination}) at user turn "
                                   f"{reached} of {len(task.turns)}: scored 0; the final plan "
                                   "is judged against the final requirements for the counts")
    if result.parse_error:
        reasoning["parse_error"] = result.parse_error
    return judgement(float(strict), scores, reasoning)


def finished_dialogue(record: EpisodeRecord) -> bool:
    """Whether the agent answered the dialogue's last user turn (termination "completed")."""
    return record.termination == "completed"


def turn_level(record: EpisodeRecord, task: TripTask, world: World
               ) -> tuple[float, float, int]:
    """(mean strict, mean loose, turns judged) over the user turns whose node is solvable
    (FIT's deliberately infeasible nodes are left out): each turn's answer against that
    turn's node; an answer with an empty `daily_schedule` ("no change") stands for the plan
    before it; an answer without a plan fails."""
    strict = loose = 0.0
    judged = 0
    previous = None
    for log in record.extra.get("turns") or []:
        index = log.get("reply")
        if not isinstance(index, int) or not 0 <= index < len(record.messages):
            continue
        text = record.messages[index].content or ""
        node = logged_node(task, log)
        parsed = parse_plan(text)
        if node.feasible:
            result = evaluate(text, eval_task(task, node), world, previous=previous)
            strict += result.strict
            loose += result.loose
            judged += 1
        if parsed.plan is not None and parsed.plan.daily_schedule:
            previous = parsed.plan
    return (strict / judged, loose / judged, judged) if judged else (0.0, 0.0, 0)


def logged_node(task: TripTask, log: dict) -> TurnNode:
    """The node a turn was played at, as the episode logged it (its variant's graph, FIT's
    rollbacks moved), else the task's node of that turn (records before the log had it)."""
    turn = int(log.get("turn") or 1)
    if "feasible" in log and isinstance(log.get("active"), list) and log.get("trip") in task.trips:
        return TurnNode(turn=turn, trip=log["trip"], events=[], active=list(log["active"]),
                        feasible=bool(log.get("feasible", True)))
    return task.node(turn)


def judge_kinds(record: EpisodeRecord, task: Task | None, settings: JudgeSettings) -> list[str]:
    return [RULES]


def score(record: EpisodeRecord, judgements: JudgementLookup, ctx: ScoreContext
          ) -> UnitScore | None:
    unit = base_unit_score(record)
    extra = record.extra
    difficulty = str(extra.get(DIFFICULTY) or record.subset or "unknown")
    hard_set = str(extra.get(HARD_SET) or "")
    unit.labels = {DIFFICULTY: difficulty, HARD_SET: hard_set or "none",
                   SPLIT: split_of(difficulty, hard_set)}
    found = judgements.get(trajectory_hash(record), RULES, RULES_VERSION)
    if found is None or found.error:
        unit.judge_error = found.error if found is not None else "not judged"
        return unit
    s = found.scores or {}
    unit.dims = {"loose": s.get("loose", 0.0), "finished": s.get("finished", 1.0),
                 "f_feas": s.get("f_feas", 0.0),
                 "f_sound": s.get("f_sound", 0.0), "f_user": s.get("f_user", 0.0),
                 "turns": float(record.n_user_turns), "tool_calls": float(record.n_tool_calls),
                 "context_tokens": float(extra.get("context_tokens_max") or 0)}
    if "turns_judged" in s:
        unit.dims.update({k: s[k] for k in ("turn_strict", "turn_loose")})
    unit.dims.update({VIOL + k[len(CHECK):]: float(v) for k, v in s.items()
                      if k.startswith(CHECK)})
    unit.score = s.get("strict", 0.0)
    unit.success = unit.score == 1.0
    return unit

