"""Reading RUN_DIR/timeseries.jsonl (written by `telemetry.Sampler`): per-role and per-replica
series (tokens/s, requests in flight, queue, KV usage, prefix-cache hit rate) and their
summaries over the run. Pure functions of the file; the report and `agentsweep bench` use them.

The file holds one header line (`{"start": wall time, "interval_s": ...}`) per process that ran
(a resume appends a new one) followed by that process's rows of cumulative counters. Rates come
from differences between consecutive rows of the same process.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from evaluator.run.telemetry import TIMESERIES_FILE


def read_segments(run_dir: str | Path) -> list[tuple[float, list[dict[str, Any]]]]:
    """[(wall start, rows)] per process; [] when the run has no time series."""
    path = Path(run_dir) / TIMESERIES_FILE
    if not path.exists():
        return []
    out: list[tuple[float, list[dict[str, Any]]]] = []
    for line in path.read_bytes().splitlines():
        try:
            row = msgspec.json.decode(line)
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            continue  # a torn last line (killed mid-write)
        if "start" in row:
            out.append((float(row["start"]), []))
        elif out:
            out[-1][1].append(row)
    return [(s, rows) for s, rows in out if rows]


def _rate(a: float | None, b: float | None, dt: float) -> float | None:
    if a is None or b is None or dt <= 0 or b < a:
        return None
    return (b - a) / dt


def _ratio(num: float, den: float) -> float | None:
    return num / den if den > 0 else None


def _key(r: dict[str, Any]) -> str:
    return f"{r['role']} {r['url']}"


def series(run_dir: str | Path) -> dict[str, Any]:
    """{"roles": {role: {t, tok_s, in_flight}}, "replicas": {role url: {t, tok_s, in_flight,
    waiting, kv, hit}}}; t in seconds since the first process started."""
    segs = read_segments(run_dir)
    roles: dict[str, dict[str, list[Any]]] = {}
    reps: dict[str, dict[str, list[Any]]] = {}
    t0 = segs[0][0] if segs else 0.0
    for start, rows in segs:
        off = start - t0
        for prev, row in zip([None, *rows[:-1]], rows, strict=True):
            t = round(off + row["t"], 3)
            dt = row["t"] - prev["t"] if prev else 0.0
            for name, r in row["roles"].items():
                p = prev["roles"].get(name) if prev else None
                s = roles.setdefault(name, {"t": [], "tok_s": [], "in_flight": []})
                s["t"].append(t)
                s["tok_s"].append(_rate(p and p["prompt"] + p["completion"],
                                        r["prompt"] + r["completion"], dt) if p else None)
                s["in_flight"].append(r["in_flight"])
            before = {_key(r): r for r in prev["replicas"]} if prev else {}
            for r in row["replicas"]:
                p = before.get(_key(r))
                s = reps.setdefault(_key(r), {"t": [], "tok_s": [], "in_flight": [],
                                              "waiting": [], "kv": [], "hit": []})
                s["t"].append(t)
                s["tok_s"].append(_rate(p["prompt"] + p["completion"],
                                        r["prompt"] + r["completion"], dt) if p else None)
                s["in_flight"].append(r["in_flight"])
                s["waiting"].append(r["waiting"] + (r.get("queued") or 0))
                s["kv"].append(r.get("kv"))
                hit = None
                if p and r.get("pq") is not None and p.get("pq") is not None:
                    dq, dh = r["pq"] - p["pq"], r["ph"] - p["ph"]
                    hit = dh / dq if dq > 0 and dh >= 0 else None
                s["hit"].append(hit)
    return {"roles": roles, "replicas": reps}


def summary(run_dir: str | Path) -> dict[str, Any]:
    """Totals over the run: per role and per replica requests/s, prompt and completion tokens/s,
    per-request cache hit rate (cached / prompt tokens), /metrics hit rate (Δhits / Δqueries),
    mean and peak KV usage, peak queue and mean requests in flight; and the sampled seconds."""
    segs = read_segments(run_dir)
    roles: dict[str, dict[str, float]] = {}
    reps: dict[str, dict[str, Any]] = {}
    seconds = 0.0
    for _start, rows in segs:
        first, last = rows[0], rows[-1]
        seconds += last["t"] - first["t"]
        for name, r in last["roles"].items():
            a = first["roles"].get(name, {})
            acc = roles.setdefault(name, {"calls": 0, "prompt": 0, "completion": 0,
                                          "cached": 0, "model_s": 0.0})
            for k in acc:
                acc[k] += r[k] - a.get(k, 0)
        begin = {_key(r): r for r in first["replicas"]}
        for r in last["replicas"]:
            a = begin.get(_key(r), {})
            acc = reps.setdefault(_key(r), {"role": r["role"], "url": r["url"], "requests": 0,
                                            "prompt": 0, "completion": 0, "cached": 0,
                                            "pq": 0.0, "ph": 0.0, "kv": [], "queue": 0,
                                            "in_flight": []})
            # answered requests, as the roles count calls (a request sent before the first
            # sample and answered after it is in both); telemetry of older runs: sent
            done = "answered" if "answered" in r else "requests"
            acc["requests"] += r[done] - a.get(done, 0)
            for k in ("prompt", "completion", "cached"):
                acc[k] += r[k] - a.get(k, 0)
            # /metrics counters: from the first row that has them (the first poll)
            a = next((x for row in rows for x in row["replicas"]
                      if _key(x) == _key(r) and x.get("pq") is not None), {})
            if r.get("pq") is not None and a.get("pq") is not None:
                acc["pq"] += r["pq"] - a["pq"]
                acc["ph"] += r["ph"] - a["ph"]
        for row in rows:
            for r in row["replicas"]:
                acc = reps.get(_key(r))
                if acc is None:
                    continue
                if r.get("kv") is not None:
                    acc["kv"].append(r["kv"])
                acc["queue"] = max(acc["queue"], r["waiting"] + (r.get("queued") or 0))
                acc["in_flight"].append(r["in_flight"])
    out_roles = {name: _rates(a, seconds, a["calls"]) for name, a in roles.items()}
    out_reps = []
    for a in reps.values():
        d = _rates(a, seconds, a["requests"])
        kv, inf = a["kv"], a["in_flight"]
        d.update(role=a["role"], url=a["url"], metrics_hit_rate=_ratio(a["ph"], a["pq"]),
                 kv_mean=sum(kv) / len(kv) if kv else None, kv_peak=max(kv) if kv else None,
                 queue_peak=a["queue"], in_flight_mean=sum(inf) / len(inf) if inf else None)
        out_reps.append(d)
    return {"seconds": round(seconds, 3), "roles": out_roles, "replicas": out_reps}


def _rates(a: dict[str, Any], seconds: float, requests: float) -> dict[str, Any]:
    s = seconds if seconds > 0 else None
    return {
        "requests": requests, "prompt_tokens": a["prompt"], "completion_tokens": a["completion"],
        "cached_tokens": a["cached"],
        "requests_per_s": requests / s if s else None,
        "prompt_tok_s": a["prompt"] / s if s else None,
        "completion_tok_s": a["completion"] / s if s else None,
        "request_hit_rate": _ratio(a["cached"], a["prompt"]),
    }
