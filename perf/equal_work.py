"""The equal-work TravelBench workload that `perf.scheduler --cli` and `perf.vs_reference` run,
and how they measure a harness process.

Workload: the first N tasks of a real TravelBench subset (single_turn or multi_turn), each
episode answered by the stub server (`perf.stub_server`): the agent calls two tools on its first
turn (`TOOL_CALLS`, the same arguments in every episode), then answers; in multi_turn a second
stub plays the user simulator and ends the conversation after `USER_TURNS` answers. Both tool
calls of every task hit the tool cache: `write_cache` writes a release-layout cache
(`<tool>_cache.json`, keyed as the reference keys its cache: `cache_store.keys`) holding them for
every task's time. The reference harness reads that directory as its sandbox cache;
agentsweep reads the store `agentsweep cache import` makes of it. Nothing is simulated, nothing
is judged: what is left is each harness's own work per model call.

Measurement: each harness runs as a child process; `measure` waits for it with `os.wait4`, so
its CPU time (user + system, its threads included) and peak RSS are the kernel's account of that
process alone, not of the stub. Model calls are counted by the stubs (`/stub/counters`).
Python bytecode is cached (`PYTHONPYCACHEPREFIX` in the work directory, a warm-up run first), as
after an install; an environment with PYTHONDONTWRITEBYTECODE would otherwise compile every
module on every start.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TOOL_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("weather_current_conditions", {"location": "上海市"}),
    ("web_search", {"query": "上海 周末 景点"}),
]
"""The agent stub's tool calls on an episode's first turn (the same for every task)."""
USER_TURNS = 3
"""multi_turn: the user simulator stub answers this many times, the last one ending the
conversation with TravelBench's finish marker."""
FINISH_MARKER = "[Finish Conversation]"
SUBSET_FILES = {"single_turn": "single_turn.jsonl", "multi_turn": "multi_turn.jsonl"}


def travelbench_dir(data_dir: str | Path | None) -> Path | None:
    """`<data dir>/travelbench` with the subsets' task files, or None."""
    from bench_data.registry import resolve_data_dir

    root = resolve_data_dir(data_dir)
    if root is None:
        return None
    d = Path(root) / "travelbench"
    return d if all((d / f).is_file() for f in SUBSET_FILES.values()) else None


def task_lines(tb_dir: Path, subset: str, n: int) -> list[str]:
    """The first `n` task lines of a subset's file (as the harnesses read them)."""
    out = []
    with open(tb_dir / SUBSET_FILES[subset], encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                out.append(line if line.endswith("\n") else line + "\n")
                if len(out) == n:
                    break
    return out


def write_cache(out: Path, lines: list[str]) -> int:
    """A release-layout cache answering `TOOL_CALLS` at every task time of `lines`; returns
    the number of entries. The answers are the same text for every key, a few hundred bytes."""
    from cache_store.keys import normalize_call

    times = sorted({json.loads(line)["time"] for line in lines})
    out.mkdir(parents=True, exist_ok=True)
    n = 0
    for name, args in TOOL_CALLS:
        results = [f"{name} result {i}: " + "内容 " * 40 for i in range(5)]
        answer = json.dumps({"results": results}, ensure_ascii=False)
        entries = {normalize_call(args, t): answer for t in times}
        (out / f"{name}_cache.json").write_text(json.dumps(entries, ensure_ascii=False),
                                                encoding="utf-8")
        n += len(entries)
    return n


def agent_stub_args(latency_ms: float) -> list[str]:
    calls = json.dumps([[n, a] for n, a in TOOL_CALLS], ensure_ascii=False)
    return ["--mode", "tool", "--tool-turns", str(len(TOOL_CALLS)), "--tool-calls", calls,
            "--sleep", f"{latency_ms / 1000:g}"]


def user_stub_args(latency_ms: float) -> list[str]:
    return ["--mode", "text", "--replies", "Tell me more, please.||What else would you suggest?",
            "--finish-after", str(USER_TURNS), "--finish-text", FINISH_MARKER,
            "--sleep", f"{latency_ms / 1000:g}"]


def child_env(work: Path, pythonpath: Path | None = None) -> dict[str, str]:
    """The children's environment: bytecode cached under `work`, no debug output."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    env.pop("AGENTSWEEP_DEBUG", None)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath) + os.pathsep + env.get("PYTHONPATH", "")
    return env


@dataclass
class ProcResult:
    """One harness process: exit status, wall and CPU seconds, peak RSS, its output's tail."""

    rc: int
    wall_s: float
    cpu_s: float
    peak_rss_mb: float
    tail: str


def measure(cmd: list[str], *, cwd: Path, env: dict[str, str], timeout_s: float = 1800.0,
            log: Path | None = None) -> ProcResult:
    """Run `cmd` to its end and account for it alone (os.wait4). Output goes to `log`."""
    log = log or Path(cwd) / "harness.log"
    with open(log, "wb") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout_s
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    tail = log.read_bytes()[-3000:].decode("utf-8", "replace")
    return ProcResult(proc.returncode, wall, usage.ru_utime + usage.ru_stime,
                      usage.ru_maxrss / 1024, tail)


def agentsweep_run_cmd(*, data_dir: Path, subset: str, tasks: int, trials: int,
                       concurrency: int, agent_url: str, user_url: str, store: Path,
                       out: Path, name: str) -> list[str]:
    """`agentsweep run` of the workload (paper profile, real data, the imported store)."""
    return [sys.executable, "-m", "evaluator.cli", "run", "--data", "travelbench",
            "--data-dir", str(data_dir), "--subset", subset, "--limit", str(tasks),
            "--trials", str(trials), "--concurrency", str(concurrency),
            "--agent-url", agent_url, "--agent-model", "stub-model",
            "--set", f"user.endpoint.base_url={user_url}",
            "--set", "user.endpoint.model=stub-model",
            "--set", f"tool_simulator.endpoint.base_url={agent_url}",
            "--set", "tool_simulator.endpoint.model=stub-model",
            "--set", f"sandbox.store={store}", "--set", f"sandbox.simulated_store={out}/sim-{name}",
            "--progress", "off", "--out", str(out), "--name", name]


def import_store(cache_dir: Path, store: Path, env: dict[str, str]) -> None:
    """`agentsweep cache import` of the workload's cache (this checkout's importer)."""
    r = subprocess.run([sys.executable, "-m", "evaluator.cli", "cache", "import", str(cache_dir),
                        "--out", str(store)], cwd=REPO, env=env, capture_output=True, text=True,
                       check=False)
    if r.returncode != 0:
        raise SystemExit(f"agentsweep cache import failed: {r.stderr or r.stdout}")


def spread(values: list[float]) -> tuple[float, float, float]:
    """(median, min, max)."""
    v = sorted(values)
    mid = len(v) // 2
    median = v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2
    return median, v[0], v[-1]


def ratio_line(ours: dict[str, Any], ref: dict[str, Any], unequal: str = "") -> str:
    """The side-by-side ratio line under a case (episodes/s, CPU and peak RSS of the reference
    over agentsweep's), with `unequal` (what differed in the work done) said when not empty."""
    return (f"{'':>11} {'':>6} {'ratio':>10} agentsweep/reference: episodes/s "
            f"{ref['wall_s'] / ours['wall_s']:.1f}x, CPU per episode "
            f"{ref['cpu_s'] / ours['cpu_s']:.1f}x less, peak RSS "
            f"{ref['peak_rss_mb'] / ours['peak_rss_mb']:.1f}x less"
            + (f"  (UNEQUAL WORK: {unequal})" if unequal else ""))
