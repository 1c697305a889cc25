"""`agentsweep run` with `agent.replicas`: a router over two stub replicas, one killed mid-run;
and the validation of the `replicas` / `routing` config keys."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter

import pytest

from evaluator.config import load_config
from evaluator.run.results import EPISODES_FILE, iter_failures, iter_records
from tests.evaluator.test_run_cli import FAKE, REPO, _env, _wait_for_lines


def test_run_over_two_replicas_survives_one_killed(tmp_path):
    from perf.stub_server import start_stub

    with start_stub("--mode", "text", "--sleep", "0.2") as a, \
            start_stub("--mode", "text", "--sleep", "0.2") as b:
        cfg = tmp_path / "run.toml"
        cfg.write_text(
            f'[agent]\nreplicas = ["{a.url}", "{b.url}"]\n'
            '[agent.routing]\npolicy = "round_robin"\n'
            '[agent.routing.health]\nall_down_wait_s = 10.0\n'
        )
        args = [str(cfg), "--engine-url", a.url, "--out", str(tmp_path), "--name", "r",
                "--set", f"protocol.entry={FAKE}", "--limit", "2", "--trials", "2",
                "--concurrency", "4", "--progress", "off"]
        proc = subprocess.Popen([sys.executable, "-m", "evaluator.cli", "run", *args],
                                cwd=REPO, env=_env(0.0), text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        run_dir = tmp_path / "r"
        _wait_for_lines(run_dir / EPISODES_FILE, 2, proc)
        b.stop()  # terminate replica b while requests are in flight on it
        _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    records = list(iter_records(run_dir))
    counts = Counter(r.unit.key for r in records)
    assert len(records) > 2 and set(counts.values()) == {1}
    assert list(iter_failures(run_dir)) == []
    manifest = (run_dir / "manifest.json").read_text()
    assert b.url in manifest and "round_robin" in manifest


@pytest.mark.parametrize(("body", "message"), [
    ('[agent]\nreplicas = ["gpu1:8000"]\n', "replicas[0]: base_url must be an http(s) URL"),
    ('[agent]\nreplicas = ["http://a/v1"]\n[agent.routing]\npolicy = "random"\n',
     "routing.policy: one of sticky_least_loaded, round_robin, hash"),
    ('[user.routing]\nthreshold = 2\n', "routing: Object contains unknown field `threshold`"),
])
def test_replicas_and_routing_are_validated(tmp_path, body, message):
    cfg = tmp_path / "bad.toml"
    cfg.write_text(body)
    with pytest.raises(Exception, match=re.escape(message)):
        load_config(cfg)
