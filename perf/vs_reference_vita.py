"""`perf.vs_reference --vitabench-ref PATH`: agentsweep vs VitaBench's own orchestrator
(meituan-longcat/vitabench, `vita run`), at equal work, side by side.

Workload: the first `--vitabench-tasks` delivery tasks (English) x `--trials`, `--concurrency`
episodes at once (the reference: that many threads), the same three stubs for both: the agent
answers text (no tool calls), the user simulator answers three times and then says VitaBench's
`###STOP###`, and the judge answers every sliding window with one rubric verdict in the
reference's own JSON shape (both harnesses read it). Per episode that is the same conversation
(agent and user calls), the same task environment built, and the same window judgements in
both (printed: calls per episode of each harness). The reference runs from its checkout with
its own CLI and a model file naming the stubs (VITA_MODEL_CONFIG_PATH); agentsweep runs
`agentsweep run --bench vitabench --domain delivery --judge` on the same task file.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

from perf.equal_work import REPO, child_env, measure, ratio_line
from perf.stub_process import start_stub, stub_counters

REF_ENV = "VITABENCH_REFERENCE"
NEEDS = ("a checkout of VitaBench (git clone https://github.com/meituan-longcat/vitabench PATH) "
         "and a Python where it is installed (pip install -e PATH): --vitabench-ref PATH "
         "--vitabench-python PY")
TASKS = "delivery/tasks_en.json"
USER_TURNS = 3
VERDICT = json.dumps([{"rubric_idx": "rubric_0", "justification": "stub verdict",
                       "meetExpectation": True}])


def problem(ref: Path | None, python: str, data: Path | None) -> str | None:
    """Why the VitaBench comparison cannot run here (None: it can)."""
    if ref is None:
        return f"VitaBench: skipped: no reference checkout; needs {NEEDS}"
    ref_tasks = ref / "data/vita/domains" / TASKS
    if not ref_tasks.is_file():
        return f"VitaBench: skipped: {ref} has no data/vita/domains/{TASKS}"
    if data is None or not (data / TASKS).is_file():
        return (f"VitaBench: skipped: agentsweep's VitaBench data ({TASKS}) not found: pass "
                "--data-dir (the directory holding vitabench/)")
    if _digest(ref_tasks) != _digest(data / TASKS):
        return f"VitaBench: skipped: {ref_tasks} and {data / TASKS} differ"
    r = subprocess.run([python, "-c", "import vita.cli"], capture_output=True, text=True,
                       check=False, cwd=ref, env=_ref_env(ref, None))
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["?"])[-1]
        return f"VitaBench: skipped: {python} cannot import vita ({last}); needs {NEEDS}"
    return None


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _ref_env(ref: Path, models: Path | None) -> dict[str, str]:
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = str(ref / "src")
    if models is not None:
        env["VITA_MODEL_CONFIG_PATH"] = str(models)
    else:  # importing vita.config needs some model file
        env.setdefault("VITA_MODEL_CONFIG_PATH", str(ref / "src/vita/models.yaml"))
    return env


def _models_yaml(path: Path, urls: dict[str, str]) -> Path:
    lines = ["default:", f"  base_url: {urls['agent']}/chat/completions", "  temperature: 0.0",
             "  max_input_tokens: 32768", "  headers:", '    Authorization: "Bearer stub"',
             '    Content-Type: "application/json"', "models:"]
    for role, url in urls.items():
        lines += [f"  - name: stub-{role}", f"    base_url: {url}/chat/completions"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def one_case(a: Any, work: Path, data: Path, latency_ms: float, tasks: int,
             tag: str = "") -> dict[str, Any]:
    sleep = ["--sleep", f"{latency_ms / 1000:g}"]
    episodes = tasks * a.trials
    out: dict[str, Any] = {"subset": "delivery", "latency_ms": latency_ms, "episodes": episodes}
    with start_stub("--mode", "text", "--replies", "I can help with that.", *sleep) as agent, \
            start_stub("--mode", "text", "--replies", "I would like some food delivered.",
                       "--finish-after", str(USER_TURNS), "--finish-text", "###STOP###",
                       *sleep) as user, \
            start_stub("--mode", "text", "--replies", VERDICT, *sleep) as judge:
        urls = {"agent": agent.url, "user": user.url, "judge": judge.url}

        def calls() -> dict[str, int]:
            return {k: stub_counters(u)["requests"] for k, u in urls.items()}

        name = f"{tag}vita-{latency_ms:g}"
        before = calls()
        cmd = [*_agentsweep(), "--data", str(data), "--limit", str(tasks), "--trials",
               str(a.trials), "--concurrency", str(a.concurrency), "--judge",
               "--agent-url", agent.url, "--agent-model", "stub-model",
               "--set", f"user.endpoint.base_url={user.url}", "--set",
               "user.endpoint.model=stub-model",
               "--set", f"tool_simulator.endpoint.base_url={agent.url}",
               "--set", f'judge.endpoints=[{{base_url="{judge.url}", model="stub-model"}}]',
               "--progress", "off", "--out", str(work / "runs"), "--name", name]
        r = measure(cmd, cwd=REPO, env=child_env(work, REPO), log=work / f"as-{name}.log")
        if r.rc != 0:
            raise SystemExit(f"agentsweep run (VitaBench) failed, exit {r.rc}:\n{r.tail}")
        after = calls()
        out["agentsweep"] = {**r.__dict__, "calls": {k: after[k] - before[k] for k in after},
                             "done": episodes}
        models = _models_yaml(work / f"models-{name}.yaml", urls)
        result = work / f"ref-{name}.json"
        before = calls()
        cmd = [a.vitabench_python, "-m", "vita.cli", "run", "--domain", "delivery",
               "--agent-llm", "stub-agent", "--user-llm", "stub-user",
               "--evaluator-llm", "stub-judge", "--num-tasks", str(tasks),
               "--num-trials", str(a.trials), "--max-concurrency", str(a.concurrency),
               "--language", "english", "--log-level", "ERROR", "--save-to", str(result)]
        r = measure(cmd, cwd=a.vitabench_ref, env=_ref_env(a.vitabench_ref, models),
                    log=work / f"ref-{name}.log")
        if r.rc != 0 or not result.is_file():
            raise SystemExit(f"the VitaBench reference failed, exit {r.rc}:\n{r.tail}")
        after = calls()
        sims = json.loads(result.read_text(encoding="utf-8")).get("simulations", [])
        out["reference"] = {**r.__dict__, "calls": {k: after[k] - before[k] for k in after},
                            "done": len(sims)}
    return out


def _agentsweep() -> list[str]:
    import sys

    return [sys.executable, "-m", "evaluator.cli", "run", "--bench", "vitabench",
            "--domain", "delivery"]


def print_case(c: dict[str, Any]) -> None:
    ep = c["episodes"]
    for h in ("agentsweep", "reference"):
        r = c[h]
        per = "/".join(f"{r['calls'][k] / ep:.1f}" for k in ("agent", "user", "judge"))
        print(f"{'vita/deliv':>11} {c['latency_ms']:>6g} {h:>10} {r['done']:>8} "
              f"{r['wall_s']:>7.2f} {ep / r['wall_s']:>8.1f} {r['cpu_s']:>7.2f} "
              f"{1000 * r['cpu_s'] / ep:>9.2f} {r['peak_rss_mb']:>7.0f} {per:>14}")
    s, ref = c["agentsweep"], c["reference"]
    equal = s["calls"] == ref["calls"] and s["done"] == ref["done"]
    print(ratio_line(s, ref, "" if equal else f"calls {s['calls']} vs {ref['calls']}"))


def run(a: Any, work: Path, data_root: Path | None) -> None:
    data = data_root / "vitabench" if data_root is not None else None
    why = problem(a.vitabench_ref, a.vitabench_python, data)
    if why:
        print(why)
        return
    assert data is not None
    print(f"\nVitaBench (delivery, English) vs its reference orchestrator ({a.vitabench_ref}): "
          f"the first {a.vitabench_tasks} tasks x {a.trials} trials, concurrency "
          f"{a.concurrency}; per episode: the agent answers without tools, the user answers "
          f"{USER_TURNS + 1} times (the last ###STOP###), the judge once per window")
    print(f"{'subset':>11} {'lat ms':>6} {'harness':>10} {'episodes':>8} {'wall s':>7} "
          f"{'ep/s':>8} {'CPU s':>7} {'CPU ms/ep':>9} {'RSS MB':>7} {'agent/user/judge':>14}")
    latencies = [float(x) for x in a.latencies.split(",") if x]
    one_case(a, work, data, latencies[0], 2, "warm-")  # bytecode written, files cached
    for lat in latencies:
        print_case(one_case(a, work, data, lat, a.vitabench_tasks))
