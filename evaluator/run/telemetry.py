"""Run telemetry off the hot path: per-role counters, the optional per-call log, and the
sampler task that writes RUN_DIR/timeseries.jsonl.

Episode code only bumps integers and floats (`RoleStats`) and, when a bench asked for it,
appends one tuple per model call to `RoleStats.log`. The `Sampler` task wakes every
`interval_s`, reads those counters, each router's `snapshot()` and the last `/metrics` scrape
of each unrouted endpoint, and appends one JSON line (cumulative counts and gauges; rates are
derived when the file is read, `evaluator.run.throughput`). Nothing here renders or logs on
the request path.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import msgspec

TIMESERIES_FILE = "timeseries.jsonl"
CALLS_FILE = "calls.jsonl"
ESTIMATE_FILE = "estimate.json"

_ENC = msgspec.json.Encoder()


class RoleStats:
    """Counters of one role's model calls (cumulative; `in_flight` is a gauge). `log`, when a
    list, gets one `(t, episode, prompt, cached, completion, system_chars)` per answered call
    (`episode`: the ticket order, None for calls outside an episode)."""

    __slots__ = ("cached_tokens", "calls", "completion_tokens", "in_flight", "log", "model_s",
                 "prompt_tokens")

    def __init__(self) -> None:
        self.calls = 0
        self.in_flight = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.cached_tokens = 0
        self.model_s = 0.0  # wall time of answered calls, admission waits included
        self.log: list[tuple[Any, ...]] | None = None

    def answered(self, usage: Any, seconds: float, episode: int | None,
                 messages: Any) -> None:
        self.calls += 1
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        self.cached_tokens += usage.cached_tokens
        self.model_s += seconds
        log = self.log
        if log is not None:
            first = messages[0] if messages else None
            sys_chars = len(first.content or "") if first is not None and \
                first.role == "system" else 0
            log.append((time.monotonic(), episode, usage.prompt_tokens, usage.cached_tokens,
                        usage.completion_tokens, sys_chars))

    def row(self) -> dict[str, Any]:
        return {"calls": self.calls, "in_flight": self.in_flight, "prompt": self.prompt_tokens,
                "completion": self.completion_tokens, "cached": self.cached_tokens,
                "model_s": round(self.model_s, 4)}


def metrics_row(m: Any) -> dict[str, Any]:
    """The gauges and counters of a `VLLMMetrics` snapshot worth a time series."""
    if m is None:
        return {}
    out = {"running": m.requests_running, "queued": m.requests_waiting,
           "kv": m.kv_cache_usage, "pq": m.prefix_cache_queries, "ph": m.prefix_cache_hits,
           "preemptions": m.preemptions}
    return {k: v for k, v in out.items() if v is not None}


class Sampler:
    """Appends one line to `path` every `interval_s` until cancelled (then one last line).

    roles: role name -> RoleEndpoint; routers: role name -> Router; endpoints: base URL ->
    (role names, AdmissionController, a callable giving the last VLLMMetrics or None)."""

    def __init__(self, path: Path, counters: Any, roles: dict[str, Any],
                 routers: dict[str, Any], endpoints: dict[str, tuple[list[str], Any, Any]],
                 interval_s: float = 1.0) -> None:
        self.path = Path(path)
        self.counters = counters
        self.roles = roles
        self.routers = routers
        self.endpoints = endpoints
        self.interval_s = interval_s
        self.started = time.monotonic()
        self.wall_started = time.time()
        self.rows = 0

    def sample(self) -> dict[str, Any]:
        c = self.counters
        row: dict[str, Any] = {
            "t": round(time.monotonic() - self.started, 3),
            "episodes": c.episodes_done, "running": c.episodes_in_flight,
            "roles": {name: ep.stats.row() for name, ep in self.roles.items()},
        }
        reps: list[dict[str, Any]] = []
        for role, router in self.routers.items():
            for i, r in enumerate(router.snapshot()["replicas"]):
                rep = router.replicas[i]
                reps.append({
                    "role": role, "url": r["url"], "healthy": r["healthy"],
                    "requests": r["requests"], "answered": rep.answered,
                    "in_flight": r["in_flight"],
                    "waiting": r["waiting"], "cap": r["cap"],
                    "prompt": rep.prompt_tokens, "completion": rep.completion_tokens,
                    "cached": rep.cached_tokens, **metrics_row(rep.admission.last_metrics),
                })
        for url, (names, adm, last) in self.endpoints.items():
            stats = [self.roles[n].stats for n in names if n in self.roles]
            answered = sum(s.calls for s in stats)  # unrouted: the roles' calls, all answered
            reps.append({
                "role": ",".join(names), "url": url, "healthy": True,
                "requests": answered, "answered": answered, "in_flight": adm.in_flight,
                "waiting": adm.waiting, "cap": adm.cap,
                "prompt": sum(s.prompt_tokens for s in stats),
                "completion": sum(s.completion_tokens for s in stats),
                "cached": sum(s.cached_tokens for s in stats), **metrics_row(last()),
            })
        row["replicas"] = reps
        return row

    async def run(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fh = await asyncio.to_thread(open, self.path, "ab")
        with fh:
            fh.write(_ENC.encode({"start": self.wall_started, "interval_s": self.interval_s})
                     + b"\n")
            fh.write(_ENC.encode(self.sample()) + b"\n")  # the baseline at t = 0
            try:
                while True:
                    await asyncio.sleep(self.interval_s)
                    fh.write(_ENC.encode(self.sample()) + b"\n")
                    self.rows += 1
                    if self.rows % 5 == 0:
                        fh.flush()
            finally:
                fh.write(_ENC.encode(self.sample()) + b"\n")
                fh.flush()


def write_call_log(run_dir: Path, roles: dict[str, Any]) -> Path:
    """RUN_DIR/calls.jsonl from the roles' call logs (after the run: one write)."""
    path = Path(run_dir) / CALLS_FILE
    lines = []
    for name, ep in roles.items():
        for t, episode, prompt, cached, completion, sys_chars in ep.stats.log or ():
            lines.append(_ENC.encode({"role": name, "t": round(t, 4), "episode": episode,
                                      "prompt": prompt, "cached": cached,
                                      "completion": completion, "system_chars": sys_chars}))
    path.write_bytes(b"\n".join(lines) + (b"\n" if lines else b""))
    return path


def write_estimate(run_dir: Path, estimate: dict[str, Any]) -> None:
    """A bench's sweep estimate given to `agentsweep run --estimate`: the report compares it
    with the run's actual wall time."""
    Path(run_dir, ESTIMATE_FILE).write_bytes(msgspec.json.format(_ENC.encode(estimate)))
