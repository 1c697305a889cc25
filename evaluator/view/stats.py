"""Figures of one run as the viewer shows them, computed from its table (`query.RunView.v`):

- `progress`: the header line. While the run is live (its files changed in the last minute
  and it is not complete): episodes done / total, running, episodes/s and completion tokens/s
  over the last minute. Once it stopped: how long it took and its average rates (a finished
  run no longer reads "0.0 ep/s"). Then the prompt-cache share, tool-cache hits, units that
  failed on infrastructure (failures.jsonl) and the infrastructure retries; and, apart from
  those, the verdicts: passed, and not passed with its reasons (judge's fail, judge error,
  bad ending), and units not judged yet.
- `summary`: the score summary of the rows a list query matched, per benchmark/subset and
  over all of them (units, running, judged, mean score, pass / fail / judge error).
- `score_detail`: how one unit's score and verdict come about (the judge's score, its
  audit's weight, the tool-error penalty, the pass line), for the episode page.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from evaluator.view.index import FILES

if TYPE_CHECKING:
    from evaluator.view.query import RunView


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.0%}"


def _hms(seconds: float) -> str:
    s = round(seconds)
    if s < 60:
        return f"{seconds:.1f}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m{s % 60:02d}s" if s >= 3600 else \
        f"{s // 60}m{s % 60:02d}s"


def verdict_counts(v: dict[str, np.ndarray], rows: np.ndarray | None = None) -> dict[str, int]:
    """pass / fail / judge error / not judged / not passed (the "failed" flag) over `rows`."""
    verdict = v["verdict"] if rows is None else v["verdict"][rows]
    failed = v["failed"] if rows is None else v["failed"][rows]
    src = v["src"] if rows is None else v["src"][rows]
    done = src != 2
    return {"passed": int(np.count_nonzero(verdict == 1)),
            "fail": int(np.count_nonzero(verdict == 2)),
            "judge_error": int(np.count_nonzero(verdict == 3)),
            "not_judged": int(np.count_nonzero((verdict == 0) & (src == 0))),
            "not_passed": int(np.count_nonzero(failed)),
            "bad_ending": int(np.count_nonzero(failed & (verdict <= 1) & done))}


def progress(view: RunView) -> dict[str, Any]:
    """The header's figures and its line (module doc)."""
    v = view.v
    ep = v["src"] == 0
    done = int(ep.sum())
    now = time.time()
    path = view.run_dir / FILES["episodes"]
    mtime = path.stat().st_mtime if path.exists() else 0.0
    p, c = int(v["ptok"][ep].sum()), int(v["cached"][ep].sum())
    calls, hits = int(v["tools"].sum()), int(v["hits"].sum())
    live = view.is_live()
    running = int(np.count_nonzero(v["src"] == 2))
    fig: dict[str, Any] = {
        "done": done, "total": view.total, "unfinished": int((v["src"] == 1).sum()),
        "running": running if live else 0, "interrupted": 0 if live else running,
        "prompt_cached": c / p if p else None, "tool_hits": hits / calls if calls else None,
        "infra_retries": int(v["retries"].sum()), "failed": int(v["failed"].sum()),
        "judged": int((v["verdict"] > 0).sum()), "bad_lines": view.index.bad,
        "updated_s_ago": round(now - mtime, 1) if mtime else None, "live": live,
        "verdicts": verdict_counts(v),
    }
    total = "?" if view.total is None else str(view.total)
    parts = [f"{done}/{total} episodes"]
    if live:
        recent = ep & (v["fin"] > now - 60)
        fig["ep_per_s"] = round(float(recent.sum()) / 60, 2)
        fig["tok_per_s"] = round(float(v["ctok"][recent].sum()) / 60, 1)
        parts += [f"{running} running", f"{fig['ep_per_s']:.1f} ep/s (last minute)",
                  f"{fig['tok_per_s']:.0f} tok/s"]
    else:
        done_at = ep & (v["fin"] > 0)
        # a record without its start time: its finish less its duration
        began = np.where(v["start"] > 0, v["start"], v["fin"] - v["dur"])
        starts, ends = began[done_at], v["fin"][done_at]
        wall = float(ends.max() - starts.min()) if len(starts) and len(ends) else 0.0
        fig["wall_s"] = wall
        fig["ep_per_s"] = round(done / wall, 3) if wall > 0 else None
        fig["tok_per_s"] = round(float(v["ctok"][ep].sum()) / wall, 1) if wall > 0 else None
        if wall > 0:
            parts.append(f"in {_hms(wall)} ({done / wall * 60:.1f} ep/min, "
                         f"{fig['tok_per_s']:.0f} tok/s)")
        if running:
            parts.append(f"{running} interrupted (run again with --resume)")
    parts += [f"prompt cached {_pct(fig['prompt_cached'])}",
              f"tool cache hits {_pct(fig['tool_hits'])}",
              f"infra failures {fig['unfinished']} (retries {fig['infra_retries']})"]
    fig["line"] = " | ".join(parts)
    vc = fig["verdicts"]
    why = [f"{vc[k]} {name}" for k, name in (("fail", "fail"), ("judge_error", "judge error"),
                                             ("bad_ending", "bad ending"))
           if vc[k]]
    text = f"passed {vc['passed']} | not passed {vc['not_passed']}"
    if why:
        text += f" ({', '.join(why)})"
    if vc["not_judged"]:
        text += f" | not judged {vc['not_judged']}"
    fig["verdict_line"] = text
    return fig


def summary(view: RunView, positions: np.ndarray) -> list[dict[str, Any]]:
    """The score summary of the rows at `positions` (a list query's matches): one entry per
    benchmark/subset, then "all" (when there are several)."""
    v, strings = view.v, view.index.strings
    rows = np.asarray(positions, dtype=np.int64)
    groups: list[tuple[str, np.ndarray]] = []
    if len(rows):
        pair = (v["bench"][rows].astype(np.int64) << 32) | v["subset"][rows].astype(np.int64)
        uniq, inv = np.unique(pair, return_inverse=True)
        for g, code in enumerate(uniq):
            name = f"{strings[int(code) >> 32]}/{strings[int(code) & 0xFFFFFFFF]}"
            groups.append((name, rows[inv == g]))
        groups.sort(key=lambda x: x[0])
    if len(groups) != 1:
        groups.append(("all", rows))
    out = []
    for name, sel in groups:
        scores = v["score"][sel]
        scored = scores[~np.isnan(scores)]
        out.append({"subset": name, "units": len(sel),
                    "running": int(np.count_nonzero(v["src"][sel] == 2)),
                    "scored": len(scored),
                    "mean_score": round(float(scored.mean()), 4) if len(scored) else None,
                    **verdict_counts(v, sel)})
    return out


def _f(x: float) -> float | None:
    return None if math.isnan(x) else round(float(x), 4)


def score_detail(view: RunView, i: int) -> dict[str, Any] | None:
    """How row i's score and verdict come about; None when no judgement applies."""
    v, ix = view.v, view.index
    main = int(v["judgement"][i])
    if main < 0:
        return None
    ju, s = ix.cols["judgements"], ix.strings
    kind = s[ju["kind"][main]]
    rules = view.rules
    weighted = rules is not None and kind in rules.weighted
    threshold = rules.thresholds.get(kind, view.threshold) if rules else view.threshold
    out: dict[str, Any] = {
        "kind": kind, "judge_model": s[ju["model"][main]], "judge_score": _f(ju["score"][main]),
        "judge_error": bool(ju["err"][main]), "weighted": weighted,
        "score": _f(v["score"][i]), "threshold": threshold,
        "threshold_from": "the judge's pass line" if rules and kind in rules.thresholds
        else "the run's [judge] success_threshold",
        "verdict": ("-", "pass", "fail", "judge error")[int(v["verdict"][i])],
    }
    if weighted:
        meta = int(v["meta"][i])
        meta_score = _f(ju["score"][meta]) if meta >= 0 else None
        calls, errors = int(v["tools"][i]), int(v["serr"][i])
        out["audit"] = ({"kind": s[ju["kind"][meta]], "score": meta_score} if meta >= 0
                        else None)
        out["audit_weight"] = 1.0 if meta_score is None else meta_score
        out["tool_calls"], out["tool_errors"] = calls, errors
        out["tool_weight"] = round(1.0 - errors / calls, 4) if calls else 1.0
    return out
