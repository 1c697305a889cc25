"""TRIP-Bench's report section (report.json `runs[i].benchmarks.tripbench`), from unit scores.

- Success, strict and loose (%, and the turn-level means), pooled over every scored unit
  (`overall`: every trial of every task, the paper's Overall when the run holds its
  evaluation set), per evaluation split (easy, mid, plain hard, LIT, FIT, AIS, PMR) and per
  difficulty.
- `paper_overall`: the split means weighted as the paper's evaluation set (100 easy, 100 mid,
  50 of each hard set: table 2's Overall is the pooled mean over those 400 tasks), when the
  run has all six; it differs from `overall` when the run's mix does (`--limit N` takes N of
  each split; plain hard tasks count in `overall` only).
- pass@k, pass^k and avg@k for k = 1..the most trials of a task, on the strict and on the
  loose metric (figure 5), overall and per split, with 95% bootstrap intervals over tasks.
- Violations by check (% of episodes, findings), and user turns, tool calls and context
  length per episode.
"""

from __future__ import annotations

import msgspec
import numpy as np

from evaluator.benchmarks.tripbench.data import (
    DIFFICULTY,
    HARD_SET,
    PAPER_SPLITS,
    SPLIT,
    SPLITS,
    VIOL,
)
from evaluator.records import UnitScore
from evaluator.report.summary import CurvePoint, _f
from evaluator.report.tables import Table, num
from kernels.bootstrap import bootstrap_ci
from kernels.passk import task_counts
from kernels.registry import compute_curve

METRICS = ("pass@k", "pass^k", "avg@k")
MEASURES = ("strict", "loose")
N_BOOT = 1000
SEED = 0


class Rates(msgspec.Struct):
    units: int
    strict: float   # %
    loose: float    # %
    turn_strict: float | None = None   # % of judged turns (mean over units)
    turn_loose: float | None = None


class TripSummary(msgspec.Struct):
    overall: Rates
    paper_overall: Rates | None = None    # the paper's split weights (see the module doc)
    splits: dict[str, Rates] = {}
    difficulties: dict[str, Rates] = {}
    curves: dict[str, dict[str, list[CurvePoint]]] = {}  # group -> "strict pass@k" -> points
    violations: dict[str, float] = {}     # check -> % of units violating it
    findings: dict[str, int] = {}         # check -> findings over all units
    turns: float = 0.0                    # mean user turns per episode
    tool_calls: float = 0.0               # mean tool calls per episode
    context_tokens_mean: float = 0.0
    context_tokens_max: int = 0
    unjudged: int = 0
    unfinished: int = 0                   # episodes that ended before the dialogue's end


def split_label(u: UnitScore) -> str:
    label = u.labels.get(SPLIT)
    if label:
        return label
    hard = u.labels.get(HARD_SET, "none")
    return hard if hard not in ("", "none") else u.labels.get(DIFFICULTY, "unknown")


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


def _paper_weighted(splits: dict[str, Rates]) -> Rates | None:
    if not all(splits.get(s) and splits[s].units for s in PAPER_SPLITS):
        return None
    total = sum(PAPER_SPLITS.values())

    def mix(key: str) -> float | None:
        values = [getattr(splits[s], key) for s in PAPER_SPLITS]
        if any(v is None for v in values):
            return None
        return round(sum(w * v for w, v in zip(PAPER_SPLITS.values(), values)) / total, 2)

    return Rates(sum(splits[s].units for s in PAPER_SPLITS), mix("strict") or 0.0,
                 mix("loose") or 0.0, mix("turn_strict"), mix("turn_loose"))


def _curves(units: list[UnitScore]) -> dict[str, list[CurvePoint]]:
    keys = [u.unit.task for u in units]
    out: dict[str, list[CurvePoint]] = {}
    for measure in MEASURES:
        vals = np.array([float(u.score or 0.0) if measure == "strict"
                         else float(u.dims.get("loose", 0.0)) for u in units])
        counts = task_counts(keys, vals, vals >= 1.0)
        ks = list(range(1, counts.max_trials + 1))
        for metric in METRICS:
            points = []
            if ks:
                curve = compute_curve(metric, counts, ks)
                ci = bootstrap_ci(curve.per_task, n_boot=N_BOOT, seed=SEED, backend="numpy")
                points = [CurvePoint(k, _f(curve.value[i]), _f(ci.low[i]), _f(ci.high[i]),
                                     int(curve.n_tasks[i])) for i, k in enumerate(ks)]
            out[f"{measure} {metric}"] = points
    return out


def summarize(units: list[UnitScore], episodes: object = None) -> TripSummary | None:
    judged = [u for u in units if u.judge_error is None and u.score is not None]
    if not judged:
        return None
    n = len(judged)
    by_split = {s: [u for u in judged if split_label(u) == s] for s in SPLITS}
    extra = sorted({split_label(u) for u in judged} - set(SPLITS))
    by_split.update({s: [u for u in judged if split_label(u) == s] for s in extra})
    splits = {s: _rates(us) for s, us in by_split.items() if us}
    difficulties = sorted({u.labels.get(DIFFICULTY, "unknown") for u in judged})
    checks = sorted({k for u in judged for k in u.dims if k.startswith(VIOL)})
    ctx = [u.dims.get("context_tokens", 0.0) for u in judged]
    curves = {"overall": _curves(judged)}
    curves.update({s: _curves(us) for s, us in by_split.items() if us})
    return TripSummary(
        overall=_rates(judged),
        paper_overall=_paper_weighted(splits),
        splits=splits,
        difficulties={d: _rates([u for u in judged if u.labels.get(DIFFICULTY) == d])
                      for d in difficulties},
        curves=curves,
        violations={k[len(VIOL):]: round(100 * sum(u.dims.get(k, 0.0) > 0 for u in judged) / n,
                                         2) for k in checks},
        findings={k[len(VIOL):]: int(sum(u.dims.get(k, 0.0) for u in judged)) for k in checks},
        turns=round(sum(u.dims.get("turns", 0.0) for u in judged) / n, 2),
        tool_calls=round(sum(u.dims.get("tool_calls", 0.0) for u in judged) / n, 2),
        context_tokens_mean=round(sum(ctx) / n, 1),
        context_tokens_max=int(max(ctx)),
        unjudged=len(units) - n,
        unfinished=sum(1 for u in judged if u.dims.get("finished", 1.0) < 1.0))


def _row(label: str, group: str, r: Rates) -> list[str]:
    return [label, group, str(r.units), num(r.strict, 1), num(r.loose, 1),
            num(r.turn_strict, 1), num(r.turn_loose, 1)]


def _pct(p: CurvePoint | None) -> str:
    return num(100 * p.value, 1) if p is not None and p.value is not None else "—"


def tables(runs: list[tuple[str, TripSummary | None]]) -> list[Table]:
    main = Table("TRIP-Bench success (Overall strict / loose, %)",
                 ["run", "group", "units", "strict %", "loose %", "turn strict %",
                  "turn loose %"])
    passk = Table("TRIP-Bench pass@k / pass^k / avg@k (strict and loose, %)",
                  ["run", "group", "k", *(f"{m} {x}" for m in MEASURES for x in METRICS)])
    viol = Table("TRIP-Bench violations by check", ["run", "check", "% of episodes",
                                                     "findings"])
    eff = Table("TRIP-Bench episodes", ["run", "turns", "tool calls", "context mean",
                                        "context max", "unjudged", "unfinished"])
    for label, s in runs:
        if s is None:
            continue
        main.rows.append(_row(label, "overall (pooled)", s.overall))
        if s.paper_overall is not None:
            main.rows.append(_row(label, "overall (paper's split weights)", s.paper_overall))
        main.rows.extend(_row(label, f"split {name}", r) for name, r in s.splits.items())
        main.rows.extend(_row(label, f"difficulty {name}", r)
                         for name, r in s.difficulties.items())
        for group, curves in s.curves.items():
            kmax = max((len(v) for v in curves.values()), default=0)
            for i in range(kmax):
                cells = [_pct(curves.get(f"{m} {x}", [])[i]
                              if i < len(curves.get(f"{m} {x}", [])) else None)
                         for m in MEASURES for x in METRICS]
                passk.rows.append([label, group, str(i + 1), *cells])
        viol.rows.extend([label, k, num(v, 1), str(s.findings.get(k, 0))]
                         for k, v in s.violations.items())
        eff.rows.append([label, num(s.turns, 2), num(s.tool_calls, 2),
                         num(s.context_tokens_mean, 0), str(s.context_tokens_max),
                         str(s.unjudged), str(s.unfinished)])
    return [t for t in (main, passk, viol, eff) if t.rows]


def judge_lines(s: TripSummary) -> list[str]:
    line = (f"  tripbench  strict {num(s.overall.strict, 1)}%  loose {num(s.overall.loose, 1)}% "
            f"over {s.overall.units} episodes")
    if s.paper_overall is not None:
        line += (f"  (paper's split weights: strict {num(s.paper_overall.strict, 1)}%, "
                 f"loose {num(s.paper_overall.loose, 1)}%)")
    return [line]
