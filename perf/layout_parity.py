"""Prompt layout study: the prefix-friendly layout vs the reference layout, same sample, same
model, temperature 0.

    python -m perf.layout_parity [--engine URL] [--limit N] [--rejudge R] [--out DIR]

Runs the built-in sample twice through `agentsweep run --judge`, once with
`protocol.layout = "prefix"` (system prompt + tool schemas identical for every task; the task
in the first user message) and once with `"reference"` (the reference's layout: time and
context in the system prompt). Agent and user simulator decode at temperature 0 and share the
unit seeds, so the two runs differ only by the layout.

Printed per subset, side by side:
- the cached share of the agent's prompt tokens (vLLM `prompt_tokens_details.cached_tokens`
  over `prompt_tokens`) for each layout;
- the subset score (pooled over all units, as the reference reports it) for each layout and
  their difference;
- the judge's own noise: the same prefix-layout trajectories judged again R times at the
  judge's retry temperature (0.7); the spread (max - min) of the subset score over those
  judgings. The layouts count as score-equivalent on a subset when |difference| is within
  that spread.

Without `--engine` the embedded vLLM engine is started once for both runs (about 3 minutes on
a CPU); the whole study takes about 30 minutes on the 2-core development machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
LAYOUTS = ("prefix", "reference")


def _cli(*args: str) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-m", "evaluator.cli", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode not in (0, 3):
        raise SystemExit(f"agentsweep {args[0]} failed ({done.returncode}): "
                         f"{done.stderr.strip()[-2000:]}")


def _run_layout(url: str, out: Path, layout: str, limit: int) -> Path:
    name = f"layout-{layout}"
    _cli("run", "--engine-url", url, "--out", str(out), "--name", name, "--profile", "smoke",
         "--limit", str(limit), "--set", f"protocol.layout={layout}",
         "--set", "agent.sampling.temperature=0.0", "--set", "user.sampling.temperature=0.0",
         "--judge", "--progress", "off")
    return out / name


def _rejudge(source: Path, out: Path, i: int, url: str) -> Path:
    """A copy of SOURCE's trajectories judged afresh at the judge's retry temperature."""
    target = out / f"{source.name}-judge{i}"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for name in ("episodes.jsonl", "config.toml"):
        shutil.copy2(source / name, target / name)
    manifest = json.loads((source / "manifest.json").read_text())
    judge = manifest["resolved_config"]["judge"]
    judge["sampling"]["temperature"] = judge.get("retry_temperature", 0.7)
    judge["sampling"]["seed"] = 1000 + i
    manifest["resolved_config"].setdefault("engine", {})["url"] = url
    (target / "manifest.json").write_text(json.dumps(manifest))
    _cli("judge", str(target), "--judge-url", url, "--rerun")
    return target


def _cached_share(run_dir: Path) -> dict[str, float]:
    prompt: dict[str, int] = defaultdict(int)
    cached: dict[str, int] = defaultdict(int)
    with open(run_dir / "episodes.jsonl", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            usage = rec.get("usage", {}).get("agent", {})
            subset = rec["subset"]
            prompt[subset] += usage.get("prompt_tokens", 0)
            cached[subset] += usage.get("cached_tokens", 0)
            prompt["all"] += usage.get("prompt_tokens", 0)
            cached["all"] += usage.get("cached_tokens", 0)
    return {s: cached[s] / prompt[s] for s in prompt if prompt[s]}


def _scores(run_dir: Path) -> dict[str, float | None]:
    from evaluator.report.load import load_run

    run = load_run(run_dir)
    by: dict[str, list[float]] = defaultdict(list)
    for u in run.scores:
        if u.score is not None:
            by[u.subset].append(u.score)
            by["all"].append(u.score)
    return {s: sum(v) / len(v) for s, v in by.items() if v}


def _fmt(v: Any, pct: bool = True) -> str:
    if v is None:
        return "-"
    return f"{100 * v:.1f}" if pct else f"{v:.3f}"


def study(url: str, out: Path, limit: int, rejudge: int) -> dict[str, Any]:
    runs = {layout: _run_layout(url, out, layout, limit) for layout in LAYOUTS}
    cached = {layout: _cached_share(d) for layout, d in runs.items()}
    scores = {layout: _scores(d) for layout, d in runs.items()}
    noise_runs = [_rejudge(runs["prefix"], out, i, url) for i in range(rejudge)]
    noise_scores = [_scores(d) for d in noise_runs] + [scores["prefix"]]
    subsets = sorted({s for sc in scores.values() for s in sc}, key=lambda s: (s == "all", s))
    rows = []
    for s in subsets:
        a, b = scores["prefix"].get(s), scores["reference"].get(s)
        judged = [n[s] for n in noise_scores if n.get(s) is not None]
        spread = max(judged) - min(judged) if len(judged) > 1 else None
        diff = None if a is None or b is None else b - a
        rows.append({
            "subset": s, "cached_prefix": cached["prefix"].get(s),
            "cached_reference": cached["reference"].get(s), "score_prefix": a,
            "score_reference": b, "difference": diff, "judge_spread": spread,
            "equivalent": None if diff is None or spread is None else abs(diff) <= spread,
        })
    return {"rows": rows, "limit": limit, "rejudge": rejudge, "out": str(out)}


def print_table(result: dict[str, Any]) -> None:
    head = ("subset", "cached prefix", "cached ref", "score prefix", "score ref", "ref - prefix",
            "judge spread", "equivalent")
    print(" | ".join(head))
    for r in result["rows"]:
        eq = r["equivalent"]
        print(" | ".join([
            r["subset"], _fmt(r["cached_prefix"]) + "%", _fmt(r["cached_reference"]) + "%",
            _fmt(r["score_prefix"]), _fmt(r["score_reference"]),
            _fmt(r["difference"]), _fmt(r["judge_spread"]),
            "-" if eq is None else ("yes" if eq else "NO"),
        ]))
    share = {r["subset"]: r for r in result["rows"]}.get("all")
    if share and share["cached_prefix"] and share["cached_reference"]:
        print(f"prefix/reference cached-share ratio (all): "
              f"{share['cached_prefix'] / share['cached_reference']:.2f}x")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m perf.layout_parity", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--engine", metavar="URL", help="running vLLM server (default: start one)")
    p.add_argument("--limit", type=int, default=4, help="tasks per subset of the sample")
    p.add_argument("--rejudge", type=int, default=2,
                   help="re-judgings at the retry temperature that measure the judge's noise")
    p.add_argument("--out", type=Path, default=None, help="directory for the run directories")
    args = p.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="layout-parity-"))
    out.mkdir(parents=True, exist_ok=True)
    if args.engine:
        result = study(args.engine, out, args.limit, args.rejudge)
    else:
        from backends.server import VLLMServer

        print("starting the embedded engine (about 3 minutes on a CPU) ...", file=sys.stderr)
        with VLLMServer(log_path=out / "engine.log") as server:
            result = study(server.base_url, out, args.limit, args.rejudge)
    print_table(result)
    (out / "layout_parity.json").write_text(json.dumps(result, indent=2))
    print(f"runs and layout_parity.json in {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
