"""`agentsweep bench` against two stub replicas, then the full run with its estimate.

    python -m perf.bench_estimate [--slowdown 3] [--out /tmp/bench-estimate]

Two `perf.stub_server` replicas with the simulated engine (30,000 KV tokens, 8 slots, 40 us per
uncached prompt token, 3 ms per generated token, 48 tokens per answer; the second replica
`--slowdown` times slower) serve the agent; the user and tool simulator use the first. The
bench runs the built-in sample with `--limit 2 --trials 8 --concurrency 16` (48 episodes),
then `agentsweep run` the whole sample (96 episodes) with `--estimate`; printed: the bench's
table and the report's "Estimated vs actual wall time" row (docs/routing.md).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from perf.stub_server import start_stub

ENGINE = ["--mode", "tool", "--tool-turns", "3", "--kv-tokens", "30000", "--max-running", "8",
          "--prefill-us", "40", "--decode-ms", "3", "--completion-tokens", "48"]
REPO = Path(__file__).resolve().parents[1]


def _cli(*args: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-m", "evaluator.cli", *args], env=env, cwd=REPO,
                       capture_output=True, text=True, check=False)
    if r.returncode:
        raise SystemExit(f"agentsweep {args[0]} failed ({r.returncode}):\n{r.stderr[-3000:]}")
    return r.stdout


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--slowdown", type=float, default=1.0, help="the second replica's slowdown")
    p.add_argument("--out", type=Path, default=Path("/tmp/bench-estimate"))
    a = p.parse_args()
    shutil.rmtree(a.out, ignore_errors=True)
    a.out.mkdir(parents=True)
    with start_stub(*ENGINE) as one, start_stub(*ENGINE, "--slowdown", str(a.slowdown)) as two:
        cfg = a.out / "run.toml"
        cfg.write_text(f'[agent]\nreplicas = ["{one.url}", "{two.url}"]\n'
                       "[agent.routing]\npoll_interval_s = 0.25\n")
        common = [str(cfg), "--engine-url", one.url, "--out", str(a.out), "--progress", "off",
                  "--trials", "8", "--concurrency", "16"]
        out = _cli("bench", *common, "--name", "bench", "--limit", "2", "--interval", "0.25")
        print(out.split("json:")[0])
        _cli("run", *common, "--name", "full", "--estimate", str(a.out / "bench/bench.json"),
             "--report")
    md = (a.out / "full" / "report.md").read_text().splitlines()
    i = md.index("### Estimated vs actual wall time")
    print("\n".join(md[i:i + 5]))


if __name__ == "__main__":
    main()
