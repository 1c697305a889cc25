"""`agentsweep bench`'s figures, from a run directory: throughput per role and per replica,
prefix-cache hit rates (measured and ideal), an episode's time by stage, and the estimated
wall time of the full sweep on the measured replicas. Pure functions of the run's files
(episodes.jsonl, timeseries.jsonl, calls.jsonl); `analyse` gives the dict written to
RUN_DIR/bench.json, `render` the terminal table.

The full sweep's estimate per role: episodes x the role's measured tokens per episode / its
tokens/s while episodes were still being started (`steady_rates`), plus one mean episode (the
sweep's own ramp-down; without such a window, when every bench episode started at once, the
whole run's rate and no ramp-down); the largest is the estimate (`bottleneck`). A judge
(`--judge`) is a role like the others: its tokens per episode come from the run's telemetry
(judge calls are in no episode record), so judging can be the bottleneck. `by_episode_rate_s` is the
plain episodes / (episodes/min) for comparison.

Ideal prefix hits of one call (per role, tokens, rounded down to whole KV blocks): the previous
prompt of the same episode and role (its blocks are in the cache when the next call comes),
or, at least, the leading system message when an earlier call of the role had a system
message of the same length (the prefix shared across episodes; its tokens estimated as
characters / 4). Calls outside an episode (the tool simulator's) get the shared prefix only.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import msgspec

from evaluator.run import throughput
from evaluator.run.results import iter_records
from evaluator.run.telemetry import CALLS_FILE

BENCH_FILE = "bench.json"
CHARS_PER_TOKEN = 4.0


def read_calls(run_dir: str | Path) -> list[dict[str, Any]]:
    path = Path(run_dir) / CALLS_FILE
    if not path.exists():
        return []
    return [msgspec.json.decode(line) for line in path.read_bytes().splitlines() if line]


def ideal_hits(calls: list[dict[str, Any]], block: int) -> dict[str, dict[str, float]]:
    """Per role: prompt, cached (as answered) and ideal cached tokens, their rates and ratio."""
    out: dict[str, dict[str, float]] = {}
    prev: dict[tuple[str, Any], int] = {}
    seen: dict[str, set[int]] = defaultdict(set)
    for c in sorted(calls, key=lambda c: c["t"]):
        role, prompt = c["role"], c["prompt"]
        sys_chars = c.get("system_chars", 0)
        shared = 0
        if sys_chars and sys_chars in seen[role]:
            shared = int(sys_chars / CHARS_PER_TOKEN) // block * block
        seen[role].add(sys_chars)
        before = prev.get((role, c["episode"])) if c["episode"] is not None else None
        history = (before // block * block) if before else 0
        ideal = min(prompt, max(shared, history))
        if c["episode"] is not None:
            prev[(role, c["episode"])] = prompt
        acc = out.setdefault(role, {"prompt": 0, "cached": 0, "ideal": 0})
        acc["prompt"] += prompt
        acc["cached"] += min(c["cached"], prompt)
        acc["ideal"] += ideal
    for acc in out.values():
        p = acc["prompt"]
        acc["hit_rate"] = acc["cached"] / p if p else None
        acc["ideal_hit_rate"] = acc["ideal"] / p if p else None
        acc["of_ideal"] = acc["cached"] / acc["ideal"] if acc["ideal"] else None
    return out


def stages(records: list[Any], judge_s: float, judged: int) -> dict[str, float | None]:
    """Mean seconds per episode: admission wait, agent model time, tool time, user time (the
    user simulator's model time), judge time (model time of judge calls per judged episode)
    and the episode's wall time."""
    n = len(records)
    if not n:
        return {}
    tot: dict[str, float] = defaultdict(float)
    for r in records:
        t = r.timings
        tot["admission_wait"] += t.get("queue", 0.0)
        tot["model"] += max(0.0, t.get("agent", 0.0) - t.get("queue_agent", 0.0))
        tot["tool"] += t.get("tool", 0.0)
        tot["user"] += max(0.0, t.get("user", 0.0) - t.get("queue_user", 0.0))
        tot["total"] += t.get("total", 0.0)
    out: dict[str, float | None] = {k: v / n for k, v in tot.items()}
    out["judge"] = judge_s / judged if judged else None
    return out


def analyse(run_dir: str | Path, *, full_episodes: int | None = None, block_size: int = 16,
            trials: int = 1) -> dict[str, Any]:
    """The bench figures of a run directory (see the module docstring)."""
    run_dir = Path(run_dir)
    records = list(iter_records(run_dir))
    ts = throughput.summary(run_dir)
    n = len(records)
    wall = (max(r.finished_at for r in records) - min(r.started_at for r in records)) \
        if n else 0.0
    seconds = ts["seconds"] or wall
    judge_roles = {k: v for k, v in ts["roles"].items() if k.startswith("judge")}
    judge_s = sum(_model_s(run_dir, k) for k in judge_roles)
    hits = ideal_hits(read_calls(run_dir), block_size)
    steady = steady_rates(run_dir, max((r.started_at for r in records), default=0.0))
    tail = sum(r.timings.get("total", 0.0) for r in records) / n if n else 0.0
    per_role_tokens: dict[str, int] = defaultdict(int)
    for r in records:
        for role, u in r.usage.items():
            per_role_tokens[role] += u.prompt_tokens + u.completion_tokens
    roles = {}
    for name, d in ts["roles"].items():
        d = dict(d)
        tok_s = steady.get(name) or (d["prompt_tok_s"] or 0) + (d["completion_tok_s"] or 0)
        d["steady_tok_s"] = steady.get(name)
        d["tokens_per_episode"] = per_role_tokens.get(name, 0) / n if n and \
            name in per_role_tokens else None
        if d["tokens_per_episode"] is None and name in judge_roles and n:
            d["tokens_per_episode"] = ((d.get("prompt_tokens") or 0)
                                       + (d.get("completion_tokens") or 0)) / n or None
        d.update({k: hits.get(name, {}).get(k) for k in ("ideal_hit_rate", "of_ideal")})
        if d["request_hit_rate"] is None and name in hits:
            d["request_hit_rate"] = hits[name]["hit_rate"]
        if full_episodes and d["tokens_per_episode"] and tok_s:
            d["estimate_s"] = full_episodes * d["tokens_per_episode"] / tok_s + \
                (tail if d["steady_tok_s"] else 0.0)
        roles[name] = d
    eps_min = n / seconds * 60 if seconds else None
    estimate: dict[str, Any] = {"episodes": full_episodes}
    if full_episodes and eps_min:
        estimate["by_episode_rate_s"] = full_episodes / eps_min * 60
        by_role = [d["estimate_s"] for d in roles.values() if d.get("estimate_s")]
        estimate["by_tokens_s"] = max(by_role) if by_role else None
        estimate["bottleneck"] = max(roles, key=lambda k: roles[k].get("estimate_s") or 0) \
            if by_role else None
    return {
        "run_dir": str(run_dir), "episodes": n, "seconds": round(seconds, 3),
        "episodes_per_min": eps_min, "block_size": block_size, "roles": roles,
        "replicas": ts["replicas"], "stages": stages(records, judge_s, n if judge_roles else 0),
        "estimate": estimate,
    }


def steady_rates(run_dir: Path, last_start: float) -> dict[str, float]:
    """Tokens/s (prompt + completion) per role while episodes were still being started: the
    bench's ramp-down (its last episodes finishing with the engine half idle) is a large part
    of a short run and a small part of a full sweep, so the estimate uses this rate for the
    sweep plus one mean episode for its own ramp-down. {} when that window has no two rows."""
    segs = throughput.read_segments(run_dir)
    if len(segs) != 1:
        return {}
    start, rows = segs[0]
    inside = [r for r in rows if r["t"] <= last_start - start]
    if len(inside) < 2 or inside[-1]["t"] <= inside[0]["t"]:
        return {}
    a, b = inside[0], inside[-1]
    dt = b["t"] - a["t"]
    out = {}
    for name, r in b["roles"].items():
        p = a["roles"].get(name, {})
        tokens = r["prompt"] + r["completion"] - p.get("prompt", 0) - p.get("completion", 0)
        if tokens > 0:
            out[name] = tokens / dt
    return out


def _model_s(run_dir: Path, role: str) -> float:
    segs = throughput.read_segments(run_dir)
    return sum(rows[-1]["roles"].get(role, {}).get("model_s", 0.0)
               - rows[0]["roles"].get(role, {}).get("model_s", 0.0) for _s, rows in segs)


def _f(x: Any, fmt: str = "{:.1f}") -> str:
    return "-" if x is None else fmt.format(x)


def _pct(x: Any) -> str:
    return _f(x, "{:.1%}")


def hms(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.1f}s"
    s = round(seconds)
    return f"{s // 3600}h{s % 3600 // 60:02d}m{s % 60:02d}s"


def render(b: dict[str, Any]) -> str:
    """The terminal table of `analyse`'s result."""
    from evaluator.report.render_text import terminal_table
    from evaluator.report.tables import Table

    lines = [(f"bench {b['run_dir']}: {b['episodes']} episodes in {b['seconds']:.1f}s "
              f"({_f(b['episodes_per_min'])} episodes/min)")]
    heads = ["req/s", "prompt tok/s", "compl tok/s", "hit (requests)", "hit (/metrics)"]
    rows = [[name, _f(d["requests_per_s"], "{:.2f}"), _f(d["prompt_tok_s"]),
             _f(d["completion_tok_s"]), _pct(d["request_hit_rate"]), "",
             _pct(d.get("ideal_hit_rate")), _pct(d.get("of_ideal")), "", "", "",
             _f(d.get("tokens_per_episode"), "{:.0f}"), hms(d.get("estimate_s"))]
            for name, d in b["roles"].items()]
    rows += [[f"{d['role']} @ {d['url']}", _f(d["requests_per_s"], "{:.2f}"),
              _f(d["prompt_tok_s"]), _f(d["completion_tok_s"]), _pct(d["request_hit_rate"]),
              _pct(d["metrics_hit_rate"]), "", "", _pct(d["kv_mean"]), _pct(d["kv_peak"]),
              f"{d['queue_peak']:g}", "", ""] for d in b["replicas"]]
    lines.append(terminal_table(Table(
        "per role / per replica", ["role / replica", *heads, "ideal hit", "of ideal",
                                   "KV mean", "KV peak", "queue peak", "tok/episode",
                                   "est. full sweep"], rows), max_col=60))
    st = b["stages"]
    if st:
        lines.append("episode stages (mean s): " + ", ".join(
            f"{k.replace('_', ' ')} {_f(v, '{:.3f}')}" for k, v in st.items()))
    e = b["estimate"]
    if e.get("episodes"):
        lines.append(f"full sweep: {e['episodes']} episodes; estimated wall time "
                     f"{hms(e.get('by_tokens_s'))} by tokens/s (bottleneck: "
                     f"{e.get('bottleneck') or '-'}), {hms(e.get('by_episode_rate_s'))} by "
                     "episodes/min")
    return "\n".join(lines)


def write(run_dir: str | Path, b: dict[str, Any]) -> Path:
    path = Path(run_dir) / BENCH_FILE
    path.write_bytes(msgspec.json.format(msgspec.json.encode(b), indent=1) + b"\n")
    return path
