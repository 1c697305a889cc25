"""`agentsweep bench` and the run's telemetry: the ideal prefix hits, the time-series summary,
the bench over two simulated-engine stub replicas end to end (terminal table, bench.json,
time-series plots in report.html), and a run given the bench's estimate."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from evaluator.run.bench import hms, ideal_hits
from evaluator.run.throughput import series, summary
from tests.evaluator.test_run_cli import REPO, _env

ENGINE = ["--mode", "tool", "--tool-turns", "3", "--kv-tokens", "30000", "--max-running", "8",
          "--prefill-us", "40", "--decode-ms", "1.0", "--completion-tokens", "32"]


def test_ideal_hits_round_to_blocks_and_count_the_shared_prefix():
    calls = [  # role, t, episode, prompt, cached, system chars
        {"role": "agent", "t": 0, "episode": 0, "prompt": 100, "cached": 0, "completion": 5,
         "system_chars": 160},  # first ever: nothing shared yet
        {"role": "agent", "t": 1, "episode": 0, "prompt": 150, "cached": 96, "completion": 5,
         "system_chars": 160},  # previous prompt 100 -> 96 (6 blocks of 16)
        {"role": "agent", "t": 2, "episode": 1, "prompt": 90, "cached": 32, "completion": 5,
         "system_chars": 160},  # new episode: the shared system prefix 40 tokens -> 32
        {"role": "tool_simulator", "t": 3, "episode": None, "prompt": 50, "cached": 0,
         "completion": 5, "system_chars": 0},
    ]
    h = ideal_hits(calls, 16)
    assert h["agent"]["ideal"] == 0 + 96 + 32
    assert h["agent"]["cached"] == 128
    assert h["agent"]["of_ideal"] == pytest.approx(1.0)
    assert h["agent"]["ideal_hit_rate"] == pytest.approx(128 / 340)
    assert h["tool_simulator"]["ideal"] == 0 and h["tool_simulator"]["of_ideal"] is None
    assert hms(3725) == "1h02m05s"


def _row(t, calls, prompt, pq, ph, kv):
    role = {"calls": calls, "in_flight": 1, "prompt": prompt, "completion": calls * 10,
            "cached": prompt // 2, "model_s": 0.0}
    rep = {"role": "agent", "url": "http://r1/v1", "healthy": True, "requests": calls,
           "in_flight": 1, "waiting": 0, "cap": 4, "prompt": prompt, "completion": calls * 10,
           "cached": prompt // 2, "kv": kv, "pq": pq, "ph": ph}
    if pq is None:
        del rep["pq"], rep["ph"]
    return {"t": t, "episodes": 0, "running": 0, "roles": {"agent": role}, "replicas": [rep]}


def test_timeseries_rates_and_summary_over_two_processes(tmp_path):
    lines = [{"start": 1000.0, "interval_s": 1.0}, _row(0.0, 0, 0, None, None, None),
             _row(1.0, 10, 1000, 500.0, 250.0, 0.2), _row(2.0, 20, 3000, 2500.0, 2250.0, 0.4),
             # a resume: counters start again from zero, the server's keep counting
             {"start": 1010.0, "interval_s": 1.0}, _row(0.0, 0, 0, 2500.0, 2250.0, 0.1),
             _row(2.0, 10, 2000, 4500.0, 4250.0, 0.3)]
    (tmp_path / "timeseries.jsonl").write_text("\n".join(json.dumps(x) for x in lines)
                                               + "\n{torn")
    s = summary(tmp_path)
    assert s["seconds"] == 4.0
    rep = s["replicas"][0]
    assert rep["requests"] == 30 and rep["prompt_tokens"] == 5000
    assert rep["requests_per_s"] == pytest.approx(7.5)
    assert rep["metrics_hit_rate"] == pytest.approx((2000 + 2000) / (2000 + 2000))
    assert rep["request_hit_rate"] == pytest.approx(0.5)
    assert rep["kv_peak"] == 0.4
    ser = series(tmp_path)["replicas"]["agent http://r1/v1"]
    assert ser["t"] == [0.0, 1.0, 2.0, 10.0, 12.0]
    assert ser["tok_s"][1] == pytest.approx(1100.0)  # (1000 + 100) tokens in 1 s
    assert ser["hit"][2] == pytest.approx(2000 / 2000)
    assert ser["tok_s"][3] is None  # no rate across the restart


def test_replica_requests_are_counted_as_answered_like_the_roles_calls(tmp_path):
    """Requests sent before the first sample and answered after it count once per replica, as
    the role counts them (a loaded machine's first sample came after 6 were sent: 54 vs 60); a
    time series written before `answered` existed still reads its sent count."""
    first, last = _row(0.0, 0, 0, None, None, None), _row(2.0, 60, 6000, None, None, None)
    first["replicas"][0].update(requests=6, answered=0)
    last["replicas"][0].update(requests=60, answered=60)
    old = _row(0.0, 0, 0, None, None, None)
    old["replicas"][0]["requests"] = 6
    for rows, want in (([first, last], 60), ([old, _row(2.0, 60, 6000, None, None, None)], 54)):
        lines = [{"start": 1000.0, "interval_s": 1.0}, *rows]
        (tmp_path / "timeseries.jsonl").write_text("\n".join(json.dumps(x) for x in lines))
        s = summary(tmp_path)
        assert s["roles"]["agent"]["requests"] == 60
        assert s["replicas"][0]["requests"] == want


def _cli(*args, timeout=240):
    return subprocess.run([sys.executable, "-m", "evaluator.cli", *args], cwd=REPO,
                          env=_env(0.0), capture_output=True, text=True, timeout=timeout,
                          check=False)


def test_bench_over_two_replicas_then_a_run_with_its_estimate(tmp_path):
    from perf.stub_server import start_stub

    with start_stub(*ENGINE) as a, start_stub(*ENGINE, "--slowdown", "2") as b:
        cfg = tmp_path / "run.toml"
        cfg.write_text(f'[agent]\nreplicas = ["{a.url}", "{b.url}"]\n'
                       '[agent.routing]\npoll_interval_s = 0.1\n')
        common = ["--engine-url", a.url, "--out", str(tmp_path), "--progress", "off",
                  "--interval", "0.2"]
        r = _cli("bench", str(cfg), *common, "--name", "b", "--limit", "2", "--trials", "2")
        assert r.returncode == 0, r.stderr
        run_dir = tmp_path / "b"
        bench = json.loads((run_dir / "bench.json").read_text())
        assert bench["episodes"] > 0 and bench["episodes_per_min"] > 0
        agent = bench["roles"]["agent"]
        assert agent["prompt_tok_s"] > 0 and agent["completion_tok_s"] > 0
        assert 0 < agent["request_hit_rate"] <= 1 and 0 < agent["ideal_hit_rate"] <= 1
        assert agent["of_ideal"] > 0.5
        urls = {(d["role"], d["url"]) for d in bench["replicas"]}
        assert ("agent", a.url) in urls and ("agent", b.url) in urls
        routed = [d for d in bench["replicas"] if d["role"] == "agent"]
        assert all(d["metrics_hit_rate"] is not None for d in routed)
        assert sum(d["requests"] for d in routed) == agent["requests"]
        st = bench["stages"]
        assert st["model"] > 0 and st["total"] >= st["model"] and st["judge"] is None
        est = bench["estimate"]
        full = 2 * (est["episodes"] // 2)
        assert est["episodes"] == full and est["episodes"] > bench["episodes"]
        assert est["by_tokens_s"] > 0 and est["bottleneck"] in bench["roles"]
        assert "per role / per replica" in r.stdout and "full sweep:" in r.stdout
        html = (run_dir / "report.html").read_text()
        for kind in ("ts-tokens", "ts-in-flight", "ts-kv", "ts-hit", "ts-queue"):
            assert f'data-plot="{kind}"' in html, kind
        assert "Bench (agentsweep bench)" in html

        again = _cli("bench", "--from", str(run_dir), "--no-report")  # size from its manifest
        assert again.returncode == 0, again.stderr
        assert json.loads((run_dir / "bench.json").read_text())["estimate"]["episodes"] == \
            est["episodes"]
        again = _cli("bench", "--from", str(run_dir), "--full-episodes", "100", "--no-report")
        assert again.returncode == 0, again.stderr
        assert json.loads((run_dir / "bench.json").read_text())["estimate"]["episodes"] == 100

        r = _cli("run", str(cfg), *common[:-2], "--name", "full", "--trials", "2",
                 "--estimate", str(run_dir / "bench.json"), "--report")
        assert r.returncode == 0, r.stderr
    md = (tmp_path / "full" / "report.md").read_text()
    assert "### Estimated vs actual wall time" in md
    assert "### Throughput per replica" in md
    row = next(x for x in md.splitlines() if x.startswith("| full |") and "x |" in x)
    assert "100" in row  # the estimate was for --full-episodes 100


def test_bench_of_a_plugin_with_a_routed_judge(tmp_path):
    """Two `[[judge.endpoints]]` are routed; the judge's time is a stage of the bench."""
    from perf.stub_server import start_stub
    from tests.evaluator.test_toybench import DATA

    with start_stub("--mode", "text") as stub, start_stub("--mode", "schema") as j1, \
            start_stub("--mode", "schema") as j2:
        judges = f'[{{ base_url = "{j1.url}" }}, {{ base_url = "{j2.url}" }}]'
        r = _cli("bench", "--plugin", "tests.toybench", "--data", str(DATA), "--engine-url",
                 stub.url, "--out", str(tmp_path), "--name", "toy", "--judge", "--progress",
                 "off", "--interval", "0.1", "--set", f"judge.endpoints={judges}",
                 "--full-episodes", "60")
        assert r.returncode == 0, r.stderr
    bench = json.loads((tmp_path / "toy" / "bench.json").read_text())
    assert bench["stages"]["judge"] > 0
    judged = [d for d in bench["replicas"] if d["role"] == "judge"]
    assert {d["url"] for d in judged} == {j1.url, j2.url}
    assert sum(d["requests"] for d in judged) > 0
    assert bench["estimate"]["episodes"] == 60
    assert "judge" in bench["roles"]
    # the judge is in the estimate: its tokens per episode from the telemetry
    judge = bench["roles"]["judge"]
    assert judge["tokens_per_episode"] > 0 and judge["estimate_s"] > 0
    assert "leaves judging out" not in r.stderr


def test_bench_warnings():
    from evaluator.cli.bench import bench_warnings

    b = {"episodes": 8, "roles": {
        "agent": {"request_hit_rate": 0.0, "ideal_hit_rate": 0.6},
        "user": {"request_hit_rate": 0.5, "ideal_hit_rate": 0.6}}}
    w = bench_warnings(b, concurrency=8)
    assert w[0].startswith("warning: concurrency 8 >= the bench's 8 episodes")
    assert w[1].startswith("warning: agent: no cached prompt tokens counted")
    assert "--enable-prompt-tokens-details" in w[1]
    assert w[2].startswith("note: the estimate leaves judging out")
    assert len(w) == 3  # the user simulator's cached tokens are counted
    b["roles"]["judge"] = {"request_hit_rate": None, "ideal_hit_rate": None}
    b["roles"]["agent"]["request_hit_rate"] = 0.4
    assert bench_warnings(b, concurrency=4) == []


def test_replica_weights_reach_the_router():
    from backends.types import Endpoint
    from evaluator.config import ReplicaEndpoint
    from evaluator.run.resources import replica_specs

    ep = Endpoint(base_url="http://x/v1", model="m", timeout_s=7.0)
    specs = replica_specs(ep, [ReplicaEndpoint(base_url="http://a/v1", weight=2.5),
                               "http://b/v1"])
    assert [s.weight for s in specs] == [2.5, 1.0]
    assert [s.endpoint.timeout_s for s in specs] == [7.0, 7.0]
    assert specs[0].endpoint.model == "m" and specs[0].endpoint.base_url == "http://a/v1"


def test_the_estimate_uses_the_rate_while_episodes_were_still_starting(tmp_path):
    from evaluator.run.bench import steady_rates

    lines = [{"start": 1000.0, "interval_s": 1.0}, _row(0.0, 0, 0, None, None, None),
             _row(1.0, 10, 1000, None, None, None), _row(2.0, 20, 2000, None, None, None),
             _row(3.0, 22, 2100, None, None, None)]  # the ramp-down: little throughput
    (tmp_path / "timeseries.jsonl").write_text("\n".join(json.dumps(x) for x in lines))
    assert steady_rates(tmp_path, 1002.5) == {"agent": pytest.approx((2000 + 200) / 2.0)}
    assert steady_rates(tmp_path, 1000.5) == {}  # every episode started at once


def test_agentsweep_judge_routes_several_endpoints_around_a_dead_one(tmp_path):
    """`agentsweep judge` with two judge endpoints, one of them down: the router sends every
    judge call to the live one (round-robin would leave half of them for a later retry)."""
    from perf.stub_server import start_stub
    from tests.evaluator.test_toybench import DATA

    with start_stub("--mode", "text") as stub, start_stub("--mode", "schema") as j1, \
            start_stub("--mode", "schema") as j2:
        judges = f'[{{ base_url = "{j1.url}" }}, {{ base_url = "{j2.url}" }}]'
        r = _cli("run", "--plugin", "tests.toybench", "--data", str(DATA), "--engine-url",
                 stub.url, "--out", str(tmp_path), "--name", "toy", "--progress", "off",
                 "--set", f"judge.endpoints={judges}")
        assert r.returncode == 0, r.stderr
        j2.stop()
        r = _cli("judge", str(tmp_path / "toy"))
        assert r.returncode == 0, r.stderr
        assert "judged 6 (0 judge errors)" in r.stdout  # trials share trajectories (keys)
        assert "0 left after infrastructure errors" in r.stdout
    lines = (tmp_path / "toy" / "judgements.jsonl").read_text().splitlines()
    graded = [json.loads(x) for x in lines if '"toy_grade"' in x]
    assert graded and all(j.get("error") is None for j in graded)


def test_replica_legends_stay_short_and_never_run_off_the_plot():
    from evaluator.report.svg import LineSeries, line_chart
    from evaluator.report.throughput import _labels

    assert _labels(["agent http://127.0.0.1:1/v1", "agent,user http://127.0.0.1:2/v1"]) == {
        "agent http://127.0.0.1:1/v1": ":1 agent", "agent,user http://127.0.0.1:2/v1": ":2 agent+1"}
    assert _labels(["agent http://a:8000/v1", "agent http://b:8000/v1"])[
        "agent http://b:8000/v1"] == "b:8000 agent"
    svg = line_chart("t", [LineSeries(f"replica-number-{i:02d} agent", [0, 1], [1, 2])
                           for i in range(8)], y_range=(0, 2))
    assert "+6 more" in svg and "replica-number-07" not in svg.split("+6 more")[1]
