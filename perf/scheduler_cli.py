"""`python -m perf.scheduler --cli`: the whole `agentsweep run` process on real TravelBench data
against the HTTP stub, as a user runs it: CPU per model call and start-up CPU.

The workload is `perf.equal_work`'s (the first `--cli-tasks` single_turn tasks x `--cli-trials`
trials at concurrency `--cli-concurrency`, three agent calls and two cached tool calls per
episode, a zero-latency stub). Each run is a child process measured alone (os.wait4): its CPU
seconds (user + system, threads included), wall seconds and peak RSS; the stub counts the model
calls. Start-up = the CPU of the same command with one task and one trial (three model calls):
interpreter, imports, config, data, store, the first episode, exit.

`--baseline DIR` runs the same commands from another checkout (e.g. `git archive <rev> | tar
-x -C DIR`), alternating with this one `--repeat` times, and prints both side by side with the
ratios: a before/after measured on one machine at one time. Medians with (min-max) spreads: the
development machine is shared, CPU time is steadier than wall time but not exact.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from perf.equal_work import (
    REPO,
    ProcResult,
    agent_stub_args,
    agentsweep_run_cmd,
    child_env,
    import_store,
    measure,
    spread,
    task_lines,
    travelbench_dir,
    user_stub_args,
    write_cache,
)
from perf.stub_process import start_stub, stub_counters


def _one(tree: Path, work: Path, name: str, tasks: int, trials: int, concurrency: int,
         urls: dict[str, str], store: Path, data_dir: Path) -> tuple[ProcResult, int]:
    cmd = agentsweep_run_cmd(data_dir=data_dir, subset="single_turn", tasks=tasks,
                             trials=trials, concurrency=concurrency, agent_url=urls["agent"],
                             user_url=urls["user"], store=store, out=work / "runs", name=name)
    before = stub_counters(urls["agent"])["requests"]
    r = measure(cmd, cwd=tree, env=child_env(work, tree), log=work / f"{name}.log")
    calls = stub_counters(urls["agent"])["requests"] - before
    if r.rc != 0:
        raise SystemExit(f"agentsweep run ({tree}) failed, exit {r.rc}:\n{r.tail}")
    return r, calls


def cli_round(tasks: int, trials: int, concurrency: int, repeat: int, baseline: Path | None,
              data_dir: str | None) -> dict[str, Any]:
    tb = travelbench_dir(data_dir)
    if tb is None:
        raise SystemExit("perf.scheduler --cli needs TravelBench's task files (<data dir>/"
                         "travelbench/single_turn.jsonl): pass --data-dir or set "
                         "$AGENTSWEEP_DATA_DIR")
    trees = {"current": REPO} | ({"baseline": baseline.resolve()} if baseline else {})
    out: dict[str, dict[str, list[float]]] = {
        k: {"startup": [], "cpu": [], "wall": [], "rss": [], "calls": []} for k in trees}
    with tempfile.TemporaryDirectory(prefix="perf-sched-cli-") as tmp:
        work = Path(tmp)
        lines = task_lines(tb, "single_turn", tasks)
        write_cache(work / "cache", lines)
        store = work / "tb.store"
        import_store(work / "cache", store, child_env(work, REPO))
        with start_stub(*agent_stub_args(0)) as agent, start_stub(*user_stub_args(0)) as user:
            urls = {"agent": agent.url, "user": user.url}
            for label, tree in trees.items():  # warm-up: bytecode written, files cached
                _one(tree, work, f"warm-{label}", 1, 1, concurrency, urls, store, tb.parent)
            for i in range(repeat):
                for label, tree in trees.items():
                    s, _ = _one(tree, work, f"s{i}-{label}", 1, 1, concurrency, urls, store,
                                tb.parent)
                    r, calls = _one(tree, work, f"r{i}-{label}", len(lines), trials,
                                    concurrency, urls, store, tb.parent)
                    o = out[label]
                    o["startup"].append(s.cpu_s)
                    o["cpu"].append(r.cpu_s)
                    o["wall"].append(r.wall_s)
                    o["rss"].append(r.peak_rss_mb)
                    o["calls"].append(calls)
    return {"tasks": len(lines), "trials": trials, "concurrency": concurrency,
            "repeat": repeat, "trees": {k: str(v) for k, v in trees.items()}, "runs": out}


def _fmt(values: list[float], digits: int) -> str:
    m, lo, hi = spread(values)
    return f"{m:.{digits}f} ({lo:.{digits}f}-{hi:.{digits}f})"


def print_cli(r: dict[str, Any]) -> None:
    episodes = r["tasks"] * r["trials"]
    print(f"\nagentsweep run, the whole process (CPU = user + system of the run process alone, "
          f"os.wait4): real TravelBench single_turn, {r['tasks']} tasks x {r['trials']} trials "
          f"= {episodes} episodes, concurrency {r['concurrency']}, zero-latency HTTP stub, "
          f"2 cached tool calls per episode; median (min-max) of {r['repeat']} runs")
    print(f"{'tree':>9} {'start-up CPU s':>17} {'run CPU s':>17} {'calls':>6} "
          f"{'CPU ms/call':>17} {'after start-up us/call':>23} {'ep/s':>13} {'peak RSS MB':>12}")
    per_call: dict[str, list[float]] = {}
    startup: dict[str, list[float]] = {}
    for label, o in r["runs"].items():
        calls = o["calls"]
        per_call[label] = [1000 * c / n for c, n in zip(o["cpu"], calls, strict=True)]
        after = [1e6 * (c - s) / n for c, s, n in zip(o["cpu"], o["startup"], calls, strict=True)]
        eps = [episodes / w for w in o["wall"]]
        startup[label] = o["startup"]
        print(f"{label:>9} {_fmt(o['startup'], 2):>17} {_fmt(o['cpu'], 2):>17} "
              f"{int(calls[0]):>6} {_fmt(per_call[label], 3):>17} {_fmt(after, 0):>23} "
              f"{_fmt(eps, 0):>13} {spread(o['rss'])[0]:>12.0f}")
    if "baseline" in r["runs"]:
        b, c = r["runs"]["baseline"], r["runs"]["current"]
        print(f"ratio baseline / current: CPU per call "
              f"{spread(per_call['baseline'])[0] / spread(per_call['current'])[0]:.2f}x, "
              f"start-up CPU {spread(b['startup'])[0] / spread(c['startup'])[0]:.2f}x, "
              f"run CPU {spread(b['cpu'])[0] / spread(c['cpu'])[0]:.2f}x")
    cur = r["runs"]["current"]
    print(f"targets: CPU per model call < 0.5 ms (whole run, start-up included): "
          f"{spread(per_call['current'])[0]:.3f} ms; start-up < 0.5 s: "
          f"{spread(cur['startup'])[0]:.2f} s")
