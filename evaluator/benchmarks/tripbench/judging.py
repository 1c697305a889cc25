"""TRIP-Bench's rule judge, unit scores and report section (paper 3.5).

The judge (`tripbench_rules`, no model) evaluates the record's final plan
(`extra["final_plan"]`, else the final answer) with the evaluation package's `evaluate`
against the dialogue node of the last user turn reached: that node's trip and active
preferences. `Judgement.score` is Overall_strict; `scores` holds strict, loose, F_feas,
F_sound, F_user, every check's finding count (`check:<name>`) and every rubric's outcome
(`rubric:<i>:<TYPE>`). Turn-level results (the paper's per-turn evaluation): each user turn's
answer against that turn's node (FIT's infeasible nodes left out), as the means
`turn_strict` / `turn_loose` over `turns_judged` turns.

A unit's score is Overall_strict (success = 1); `dims` holds `loose`, the turn-level means,
the three F counts, a
the findings per check (`viol:<check>`), and the episode's user turns, tool calls and
largest agent prompt (`turns`, `tool_calls`, `context_tokens`); `labels` its difficulty and
hard set. The report: strict and loose success (%) by difficulty and by hard set, violations
by check, and turns, tool calls and context length per episode.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import msgspec

from bench_data.tripbench import TripTask, TurnNode
from bench_data.types import Task
from evaluator.benchmarks.base import JudgeInput, JudgementLookup, ReportSection, ScoreContext
from evaluator.judges.settings import JudgeSettings
from evaluator.judges.transcript import trajectory_hash
from evaluator.records import EpisodeRecord, Judgement, UnitScore
from evaluator.report.tables import Table, num
from evaluator.scoring import base_unit_score

from .evaluation import EvalTask, evaluate, parse_plan
from .evaluation.rubrics import decode_spec
from .synthesis.meta import to_trip
from .world.db import World, open_world

RULES = "tripbench_rules"
RULES_VERSION = "tripbench-rules-v1"
DIFFICULTY = "difficulty"
HARD_SET = "hard_set"
CHECK = "check:"
VIOL = "viol:"
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
        node = task.node(int(log.get("turn") or 1))
        parsed = parse_plan(text)
        if node.feasible:
            result = evaluate(text, eval_task(task, node), world, previous=previous)
            strict += result.strict
            loose += result.loose
            judged += 1
        if parsed.plan is not None and parsed.plan.daily_schedule:
            previous = parsed.plan
    return (strict / judged, loose / judged, judged) if judged else (0.0, 0.0, 0)


def judge_kinds(record: EpisodeRecord, task: Task | None, settings: JudgeSettings) -> list[str]:
    return [RULES]


def score(record: EpisodeRecord, judgements: JudgementLookup, ctx: ScoreContext
          ) -> UnitScore | None:
    unit = base_unit_score(record)
    extra = record.extra
    unit.labels = {DIFFICULTY: str(extra.get(DIFFICULTY) or record.subset or "unknown"),
                   HARD_SET: str(extra.get(HARD_SET) or "") or "none"}
    found = judgements.get(trajectory_hash(record), RULES, RULES_VERSION)
    if found is None or found.error:
        unit.judge_error = found.error if found is not None else "not judged"
        return unit
    s = found.scores or {}
    unit.dims = {"loose": s.get("loose", 0.0), "f_feas": s.get("f_feas", 0.0),
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


# ------------------------------------------------------------------ report


class Rates(msgspec.Struct):
    units: int
    strict: float   # %
    loose: float    # %
    turn_strict: float | None = None   # % of judged turns (mean over units)
    turn_loose: float | None = None


class TripSummary(msgspec.Struct):
    overall: Rates
    difficulties: dict[str, Rates] = {}
    hard_sets: dict[str, Rates] = {}
    violations: dict[str, float] = {}     # check -> % of units violating it
    findings: dict[str, int] = {}         # check -> findings over all units
    turns: float = 0.0                    # mean user turns per episode
    tool_calls: float = 0.0               # mean tool calls per episode
    context_tokens_mean: float = 0.0
    context_tokens_max: int = 0
    unjudged: int = 0


def _rates(units: list[UnitScore]) -> Rates:
    n = len(units)
    if not n:
        return Rates(0, 0.0, 0.0)
    turned = [u for u in units if "turn_strict" in u.dims]

    def turn_mean(key: str) -> float | None:
        return (round(100 * sum(u.dims[key] for u in turned) / len(turned), 2) if turned
                else None)

    return Rates(n, round(100 * sum(u.score or 0.0 for u in units) / n, 2),
                 round(100 * sum(u.dims.get("loose", 0.0) for u in units) / n, 2),
                 turn_mean("turn_strict"), turn_mean("turn_loose"))


def summarize(units: list[UnitScore]) -> TripSummary | None:
    judged = [u for u in units if u.judge_error is None and u.score is not None]
    if not judged:
        return None
    n = len(judged)

    def by(key: str) -> list[str]:
        return sorted({u.labels.get(key, "unknown") for u in judged})

    checks = sorted({k for u in judged for k in u.dims if k.startswith(VIOL)})
    ctx = [u.dims.get("context_tokens", 0.0) for u in judged]
    return TripSummary(
        overall=_rates(judged),
        difficulties={d: _rates([u for u in judged if u.labels.get(DIFFICULTY) == d])
                      for d in by(DIFFICULTY)},
        hard_sets={h: _rates([u for u in judged if u.labels.get(HARD_SET) == h])
                   for h in by(HARD_SET) if h != "none"},
        violations={k[len(VIOL):]: round(100 * sum(u.dims.get(k, 0.0) > 0 for u in judged) / n,
                                         2) for k in checks},
        findings={k[len(VIOL):]: int(sum(u.dims.get(k, 0.0) for u in judged)) for k in checks},
        turns=round(sum(u.dims.get("turns", 0.0) for u in judged) / n, 2),
        tool_calls=round(sum(u.dims.get("tool_calls", 0.0) for u in judged) / n, 2),
        context_tokens_mean=round(sum(ctx) / n, 1),
        context_tokens_max=int(max(ctx)),
        unjudged=len(units) - n)


def _row(label: str, group: str, r: Rates) -> list[str]:
    return [label, group, str(r.units), num(r.strict, 1), num(r.loose, 1),
            num(r.turn_strict, 1), num(r.turn_loose, 1)]


def tables(runs: list[tuple[str, TripSummary | None]]) -> list[Table]:
    main = Table("TRIP-Bench success (Overall strict / loose, %)",
                 ["run", "group", "units", "strict %", "loose %", "turn strict %",
                  "turn loose %"])
    viol = Table("TRIP-Bench violations by check", ["run", "check", "% of episodes",
                                                     "findings"])
    eff = Table("TRIP-Bench episodes", ["run", "turns", "tool calls", "context mean",
                                        "context max", "unjudged"])
    for label, s in runs:
        if s is None:
            continue
        main.rows.append(_row(label, "overall", s.overall))
        main.rows.extend(_row(label, f"difficulty {name}", r)
                         for name, r in s.difficulties.items())
        main.rows.extend(_row(label, f"hard set {name}", r) for name, r in s.hard_sets.items())
        viol.rows.extend([label, k, num(v, 1), str(s.findings.get(k, 0))]
                         for k, v in s.violations.items())
        eff.rows.append([label, num(s.turns, 2), num(s.tool_calls, 2),
                         num(s.context_tokens_mean, 0), str(s.context_tokens_max),
                         str(s.unjudged)])
    return [t for t in (main, viol, eff) if t.rows]


def judge_lines(s: TripSummary) -> list[str]:
    line = (f"  tripbench  strict {num(s.overall.strict, 1)}%  loose {num(s.overall.loose, 1)}% "
            f"over {s.overall.units} episodes")
    return [line]


SECTION = ReportSection(summarize=summarize, tables=tables, judge_lines=judge_lines)
