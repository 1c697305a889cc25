"""Synthetic run directories and UnitScores for report tests (no model needed)."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import numpy as np

from backends.types import ChatMessage, Usage
from evaluator.records import EpisodeRecord, Judgement, ToolCallRecord, UnitId, UnitScore

EVIL = "<script>alert(1)</script>"


def synthetic_scores(
    run: str, n_tasks: int, n_trials: int, *, p: float = 0.5, seed: int = 0,
    subsets: tuple[str, ...] = ("single_turn", "multi_turn"), evil: bool = False,
) -> list[UnitScore]:
    """UnitScores whose per-task success probability varies around p (ratings in dims)."""
    rng = np.random.default_rng(seed)
    out = []
    for t in range(n_tasks):
        subset = subsets[t % len(subsets)]
        task_id = f"t{t}{EVIL}" if evil and t == 0 else f"t{t}"
        q = float(np.clip(rng.normal(p, 0.25), 0.02, 0.98))
        for trial in range(n_trials):
            score = float(np.clip(rng.normal(q, 0.15), 0.0, 1.0))
            out.append(UnitScore(
                unit=UnitId(run=run, task=f"travelbench/{subset}/{task_id}", trial=trial, seed=trial),
                benchmark="travelbench", subset=subset, task_id=task_id, score=score,
                success=score >= 0.5,
                dims={"helpfulness": float(rng.integers(1, 6)), "accuracy": float(rng.integers(1, 6))},
                tool_calls=4, tool_errors=int(rng.integers(0, 2)),
                error_categories={"invalid_json": 1} if trial % 2 else {},
            ))
    return out


def write_run_dir(
    path: Path, run: str, n_tasks: int, n_trials: int, *, p: float = 0.5, seed: int = 0,
    evil: bool = False, judge_errors: int = 1, unjudged: int = 1,
) -> Path:
    """A run dir with manifest, config, episodes.jsonl, judgements.jsonl (the adapter's input)."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "manifest.json").write_text(json.dumps({"label": run, "version": "0.1.0"}))
    (path / "config.toml").write_text(
        '[agent]\nmodel = "SmolLM2"\n[judge]\nsuccess_threshold = 0.5\n')
    scores = synthetic_scores(run, n_tasks, n_trials, p=p, seed=seed, evil=evil)
    ep_lines, j_lines = [], []
    for i, s in enumerate(scores):
        calls = [ToolCallRecord(call_id=f"c{j}", name="search", arguments="{}", valid=True,
                                source="error" if j < s.tool_errors else "hit", content="x",
                                error_category="invalid_json" if j < s.tool_errors else None)
                 for j in range(s.tool_calls)]
        ep = EpisodeRecord(
            unit=s.unit, benchmark=s.benchmark, subset=s.subset, task_id=s.task_id,
            messages=[ChatMessage(role="user", content=f"plan a trip {EVIL}")],
            tool_calls=calls, termination="answer" if i % 3 else "max_steps",
            usage={"agent": Usage(prompt_tokens=1000, completion_tokens=100, total_tokens=1100,
                                  cached_tokens=600),
                   "user": Usage(prompt_tokens=500, completion_tokens=50, total_tokens=550,
                                 cached_tokens=100)},
        )
        ep_lines.append(msgspec.json.encode(ep))
        if i >= len(scores) - unjudged:
            continue
        err = i < judge_errors
        j_lines.append(msgspec.json.encode(Judgement(
            unit=s.unit, trajectory_hash=f"h{i}", judge_model="judge", prompt_version="v1",
            kind="travel_rubric", score=None if err else s.score, scores=s.dims,
            error=f"unparseable {EVIL}" if err else None, created_at=float(i))))
    (path / "episodes.jsonl").write_bytes(b"\n".join(ep_lines) + b"\n" + b'{"unit": {"ru')
    (path / "judgements.jsonl").write_bytes(b"\n".join(j_lines) + b"\n")
    return path
