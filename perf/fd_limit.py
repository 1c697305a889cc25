"""Open-file limit benchmark: 20,004 concurrent episodes under a hard limit of 1,024 descriptors.

    python -m perf.fd_limit [--episodes 20004] [--concurrency 20000] [--nofile 1024]
                            [--compare] [--sleep 0.05] [--keep DIR]

Each round is a real `agentsweep run` (CLI, scheduler, role clients, admission, sandbox, result
writer) of the built-in sample (12 TravelBench-shaped tasks; 20,004 episodes = 1,667 trials) in
a child process whose soft AND hard RLIMIT_NOFILE are set to `--nofile` before it starts, so
`agentsweep` lifting its soft limit to the hard one cannot escape the limit. Every episode may
start at once (`--concurrency`) and the admission caps ask for as many requests in flight
(`admission.initial_cap` / `max_cap`); the run has to fit them into its descriptors.

The model is `perf.stub_server` in separate processes with this process's (higher) limit:
the agent makes tool calls the sample cache does not hold (unseen web searches), so the tool
simulator is asked and its answers go through the simulated-answer store (one append-only
log); multi-turn tasks talk to the user simulator. `--sleep` seconds per answer keep the
episodes in flight together.

Printed per round: the admission cap the run chose (requests in flight), units finished,
units failed (must be 0), EMFILE / ENFILE retries absorbed (request attempts retried by the
clients + episode attempts retried by the scheduler), peak open descriptors of the run process
(sampled every 50 ms), its peak RSS and the wall time. `--compare` runs the same sweep with the
limit this process has (its hard limit) beside it. Exit code 1 when a unit failed or did not
finish in any round. Measurements, not tests (tests/evaluator/test_fdlimit.py runs a small
version).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SAMPLE_TASKS = 12
# the agent's tool calls (picked by the request hash): misses of the sample cache, answered by
# the tool simulator once per distinct call and then read back from the simulated-answer log
TOOL_CHOICES = [["web_search", {"query": f"fd benchmark unseen query {i}"}] for i in range(24)]
TOOL_CHOICES += [["weather_current_conditions", {"location": "Suzhou"}]]


def _toml(headers: dict[str, str]) -> str:
    return "{ " + ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in headers.items()) + " }"


def run_command(url: str, out: Path, name: str, trials: int, concurrency: int, sleep_s: float,
                home: Path) -> list[str]:
    """The `agentsweep run` command line of one round."""
    agent = {"X-Stub-Mode": "tool", "X-Stub-Tool-Turns": "2", "X-Stub-Tool-Share": "0.8",
             "X-Stub-Tool-Choices": json.dumps(TOOL_CHOICES),
             "X-Stub-Replies": "Here is your plan.||I found two options.||[Unsolved]"}
    slow = {"X-Stub-Sleep": str(sleep_s)} if sleep_s > 0 else {}
    return [sys.executable, "-m", "evaluator.cli", "run", "--engine-url", url,
            "--out", str(out), "--name", name, "--trials", str(trials),
            "--concurrency", str(concurrency), "--progress", "off",
            "--set", f"agent.endpoint.extra_headers={_toml({**agent, **slow})}",
            "--set", f"user.endpoint.extra_headers={_toml(slow)}",
            "--set", f"tool_simulator.endpoint.extra_headers={_toml(slow)}",
            "--set", f"admission.initial_cap={concurrency}",
            "--set", f"admission.max_cap={concurrency}",
            "--set", f'sandbox.simulated_store="{home / "simulated"}"',
            "--set", "retry.backoff_s=0.05", "--set", "retry.max_attempts=20"]


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ, AGENTSWEEP_HOME=str(home))
    env.pop("AGENTSWEEP_PLUGINS", None)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _fds(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def run_round(cmd: list[str], env: dict[str, str], nofile: int | None, log: Path,
              timeout_s: float) -> dict[str, Any]:
    """Run `cmd` with RLIMIT_NOFILE = (nofile, nofile) (None: inherited), a limit the child
    cannot raise; returns the exit code, wall time, peak open descriptors (sampled every
    50 ms) and peak RSS (wait4)."""
    if nofile is not None:  # bash's `ulimit -n` sets the soft and the hard limit
        cmd = ["bash", "-c", f'ulimit -n {int(nofile)} && exec "$@"', "fd-limit", *cmd]
    with open(log, "wb") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
        peak_fds = 0
        deadline = t0 + timeout_s
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                _, status, usage = os.wait4(proc.pid, 0)
                break
            peak_fds = max(peak_fds, _fds(proc.pid))
            time.sleep(0.05)
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {"rc": proc.returncode, "wall_s": wall, "peak_fds": peak_fds,
            "peak_rss_mb": usage.ru_maxrss / 1024}


def read_run(run_dir: Path) -> dict[str, Any]:
    """Finished and failed units, and the run's EMFILE / ENFILE retries (its manifest)."""
    from evaluator.run.manifest import read_manifest
    from evaluator.run.results import iter_failures, iter_records

    keys = {r.unit.key for r in iter_records(run_dir)}
    failures = list(iter_failures(run_dir))
    out: dict[str, Any] = {"finished": len(keys), "failed": len(failures),
                           "failure": failures[0].error if failures else ""}
    try:
        end = read_manifest(run_dir).ends[-1]
    except (FileNotFoundError, IndexError):
        end = None
    out["fd_request_retries"] = end.fd_request_retries if end else 0
    out["fd_episode_retries"] = end.fd_episode_retries if end else 0
    out["infra_retries"] = end.infra_retries if end else 0
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m perf.fd_limit", description=__doc__.split("\n")[0])
    p.add_argument("--episodes", type=int, default=20_004,
                   help="episodes (rounded up to whole trials of the 12 sample tasks)")
    p.add_argument("--concurrency", type=int, default=20_000,
                   help="episodes in flight, and the requests in flight asked for")
    p.add_argument("--nofile", type=int, default=1024, help="soft and hard RLIMIT_NOFILE")
    p.add_argument("--compare", action="store_true",
                   help="also run with this process's hard limit")
    p.add_argument("--sleep", type=float, default=0.05, help="stub seconds per answer")
    p.add_argument("--stub-processes", type=int, default=1)
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds per round")
    p.add_argument("--keep", default="", help="keep the run directories here")
    a = p.parse_args(argv)

    from backends.fdlimit import raise_nofile_limit
    from perf.stub_server import start_stub

    soft, hard = raise_nofile_limit()  # the stub (and --compare) get this process's hard limit
    trials = -(-a.episodes // SAMPLE_TASKS)
    rounds: list[tuple[str, int | None]] = [(f"nofile {a.nofile}", a.nofile)]
    if a.compare:
        rounds.append((f"nofile {hard} (hard)", None))
    tmp_ctx = tempfile.TemporaryDirectory(prefix="perf-fd-") if not a.keep else None
    root = Path(tmp_ctx.name if tmp_ctx else a.keep)
    root.mkdir(parents=True, exist_ok=True)
    print(f"fd-limit benchmark: {SAMPLE_TASKS * trials} episodes of the sample ({trials} "
          f"trials), concurrency {a.concurrency}, requests in flight asked {a.concurrency}, "
          f"stub sleep {a.sleep}s, {a.stub_processes} stub process(es) at nofile {soft}")
    head = (f"{'limit':<20}{'cap':>6}{'finished':>9}{'failed':>7}{'EMFILE retries':>15}"
            f"{'peak fds':>9}{'peak RSS':>10}{'wall':>8}")
    print(head)
    print("-" * len(head), flush=True)
    worst = 0
    try:
        for i, (label, nofile) in enumerate(rounds):
            home = root / f"home{i}"
            home.mkdir(exist_ok=True)
            with start_stub("--mode", "text", processes=a.stub_processes) as stub:
                cmd = run_command(stub.url, root, f"r{i}", trials, a.concurrency, a.sleep, home)
                r = run_round(cmd, _env(home), nofile, root / f"r{i}.log", a.timeout)
            r.update(read_run(root / f"r{i}"))
            m = re.search(r"capped at (\d+)", (root / f"r{i}.log").read_text(errors="replace"))
            r["cap"] = m.group(1) if m else str(a.concurrency)
            worst = max(worst, r["failed"], SAMPLE_TASKS * trials - r["finished"])
            fd = f"{r['fd_request_retries']}+{r['fd_episode_retries']}"
            print(f"{label:<20}{r['cap']:>6}{r['finished']:>9}{r['failed']:>7}{fd:>15}"
                  f"{r['peak_fds']:>9}{r['peak_rss_mb']:>8.0f}MB{r['wall_s']:>7.0f}s", flush=True)
            if r["rc"] != 0 or r["failed"]:
                tail = (root / f"r{i}.log").read_text(errors="replace")[-1500:]
                print(f"  exit code {r['rc']}; first failure: {r['failure'][:300]}\n"
                      f"  log tail:\n{tail}", flush=True)
        print("EMFILE retries: request attempts the clients retried + episode attempts the "
              "scheduler retried for want of a descriptor (absorbed: none became a failed unit)")
    finally:
        if tmp_ctx is not None:
            tmp_ctx.cleanup()
    return 1 if worst else 0


if __name__ == "__main__":
    sys.exit(main())
