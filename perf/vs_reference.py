"""agentsweep vs the benchmark's own harness, at equal work, side by side in one run.

    python -m perf.vs_reference --travelbench-ref PATH [--travelbench-python PY]
        [--vitabench-ref PATH --vitabench-python PY] [--tasks 500] [--vitabench-tasks 100]
        [--trials 3] [--concurrency 300] [--latencies 0,50]
        [--subsets single_turn,multi_turn] [--data-dir DIR]

PATH is a checkout of the TravelBench reference (small-xiangcheng/TravelBench); PY a Python
with its inference dependencies (openai, pydantic, numpy; faiss-cpu optional), e.g. a venv
made with `pip install openai==2.3.0 pydantic==2.12.0 numpy faiss-cpu` (its requirements.txt
also names vllm, torch and transformers, which its inference path does not import). Nothing of
the reference enters this repository: it runs from its checkout, configured by its own flags
and environment variables (OPENAI_API_BASE, SANDBOX_CACHE_DIR). Without a checkout (or
$TRAVELBENCH_REFERENCE) the command says what it needs and exits 0.

Both harnesses run `perf.equal_work`'s workload: the same first `--tasks` tasks of the real
TravelBench subset x `--trials` at `--concurrency` episodes (the reference: that many
threads), against the same stub servers at each `--latencies` (ms before every answer): the
agent calls two tools on its first turn, both answered from the same pre-filled cache
(agentsweep: the store imported from it), then answers; in multi_turn the user simulator stub
ends the conversation after three answers. Per run: episodes/s (wall), CPU seconds per
episode and peak RSS of the harness process alone (os.wait4), model calls per episode and tool
cache hits of both (the check that the work is equal), then the ratios.

With `--vitabench-ref PATH --vitabench-python PY` (a checkout of meituan-longcat/vitabench and
a Python where it is installed, `pip install -e PATH`; $VITABENCH_REFERENCE), the same for
VitaBench's own orchestrator on its delivery tasks (perf/vs_reference_vita.py). Either
comparison runs alone when only its checkout is given.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from perf import vs_reference_vita as vita
from perf.equal_work import (
    REPO,
    agent_stub_args,
    agentsweep_run_cmd,
    child_env,
    import_store,
    measure,
    ratio_line,
    task_lines,
    travelbench_dir,
    user_stub_args,
    write_cache,
)
from perf.stub_process import start_stub, stub_counters

REF_ENV = "TRAVELBENCH_REFERENCE"
NEEDS = ("a checkout of the TravelBench reference: git clone "
         "https://github.com/small-xiangcheng/TravelBench PATH, then "
         "--travelbench-ref PATH (or $TRAVELBENCH_REFERENCE), and --travelbench-python PY, a "
         "Python with its inference dependencies (pip install openai pydantic numpy)")


def reference_problem(ref: Path | None, python: str) -> str | None:
    """Why the reference cannot run here (None: it can)."""
    if ref is None:
        return f"TravelBench: skipped: no reference checkout; needs {NEEDS}"
    if not (ref / "travelbench" / "__main__.py").is_file():
        return (f"TravelBench: skipped: {ref} is not a TravelBench checkout (no "
                "travelbench/__main__.py)")
    r = subprocess.run([python, "-c", "import openai, pydantic, numpy"], capture_output=True,
                       text=True, check=False)
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["?"])[-1]
        return (f"TravelBench: skipped: {python} cannot import the reference's dependencies "
                f"({last}); needs {NEEDS}")
    return None


def reference_cmd(python: str, tasks_file: Path, subset: str, trials: int, concurrency: int,
                  agent_url: str, out: Path) -> list[str]:
    """The reference's own CLI. --tool-llm-args is given because its CLI reads that variable
    whether or not the flag was passed; --agent-llm-args points the agent at the agent stub
    (the user and tool simulators use OPENAI_API_BASE)."""
    return [python, "-m", "travelbench", "run", "--file", str(tasks_file), "--mode", subset,
            "--agent-llm", "stub-model", "--user-llm", "stub-model", "--tool-llm", "stub-model",
            "--agent-llm-args", json.dumps({"api_base": agent_url}), "--tool-llm-args", "{}",
            "--num-trials", str(trials), "--max-concurrency", str(concurrency),
            "--output", str(out)]


def _reference_hits(out: Path) -> tuple[int, int, int]:
    """(conversations that succeeded, cache hits, cache misses) from the reference's output."""
    results = json.loads(out.read_text(encoding="utf-8"))["results"]
    ok = [r for r in results if r.get("success")]
    return (len(ok), sum(r.get("cache_hits", 0) for r in ok),
            sum(r.get("cache_misses", 0) for r in ok))


def _agentsweep_hits(log: str) -> tuple[int, int]:
    """(episodes finished, tool cache hits) from agentsweep run's summary lines."""
    done = re.search(r"(\d+) episodes finished", log)
    hits = re.search(r"tool calls: \d+ \(hit (\d+)", log)
    return int(done.group(1)) if done else 0, int(hits.group(1)) if hits else 0


def one_case(subset: str, latency_ms: float, a: argparse.Namespace, tb: Path, work: Path,
             store: Path, cache: Path, tasks_file: Path, n_tasks: int,
             tag: str = "") -> dict[str, Any]:
    episodes = n_tasks * a.trials
    out: dict[str, Any] = {"subset": subset, "latency_ms": latency_ms, "episodes": episodes}
    with start_stub(*agent_stub_args(latency_ms)) as agent, \
            start_stub(*user_stub_args(latency_ms)) as user:
        urls = [agent.url, user.url]

        def calls() -> int:
            return sum(stub_counters(u)["requests"] for u in urls)

        name = f"{tag}{subset}-{latency_ms:g}"
        # agentsweep
        before = calls()
        cmd = agentsweep_run_cmd(data_dir=tb.parent, subset=subset, tasks=n_tasks,
                                 trials=a.trials, concurrency=a.concurrency,
                                 agent_url=agent.url, user_url=user.url, store=store,
                                 out=work / "runs", name=name)
        r = measure(cmd, cwd=REPO, env=child_env(work, REPO), log=work / f"as-{name}.log")
        if r.rc != 0:
            raise SystemExit(f"agentsweep run failed (exit {r.rc}):\n{r.tail}")
        done, hits = _agentsweep_hits(r.tail)
        out["agentsweep"] = {**r.__dict__, "calls": calls() - before, "done": done,
                             "hits": hits, "misses": 0}
        # the reference: a fresh copy of the cache (it writes missed calls there)
        ref_cache = work / f"ref-cache-{name}"
        shutil.copytree(cache, ref_cache)
        env = child_env(work)
        env.update({"SANDBOX_CACHE_DIR": str(ref_cache), "OPENAI_API_BASE": user.url,
                    "OPENAI_API_KEY": "stub"})
        for k in ("EMBEDDING_SERVICE_URL", "EMBEDDING_MODEL_NAME", "PYTHONPATH"):
            env.pop(k, None)
        result_file = work / f"ref-{name}.json"
        before = calls()
        r = measure(reference_cmd(a.travelbench_python, tasks_file, subset, a.trials,
                                  a.concurrency, agent.url, result_file),
                    cwd=a.travelbench_ref, env=env, log=work / f"ref-{name}.log")
        if r.rc != 0 or not result_file.is_file():
            raise SystemExit(f"the reference harness failed (exit {r.rc}):\n{r.tail}")
        done, hits, misses = _reference_hits(result_file)
        out["reference"] = {**r.__dict__, "calls": calls() - before, "done": done,
                            "hits": hits, "misses": misses}
    return out


def run(a: argparse.Namespace) -> list[dict[str, Any]]:
    tb = travelbench_dir(a.data_dir)
    if tb is None:
        raise SystemExit("perf.vs_reference needs TravelBench's task files (<data dir>/"
                         "travelbench): pass --data-dir or set $AGENTSWEEP_DATA_DIR")
    cases = []
    with tempfile.TemporaryDirectory(prefix="perf-vs-ref-") as tmp:
        work = Path(tmp)
        subsets = [s for s in a.subsets.split(",") if s]
        lines: list[str] = []
        files = {}
        for subset in subsets:
            sub_lines = task_lines(tb, subset, a.tasks)
            files[subset] = work / f"{subset}.jsonl"
            files[subset].write_text("".join(sub_lines), encoding="utf-8")
            lines += sub_lines
        cache = work / "cache"
        write_cache(cache, lines)
        store = work / "tb.store"
        import_store(cache, store, child_env(work, REPO))
        latencies = [float(x) for x in a.latencies.split(",") if x]
        for subset in subsets:
            n = len(task_lines(tb, subset, a.tasks))
            for lat in latencies:
                # a warm-up pair at the first case: bytecode written, files cached
                if not cases:
                    one_case(subset, lat, _small(a), tb, work, store, cache, files[subset], 2,
                             "warm-")
                case = one_case(subset, lat, a, tb, work, store, cache, files[subset], n)
                cases.append(case)
                print_case(case)
                sys.stdout.flush()
    return cases


def _small(a: argparse.Namespace) -> argparse.Namespace:
    b = argparse.Namespace(**vars(a))
    b.trials = 1
    return b


def print_header(a: argparse.Namespace) -> None:
    print(f"agentsweep vs the TravelBench reference ({a.travelbench_ref}), equal work: the same "
          f"first {a.tasks} tasks x {a.trials} trials, concurrency {a.concurrency}, the same "
          "stubs; 2 cached tool calls per episode (first turn); multi_turn: 3 user-simulator "
          "answers. CPU and peak RSS of each harness process alone (os.wait4).")
    print(f"{'subset':>11} {'lat ms':>6} {'harness':>10} {'episodes':>8} {'wall s':>7} "
          f"{'ep/s':>8} {'CPU s':>7} {'CPU ms/ep':>9} {'RSS MB':>7} {'calls/ep':>8} "
          f"{'hits':>6} {'misses':>6}")


def print_case(c: dict[str, Any]) -> None:
    ep = c["episodes"]
    for h in ("agentsweep", "reference"):
        r = c[h]
        print(f"{c['subset']:>11} {c['latency_ms']:>6g} {h:>10} {r['done']:>8} "
              f"{r['wall_s']:>7.2f} {ep / r['wall_s']:>8.1f} {r['cpu_s']:>7.2f} "
              f"{1000 * r['cpu_s'] / ep:>9.2f} {r['peak_rss_mb']:>7.0f} "
              f"{r['calls'] / ep:>8.2f} {r['hits']:>6} {r['misses']:>6}")
    s, ref = c["agentsweep"], c["reference"]
    equal = s["calls"] == ref["calls"] and s["hits"] == ref["hits"]
    print(ratio_line(s, ref, "" if equal else f"calls {s['calls']} vs {ref['calls']}, hits "
                                              f"{s['hits']} vs {ref['hits']}"))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m perf.vs_reference",
                                description=__doc__.split("\n")[0])
    p.add_argument("--travelbench-ref", type=Path, default=os.environ.get(REF_ENV) or None,
                   help=f"checkout of the TravelBench reference (default ${REF_ENV})")
    p.add_argument("--travelbench-python", default=sys.executable,
                   help="Python with the reference's dependencies (default: this one)")
    p.add_argument("--tasks", type=int, default=500, help="first N tasks of each subset")
    p.add_argument("--trials", type=int, default=3)
    p.add_argument("--concurrency", type=int, default=300)
    p.add_argument("--latencies", default="0,50", help="stub latencies in ms")
    p.add_argument("--subsets", default="single_turn,multi_turn")
    p.add_argument("--data-dir", default=None, help="benchmark data directory")
    p.add_argument("--vitabench-ref", type=Path,
                   default=os.environ.get(vita.REF_ENV) or None,
                   help=f"checkout of VitaBench (default ${vita.REF_ENV})")
    p.add_argument("--vitabench-python", default=sys.executable,
                   help="Python where that checkout is installed (default: this one)")
    p.add_argument("--vitabench-tasks", type=int, default=100,
                   help="first N delivery tasks (the file has 100)")
    a = p.parse_args(argv)
    if a.travelbench_ref is not None:
        a.travelbench_ref = Path(a.travelbench_ref).resolve()
    if a.vitabench_ref is not None:
        a.vitabench_ref = Path(a.vitabench_ref).resolve()
    problem = reference_problem(a.travelbench_ref, a.travelbench_python)
    if problem:
        print(problem)
    else:
        print_header(a)
        run(a)
    if a.vitabench_ref is not None or not problem:
        from bench_data.registry import resolve_data_dir

        root = resolve_data_dir(a.data_dir)
        with tempfile.TemporaryDirectory(prefix="perf-vs-vita-") as tmp:
            vita.run(a, Path(tmp), Path(root) if root is not None else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
