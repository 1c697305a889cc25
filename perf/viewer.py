"""`agentsweep view` on big runs: time to the first page, where it goes, and server memory.

    python -m perf.viewer [--sizes 1000,100000] [--warm 3] [--dir DIR]

For each size, writes a synthetic run directory (TravelBench-shaped episodes of about 4 KB:
system prompt, request, three tool calls with results, an answer; one rubric judgement per
episode), then starts `agentsweep view RUN_DIR` as a subprocess, once cold and `--warm` times
warm:

  cold   no index yet: the server indexes the JSONL files once (and saves RUN_DIR/.view)
  warm   the saved index and table are loaded; what every later opening of the run costs

and, interleaved so that a busy machine weighs on them alike, `--warm` times each of:

  view     warm, started with only the `view` subcommand's parser (what the command costs
           when the CLI imports just the command it runs: evaluator/cli/__init__.py)
  rebuild  warm index, the saved table removed: the table is built and every benchmark
           imported for its rules (every warm start before the table was saved)

It reports, per start: seconds from process start to the first page received as a browser
asks for it (the page, its script, /api/runs, then the first /api/list page), the viewer
process's CPU seconds by then (user + system: its own work, which a busy machine stretches
less than the wall time), the server's RSS after it, then the latency of a page sorted by score, of one episode, of a text search
over every conversation, and the RSS after all that; then the medians of the warm kinds with
their ratios (wall and CPU), measured side by side. A second table breaks each first page down (the viewer
prints its steps' wall-clock times with AGENTSWEEP_VIEW_TIMINGS=1):

  cli       process start to the view command: the interpreter, `evaluator.cli` and the
            parser of the subcommands
  imports   the viewer's modules (aiohttp, numpy, msgspec)
  index     loading the saved index (cold: indexing the files)
  table     the episode table: loaded from its saved copy, or built (and the benchmarks'
            rules taken from the registry, which imports every benchmark)
  listen    the web app and its socket
  page      the browser's requests until the first list page is in

Targets: warm time-to-first-page < 1 s at 100,000 episodes, and memory that does not grow
with the episode file (the records are read only when shown).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import msgspec
import psutil

from backends.types import ChatMessage, FunctionCall, ToolCall, Usage
from evaluator.records import EpisodeRecord, Judgement, ToolCallRecord, UnitId

REPO = Path(__file__).resolve().parents[1]
SYSTEM = ("You are a travel assistant. Gather what you need with the tools, then answer. " * 24)
TOOL_RESULT = ('{"city": "Hangzhou", "forecast": [{"date": "2025-11-15", "weather": "light rain", '
               '"high": 17, "low": 11, "precipitation": 0.7}], "source": "weather-api"} ')


def write_run(path: Path, n: int, trials: int = 4) -> tuple[float, int]:
    """A run directory with `n` episodes and `n` judgements; (seconds, episode file bytes)."""
    t0 = time.perf_counter()
    path.mkdir(parents=True)
    n_tasks = -(-n // trials)
    (path / "manifest.json").write_text(msgspec.json.encode(
        {"run": path.name, "n_tasks": n_tasks, "trials": trials}).decode())
    enc = msgspec.json.Encoder()
    with (path / "episodes.jsonl").open("wb") as eps, (path / "judgements.jsonl").open("wb") as js:
        for i in range(n):
            task, trial = divmod(i, trials)
            subset = ("single_turn", "multi_turn")[task % 2]
            unit = UnitId(run=path.name, task=f"travelbench/{subset}/task-{task:06d}", trial=trial,
                          seed=i)
            msgs = [ChatMessage(role="system", content=SYSTEM),
                    ChatMessage(role="user", content=f"Request {task}: is it going to rain in "
                                "Hangzhou tomorrow? I want to walk around West Lake.")]
            calls = []
            for c in range(3):
                msgs.append(ChatMessage(role="assistant", tool_calls=[ToolCall(
                    id=f"call_{c}", function=FunctionCall(name="weather_forecast",
                                                          arguments='{"city": "Hangzhou"}'))]))
                msgs.append(ChatMessage(role="tool", tool_call_id=f"call_{c}", content=TOOL_RESULT))
                calls.append(ToolCallRecord(call_id=f"call_{c}", name="weather_forecast",
                                            arguments='{"city": "Hangzhou"}', valid=True,
                                            source="hit" if (i + c) % 5 else "simulated",
                                            content=TOOL_RESULT, step=c))
            answer = f"Episode {i}: light rain is expected in the afternoon; take an umbrella."
            msgs.append(ChatMessage(role="assistant", content=answer))
            rec = EpisodeRecord(unit=unit, benchmark="travelbench", subset=subset,
                                task_id=f"task-{task:06d}", messages=msgs, tool_calls=calls,
                                final_answer=answer, n_agent_calls=4, n_user_turns=1,
                                usage={"agent": Usage(prompt_tokens=2400, completion_tokens=180,
                                                      total_tokens=2580, cached_tokens=2000)},
                                timings={"total": 3.0 + i % 7}, started_at=1.0e9 + i,
                                finished_at=1.0e9 + i + 3)
            eps.write(enc.encode(rec) + b"\n")
            js.write(enc.encode(Judgement(
                unit=unit, trajectory_hash=f"{i:032x}", judge_model="judge", prompt_version="v2",
                kind="travel_rubric", score=(i % 5) / 4, scores={"presentation": 1.0 + i % 5},
                reasoning={"presentation": "clear and sourced"}, created_at=2.0e9 + i)) + b"\n")
    return time.perf_counter() - t0, (path / "episodes.jsonl").stat().st_size


def _get(url: str) -> tuple[float, bytes]:
    t0 = time.perf_counter()
    with urllib.request.urlopen(url, timeout=600) as r:
        body = r.read()
    return time.perf_counter() - t0, body


STEPS = ("cli", "imports", "index", "table", "listen", "page")


def _breakdown(err: str, start: float, page_at: float) -> dict[str, float]:
    """The first page's steps from the viewer's timings line (wall-clock marks)."""
    m = re.search(r"^timings: (.*)$", err, re.MULTILINE)
    if not m:
        return {}
    marks = {k: float(v) for k, v in (x.split("=") for x in m.group(1).split())}
    opened = marks["opened"] - marks["imports"]
    index = marks.get("index_s", 0.0)
    return {"cli": marks["command"] - start, "imports": marks["imports"] - marks["command"],
            "index": index, "table": opened - index,
            "listen": marks["listen"] - marks["opened"], "page": page_at - marks["listen"]}


VIEW_ONLY = """import sys
from evaluator.cli import OneLineParser
from evaluator.cli import view
parser = OneLineParser(prog="agentsweep")
view.register(parser.add_subparsers(dest="command"))
args = parser.parse_args(["view", sys.argv[1]])
sys.exit(args.func(args))
"""


def measure(run: Path, kind: str = "warm") -> dict[str, float]:
    """One start of the viewer (`kind`: cold, warm, view, rebuild; module doc)."""
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               AGENTSWEEP_VIEW_TIMINGS="1")
    if kind == "cold":
        shutil.rmtree(run / ".view", ignore_errors=True)
    elif kind == "rebuild":
        (run / ".view" / "table.npz").unlink(missing_ok=True)
    cmd = ([sys.executable, "-c", VIEW_ONLY, str(run)] if kind == "view"
           else [sys.executable, "-m", "evaluator.cli", "view", str(run)])
    wall0 = time.time()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        m = re.search(r"http://\S+/", line)
        if not m:
            raise RuntimeError(f"no URL from the viewer: {line!r} {proc.communicate()}")
        base = m.group(0)
        for path in ("", "app.js", "api/runs", "api/list?page=0&per=50"):  # as a browser
            _get(base + path)
        first = time.perf_counter() - t0
        page_at = wall0 + first
        server = psutil.Process(proc.pid)
        rss_first = server.memory_info().rss
        cpu = server.cpu_times()
        cpu_first = cpu.user + cpu.system  # the viewer's own work, whatever else runs
        sort_s, _ = _get(base + "api/list?sort=score&desc=1&page=3")
        ep_s, _ = _get(base + "api/episode?key=travelbench%2Fsingle_turn%2Ftask-000000%233")
        search_s, body = _get(base + "api/list?q=EPISODE%2012345%3A")  # case-insensitive
        hits = msgspec.json.decode(body)["total"]
        rss_after = psutil.Process(proc.pid).memory_info().rss
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    opened = re.search(r"opened in ([\d.]+)s", err)
    return {"first_page_s": first, "cpu_s": cpu_first,
            "opened_s": float(opened.group(1)) if opened else float("nan"),
            "rss_first_mb": rss_first / 2**20, "sort_s": sort_s, "episode_s": ep_s,
            "search_s": search_s, "hits": hits, "rss_after_mb": rss_after / 2**20,
            "steps": _breakdown(err, wall0, page_at)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,100000")
    ap.add_argument("--warm", type=int, default=3, help="warm starts per size (3)")
    ap.add_argument("--dir", type=Path, default=None, help="where to write the runs (a temp dir)")
    args = ap.parse_args(argv)
    root = args.dir or Path(tempfile.mkdtemp(prefix="viewer-perf-"))
    print(f"{'episodes':>9} {'file MB':>8} {'start':>5} {'first page s':>12} {'cpu s':>6} "
          f"{'opened s':>9} "
          f"{'RSS MB':>7} {'sort s':>7} {'episode s':>9} {'search s (hits)':>15} "
          f"{'RSS after MB':>12}")
    breakdown: list[tuple[int, str, dict[str, float]]] = []
    summary: list[tuple[int, dict[str, float], dict[str, float]]] = []
    try:
        for n in (int(s) for s in args.sizes.split(",")):
            run = root / f"run-{n}"
            if run.exists():
                shutil.rmtree(run)
            write_s, size = write_run(run, n)
            print(f"# wrote {n} episodes ({size / 2**20:.0f} MiB) in {write_s:.1f}s", flush=True)
            firsts: dict[str, list[float]] = {}
            cpus: dict[str, list[float]] = {}
            for start in ("cold", *["warm", "view", "rebuild"] * args.warm):
                r = measure(run, start)
                firsts.setdefault(start, []).append(r["first_page_s"])
                cpus.setdefault(start, []).append(r["cpu_s"])
                print(f"{n:>9} {size / 2**20:>8.0f} {start:>5} {r['first_page_s']:>12.2f} "
                      f"{r['cpu_s']:>6.2f} {r['opened_s']:>9.2f} {r['rss_first_mb']:>7.0f} {r['sort_s']:>7.3f} "
                      f"{r['episode_s']:>9.3f} {r['search_s']:>11.2f} ({r['hits']}) "
                      f"{r['rss_after_mb']:>12.0f}",
                      flush=True)
                breakdown.append((n, start, {**r["steps"], "total": r["first_page_s"]}))
            med = {k: statistics.median(v) for k, v in firsts.items()}
            summary.append((n, med, {k: statistics.median(v) for k, v in cpus.items()}))
    finally:
        if args.dir is None:
            shutil.rmtree(root, ignore_errors=True)
    print("\nmedian first page (side by side)      warm   view  rebuild  rebuild/warm  "
          "warm/view")
    for n, med, cpu in summary:
        for what, m in (("wall s", med), ("viewer CPU s", cpu)):
            print(f"{n:>9} {what:>25} {m['warm']:>6.2f} {m['view']:>6.2f} {m['rebuild']:>8.2f} "
                  f"{m['rebuild'] / m['warm']:>13.2f}x {m['warm'] / m['view']:>9.2f}x")
    print("\nwhere the first page's seconds go (module doc):")
    print(f"{'episodes':>9} {'start':>5} " + " ".join(f"{k:>8}" for k in (*STEPS, "total")))
    for n, start, steps in breakdown:
        print(f"{n:>9} {start:>5} " + " ".join(
            f"{steps[k]:>8.3f}" if k in steps else f"{'-':>8}" for k in (*STEPS, "total")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
