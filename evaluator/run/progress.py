"""Run telemetry: plain counters bumped on the hot path, rendered by a separate task.

Episode code only increments integers (`Counters`); `progress_task` wakes every second or so,
computes rates from deltas and writes one line to stderr (live `\\r` line on a TTY, a plain
line every few seconds with "plain", and with "auto" off a TTY, e.g. a job log, a plain line
every 30 s), with each router's replicas up, failovers and restarts; a router's new notes (a
replica out or back, a failed restart) get a line of their own when they appear. `Summary` folds finished records into the end-of-run summary.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, TextIO

from backends.types import Usage
from evaluator.records import EpisodeRecord


class Counters:
    """Monotonic counters of one run (plus a few gauges). Only integers on the hot path."""

    __slots__ = (
        "cached_tokens",
        "calls",
        "calls_in_flight",
        "completion_tokens",
        "episodes_done",
        "episodes_in_flight",
        "errors",
        "fd_retries",
        "infra_failures",
        "infra_retries",
        "prefix_hit_rate",
        "prompt_tokens",
        "replayed_calls",
        "started",
        "tool_calls",
        "tool_errors",
        "tool_hits",
        "tool_simulated",
        "units_skipped",
        "units_total",
    )

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.units_total = 0
        self.units_skipped = 0  # finished before this process started (resume)
        self.episodes_done = 0
        self.episodes_in_flight = 0
        self.infra_failures = 0  # units whose infra retries were exhausted
        self.infra_retries = 0  # episode attempts lost to infrastructure errors
        self.fd_retries = 0  # of which for want of a file descriptor (EMFILE / ENFILE)
        self.errors = 0  # episodes that raised something else (bugs, 4xx): failures.jsonl
        self.calls = 0
        self.calls_in_flight = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.cached_tokens = 0
        self.tool_calls = 0
        self.tool_hits = 0
        self.tool_simulated = 0
        self.tool_errors = 0
        self.prefix_hit_rate: float | None = None  # from the server's /metrics, when known
        self.replayed_calls = 0  # model calls answered from the run's journal (resume)

    def add_usage(self, usage: Usage) -> None:
        self.calls += 1
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        self.cached_tokens += usage.cached_tokens

    def add_record(self, record: EpisodeRecord) -> None:
        self.episodes_done += 1
        for call in record.tool_calls:
            self.tool_calls += 1
            if call.source == "hit":
                self.tool_hits += 1
            elif call.source == "simulated":
                self.tool_simulated += 1
            elif call.source == "error":
                self.tool_errors += 1


AUTO_PLAIN_EVERY_S = 30.0  # "auto" progress off a TTY (a job log): one plain line this often


def _rate(num: float, den: float) -> str:
    return f"{num / den:.0%}" if den > 0 else "-"


def progress_line(c: Counters, dt: float, d_eps: int, d_tokens: int) -> str:
    done = c.episodes_done + c.units_skipped
    parts = [
        f"{done}/{c.units_total} episodes",
        f"{c.episodes_in_flight} running",
        f"{d_eps / dt:.1f} ep/s" if dt > 0 else "- ep/s",
        f"{d_tokens / dt:.0f} tok/s" if dt > 0 else "- tok/s",
        f"prompt cached {_rate(c.cached_tokens, c.prompt_tokens)}",
    ]
    if c.prefix_hit_rate is not None:
        parts.append(f"server prefix hits {c.prefix_hit_rate:.0%}")
    parts.append(f"tool cache hits {_rate(c.tool_hits, c.tool_calls)}")
    fd = f", EMFILE {c.fd_retries}" if c.fd_retries else ""
    parts.append(f"errors {c.errors + c.infra_failures} (infra retries {c.infra_retries}{fd})")
    return " | ".join(parts)


def routers_part(routers: dict[str, Any]) -> str:
    """`role: up/N replicas, failovers, restarts` of each router (read off the hot path)."""
    out = []
    for name, r in routers.items():
        up = sum(1 for rep in r.replicas if rep.health.healthy)
        part = f"{name} {up}/{len(r.replicas)} up"
        st = r.stats
        if st.failovers:
            part += f", {st.failovers} failovers"
        if st.restarts:
            part += f", {st.restarts} restarts"
        out.append(part)
    return "replicas " + "; ".join(out) if out else ""


def new_notes(routers: dict[str, Any], seen: dict[str, int]) -> list[str]:
    """Router notes (a replica out or back, a failed restart, no /metrics) not shown yet."""
    out = []
    for name, r in routers.items():
        notes = r.notes
        k = seen.get(name, 0)
        out += [f"router [{name}]: {n}" for n in notes[k:]]
        seen[name] = len(notes)
    return out


async def progress_task(
    counters: Counters,
    mode: str,
    stream: TextIO | None = None,
    interval_s: float = 1.0,
    extra: Callable[[], None] | None = None,
    routers: dict[str, Any] | None = None,
) -> None:
    """Render the progress line until cancelled. mode: "auto" (live line on a TTY, else a
    plain line every `AUTO_PLAIN_EVERY_S`), "plain" (a line every ~5 s), "off"."""
    stream = stream or sys.stderr
    if mode == "off":
        return
    tty = stream.isatty()
    live = tty and mode == "auto"
    period = AUTO_PLAIN_EVERY_S if mode == "auto" and not tty else 5.0
    every = 1 if live else max(1, round(period / interval_s))
    last_t = time.monotonic()
    last_eps = counters.episodes_done
    last_tok = counters.completion_tokens
    tick = 0
    seen: dict[str, int] = {}
    try:
        while True:
            await asyncio.sleep(interval_s)
            tick += 1
            if extra is not None:
                extra()
            if routers:
                for note in new_notes(routers, seen):
                    stream.write(("\r\x1b[2K" if live else "") + note + "\n")
            if tick % every:
                continue
            now = time.monotonic()
            line = progress_line(
                counters, now - last_t, counters.episodes_done - last_eps,
                counters.completion_tokens - last_tok,
            )
            if routers:
                line += " | " + routers_part(routers)
            last_t, last_eps, last_tok = now, counters.episodes_done, counters.completion_tokens
            stream.write(("\r\x1b[2K" + line) if live else line + "\n")
            stream.flush()
    finally:
        if live:
            stream.write("\n")
            stream.flush()


class Summary:
    """End-of-run figures folded from finished records (this process's and resumed ones)."""

    def __init__(self) -> None:
        self.episodes = 0
        self.terminations: Counter[str] = Counter()
        self.tool_sources: Counter[str] = Counter()
        self.tool_errors: Counter[str] = Counter()
        self.usage: dict[str, Usage] = {}
        self.subsets: Counter[str] = Counter()

    def add(self, record: EpisodeRecord) -> None:
        self.episodes += 1
        self.subsets[f"{record.benchmark}/{record.subset}"] += 1
        self.terminations[record.termination] += 1
        for call in record.tool_calls:
            self.tool_sources[call.source] += 1
            if call.source == "error":  # what counts as a tool error (a failed simulation
                self.tool_errors[call.error_category or "error"] += 1  # is an answer)
        for role, u in record.usage.items():
            self.usage.setdefault(role, Usage()).add(u)

    def render(self, *, wall_s: float, counters: Counters, failures: int, run_dir: str) -> str:
        head = (
            f"run {run_dir}: {self.episodes} episodes finished in {wall_s:.1f}s"
            f" ({counters.episodes_done} this session, {counters.units_skipped} resumed)"
        )
        lines = [head]
        if failures:
            lines.append(f"  failures (infrastructure / errors, rerun by --resume): {failures}")
        if counters.infra_retries:
            fd = (f", {counters.fd_retries} of them for want of a file descriptor (EMFILE)"
                  if counters.fd_retries else "")
            lines.append(f"  infrastructure retries: {counters.infra_retries} episode attempts "
                         f"restarted{fd}")
        if counters.replayed_calls:
            lines.append(f"  replayed from the journal: {counters.replayed_calls} model calls "
                         "(answered as before the interruption, not sent again)")
        lines.append("  subsets: " + _fmt(self.subsets))
        lines.append("  terminations: " + _fmt(self.terminations))
        n_tools = sum(self.tool_sources.values())
        lines.append(f"  tool calls: {n_tools}" + (f" ({_fmt(self.tool_sources)})" if n_tools else ""))
        if self.tool_errors:
            lines.append("  tool-call errors: " + _fmt(self.tool_errors))
        total = Usage()
        for role, u in sorted(self.usage.items()):
            total.add(u)
            lines.append(
                f"  tokens [{role}]: prompt {u.prompt_tokens}, completion {u.completion_tokens}, "
                f"cached {u.cached_tokens} ({_rate(u.cached_tokens, u.prompt_tokens)})"
            )
        lines.append(
            f"  cached-token share of prompt tokens: {_rate(total.cached_tokens, total.prompt_tokens)}"
        )
        return "\n".join(lines)


def _fmt(c: Counter[str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in c.most_common()) or "-"
