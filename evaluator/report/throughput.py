"""The report's throughput section: what a run's telemetry recorded (RUN_DIR/timeseries.jsonl),
an `agentsweep bench` result (bench.json) and a bench estimate given to the run
(estimate.json, compared with the actual wall time). Tables for every renderer; inline SVG
time series (tokens/s, requests in flight, queue, KV usage, prefix-cache hit rate per replica)
for the HTML report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evaluator.report.svg import LineSeries, line_chart, nice_top
from evaluator.table import Table, pct

MAX_POINTS = 240  # per series in the report (the file keeps every sample)


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _thin(s: dict[str, list[Any]]) -> dict[str, list[Any]]:
    n = len(s["t"])
    if n <= MAX_POINTS:
        return s
    step = -(-n // MAX_POINTS)
    return {k: v[::step] for k, v in s.items()}


def load_throughput(run_dir: Path) -> dict[str, Any]:
    """{} for a run without telemetry; else series, summary, bench and estimate vs actual."""
    from evaluator.run import throughput
    from evaluator.run.bench import BENCH_FILE
    from evaluator.run.telemetry import ESTIMATE_FILE

    out: dict[str, Any] = {}
    if throughput.read_segments(run_dir):
        ser = throughput.series(run_dir)
        out["series"] = {kind: {k: _thin(v) for k, v in ser[kind].items()}
                         for kind in ("roles", "replicas")}
        out["summary"] = throughput.summary(run_dir)
    bench = _json(Path(run_dir) / BENCH_FILE)
    if isinstance(bench, dict):
        out["bench"] = bench
    est = _json(Path(run_dir) / ESTIMATE_FILE)
    if isinstance(est, dict):
        from evaluator.run.results import iter_records

        episodes = list(iter_records(run_dir))
        starts = [e.started_at for e in episodes if getattr(e, "started_at", 0)]
        ends = [e.finished_at for e in episodes if getattr(e, "finished_at", 0)]
        actual = max(ends) - min(starts) if starts and ends else None
        out["estimate"] = {**est, "actual_s": actual, "actual_episodes": len(episodes)}
    return out


def _f(x: Any, fmt: str = "{:.1f}") -> str:
    return "—" if x is None else fmt.format(x)


def throughput_tables(runs: list[Any]) -> list[Table]:
    from evaluator.run.bench import hms

    out: list[Table] = []
    t = Table("Throughput per replica (from the run's telemetry)",
              ["run", "role", "replica", "req/s", "prompt tok/s", "completion tok/s",
               "hit (requests)", "hit (/metrics)", "KV mean", "KV peak", "queue peak"],
              note="hit (requests): cached / prompt tokens of the answers; hit (/metrics): "
              "Δ prefix-cache hits / Δ queries of the server over the run (a server shared "
              "by several roles shows the same figure on each)")
    for r in runs:
        for d in (r.throughput.get("summary") or {}).get("replicas", []):
            t.rows.append([r.label, d["role"], d["url"], _f(d["requests_per_s"], "{:.2f}"),
                           _f(d["prompt_tok_s"]), _f(d["completion_tok_s"]),
                           pct(d["request_hit_rate"]), pct(d["metrics_hit_rate"]),
                           pct(d["kv_mean"]), pct(d["kv_peak"]), f"{d['queue_peak']:g}"])
    if t.rows:
        out.append(t)
    b = Table("Bench (agentsweep bench)", ["run", "role", "tok/episode", "hit (requests)",
                                           "ideal hit", "of ideal", "est. full sweep"],
              note="ideal: the previous prompt of the same episode, or the shared system "
              "prefix, rounded down to KV blocks (docs/routing.md)")
    for r in runs:
        bench = r.throughput.get("bench") or {}
        for name, d in bench.get("roles", {}).items():
            b.rows.append([r.label, name, _f(d.get("tokens_per_episode"), "{:.0f}"),
                           pct(d.get("request_hit_rate")), pct(d.get("ideal_hit_rate")),
                           pct(d.get("of_ideal")), hms(d.get("estimate_s"))])
        st = bench.get("stages") or {}
        if st:
            b.rows.append([r.label, "episode stages (mean s)", "", "", "", "",
                           ", ".join(f"{k} {_f(v, '{:.3f}')}" for k, v in st.items())])
    if b.rows:
        out.append(b)
    e = Table("Estimated vs actual wall time",
              ["run", "bench", "episodes (est.)", "estimate (tokens/s)",
               "estimate (episodes/min)", "episodes (run)", "actual", "actual / estimate"])
    for r in runs:
        est = r.throughput.get("estimate")
        if not est:
            continue
        guess = est.get("by_tokens_s") or est.get("by_episode_rate_s")
        actual = est.get("actual_s")
        e.rows.append([r.label, str(est.get("bench_run") or est.get("source", "")),
                       str(est.get("episodes")), hms(est.get("by_tokens_s")),
                       hms(est.get("by_episode_rate_s")), str(est.get("actual_episodes")),
                       hms(actual), _f(actual / guess if actual and guess else None,
                                       "{:.2f}x")])
    if e.rows:
        out.append(e)
    return out


def _chart(title: str, data: dict[str, dict[str, list[Any]]], field: str, y_label: str,
           kind: str, fraction: bool = False) -> str | None:
    series = [LineSeries(name, d["t"], d[field]) for name, d in data.items()
              if any(v is not None for v in d[field])]
    if not series:
        return None
    top = 1.0 if fraction else nice_top(max(v for s in series for v in s.ys if v is not None))
    return line_chart(title, series, x_label="seconds", y_label=y_label, y_range=(0.0, top),
                      kind=kind)


def _labels(keys: list[str]) -> dict[str, str]:
    """"agent http://gpu-1:8000/v1" -> "gpu-1:8000 agent": the replica first (":8000" when all
    share one host), and a role list as its first role "+n", so legends stay short."""
    parts = []
    for key in keys:
        role, _, url = key.partition(" ")
        host, _, port = url.split("://", 1)[-1].split("/", 1)[0].rpartition(":")
        roles = role.split(",")
        parts.append((host, port, roles[0] + (f"+{len(roles) - 1}" if len(roles) > 1 else "")))
    one_host = len({h for h, _, _ in parts}) == 1
    return {k: f"{'' if one_host else h}:{p} {r}" for k, (h, p, r) in zip(keys, parts,
                                                                             strict=True)}


def throughput_plots(runs: list[Any]) -> list[str]:
    out: list[str] = []
    for r in runs:
        ser = r.throughput.get("series")
        if not ser:
            continue
        names = _labels(list(ser["replicas"]))
        reps = {names[k]: v for k, v in ser["replicas"].items()}
        roles = ser["roles"]
        tag = f" — {r.label}" if len(runs) > 1 else ""
        for chart in (
            _chart(f"tokens/s per role{tag}", roles, "tok_s", "tokens/s", "ts-role-tokens"),
            _chart(f"tokens/s per replica{tag}", reps, "tok_s", "tokens/s", "ts-tokens"),
            _chart(f"requests in flight per replica{tag}", reps, "in_flight", "requests",
                   "ts-in-flight"),
            _chart(f"queue per replica{tag}", reps, "waiting", "requests", "ts-queue"),
            _chart(f"KV-cache usage per replica{tag}", reps, "kv", "fraction", "ts-kv",
                   fraction=True),
            _chart(f"prefix-cache hit rate per replica{tag}", reps, "hit", "hits / queries",
                   "ts-hit", fraction=True),
        ):
            if chart:
                out.append(chart)
    return out
