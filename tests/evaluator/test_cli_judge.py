"""`agentsweep judge RUN_DIR` end to end, without a model.

A run directory is produced by `agentsweep run` against `perf.stub_server` (or written by hand
when a test needs tool calls or a particular judge config); the judge is a small aiohttp
server in a thread that answers /v1/chat/completions with canned rubric / meta JSON.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import msgspec
import pytest

from evaluator.judges.pool import read_judgements
from evaluator.judges.settings import JudgeSettings
from evaluator.run.results import EPISODES_FILE, iter_records
from evaluator.scoring import score_run
from perf.stub_server import free_port
from tests.evaluator.judge_cli_support import (
    JUDGE_MODEL,
    MULTI,
    REPO,
    SINGLE,
    JudgeStub,
    by_kind,
    copy_run,
    judge_cli,
)
from tests.evaluator.judge_fakes import make_record


def test_judge_scores_resumes_and_reruns(sample_run, judge, tmp_path, capsys):
    run_dir = copy_run(sample_run, tmp_path / "run")
    records = list(iter_records(run_dir))
    assert sorted(r.subset for r in records) == ["multi_turn"] * 2 + ["single_turn"] * 2 + [
        "unsolvable"] * 2

    assert judge_cli(str(run_dir), "--judge-url", judge.url, "--judge-model", JUDGE_MODEL) == 0
    out = capsys.readouterr().out
    assert "judged 10 (0 judge errors), 0 already judged" in out
    assert "still owed (counted from run's files): none" in out
    js = read_judgements(run_dir)
    kinds = by_kind(js)
    assert {k: len(v) for k, v in kinds.items()} == {"travel_rubric": 4, "meta": 4,
                                                      "unsolvable": 2}
    assert len(judge.requests) == 8  # the unsolvable rule needs no model
    assert {b["model"] for b in judge.requests} == {JUDGE_MODEL}
    for j in kinds["travel_rubric"]:
        expected = SINGLE if j.unit.task.split("/")[1] == "single_turn" else MULTI
        assert j.judge_model == JUDGE_MODEL and j.error is None
        assert j.score == pytest.approx(expected)
        assert set(j.scores.values()) <= {2.0, 3.0, 4.0, 5.0}
    assert all(j.score == pytest.approx(0.8) for j in kinds["meta"])
    assert all(j.score == 0.0 and j.judge_model == "rule" for j in kinds["unsolvable"])
    # the final instance score: normalised rubric x meta s/5 (no tool calls: no penalty)
    settings = JudgeSettings(model=JUDGE_MODEL)
    scores = {s.unit.key: s for s in score_run(run_dir, settings)}
    assert len(scores) == 6
    for s in scores.values():
        want = {"single_turn": SINGLE * 0.8, "multi_turn": MULTI * 0.8, "unsolvable": 0.0}
        assert s.score == pytest.approx(want[s.subset]), s.unit.key
    assert "single_turn   60.00" in out and "multi_turn    50.00" in out

    # a second judge run finds everything judged: nothing asked, nothing appended
    before = (run_dir / "judgements.jsonl").read_bytes()
    assert judge_cli(str(run_dir), "--judge-url", judge.url, "--judge-model", JUDGE_MODEL) == 0
    assert "judged 0 (0 judge errors), 10 already judged" in capsys.readouterr().out
    assert (run_dir / "judgements.jsonl").read_bytes() == before
    assert len(judge.requests) == 8

    # --rerun judges everything again and appends
    assert judge_cli(str(run_dir), "--judge-url", judge.url, "--judge-model", JUDGE_MODEL,
                     "--rerun") == 0
    assert "judged 10 (0 judge errors)" in capsys.readouterr().out
    assert len(read_judgements(run_dir)) == 20
    assert len(judge.requests) == 16
    assert {s.unit.key: s.score for s in score_run(run_dir, settings)} == {
        k: s.score for k, s in scores.items()}

    # another judge model is another key: judged afresh; --no-meta skips the audit
    assert judge_cli(str(run_dir), "--judge-url", judge.url, "--judge-model", "other",
                     "--no-meta", "--concurrency", "1") == 0
    assert "judged 4 (0 judge errors), 2 already judged" in capsys.readouterr().out
    new = read_judgements(run_dir)[20:]
    assert {(j.kind, j.judge_model) for j in new} == {("travel_rubric", "other")}


def _hand_run(run_dir: Path, judge_toml: str, records: list[Any]) -> Path:
    run_dir.mkdir()
    (run_dir / "config.toml").write_text('[data]\ndataset = "sample"\n\n[judge]\n' + judge_toml)
    (run_dir / EPISODES_FILE).write_bytes(b"".join(msgspec.json.encode(r) + b"\n"
                                                   for r in records))
    return run_dir


def test_tool_penalty_and_config_endpoints(judge, tmp_path, capsys):
    """Endpoints from the run's config.toml (no manifest); 1 of 4 tool calls failed."""
    run_dir = _hand_run(
        tmp_path / "h",
        f'model = "{JUDGE_MODEL}"\nendpoints = [{{ base_url = "{judge.url}" }}]\n',
        [make_record("single_turn", "a", calls=4, errors=1), make_record("multi_turn", "b")])
    assert judge_cli(str(run_dir)) == 0
    capsys.readouterr()
    scores = {s.task_id: s.score for s in score_run(run_dir, JudgeSettings(model=JUDGE_MODEL))}
    assert scores["a"] == pytest.approx(SINGLE * 0.8 * 0.75)
    assert scores["b"] == pytest.approx(MULTI * 0.8)


def test_unparseable_answer_is_retried_then_recorded_as_judge_error(tmp_path, capsys):
    with JudgeStub(lambda body: "I think it is fine, no JSON here.") as bad:
        run_dir = _hand_run(tmp_path / "u", f'model = "{JUDGE_MODEL}"\nmax_attempts = 3\n'
                            f'endpoints = [{{ base_url = "{bad.url}" }}]\n',
                            [make_record("single_turn", "a")])
        assert judge_cli(str(run_dir)) == 0
        out = capsys.readouterr().out
        assert len(bad.requests) == 3
        temps = [b.get("temperature") for b in bad.requests]
        assert temps[0] == 0.0 and temps[1:] == [0.7, 0.7]  # retries leave temperature 0
    assert "judged 1 (1 judge errors)" in out
    [j] = read_judgements(run_dir)
    assert j.kind == "travel_rubric" and j.score is None and j.attempts == 3
    assert "unparseable" in (j.error or "") and "no JSON here" in j.raw
    [s] = score_run(run_dir, JudgeSettings(model=JUDGE_MODEL))
    assert s.score is None and s.judge_error and s.judge_error.startswith("rubric:")
    # a judge error is a verdict: not asked again unless --rerun
    with JudgeStub() as good:
        assert judge_cli(str(run_dir), "--judge-url", good.url, "--judge-model",
                         JUDGE_MODEL) == 0
        assert good.requests == []
        assert judge_cli(str(run_dir), "--judge-url", good.url, "--judge-model",
                         JUDGE_MODEL, "--retry-errors") == 0
        assert len(good.requests) == 2  # rubric + meta
        [s] = score_run(run_dir, JudgeSettings(model=JUDGE_MODEL))
        assert s.score == pytest.approx(SINGLE * 0.8) and s.judge_error is None
        # the error is settled now: --retry-errors has nothing left, --rerun judges again
        assert judge_cli(str(run_dir), "--judge-url", good.url, "--judge-model",
                         JUDGE_MODEL, "--retry-errors") == 0
        assert len(good.requests) == 2
        assert judge_cli(str(run_dir), "--judge-url", good.url, "--judge-model",
                         JUDGE_MODEL, "--rerun") == 0
        assert len(good.requests) == 4
    capsys.readouterr()
    [s] = score_run(run_dir, JudgeSettings(model=JUDGE_MODEL))
    assert s.score == pytest.approx(SINGLE * 0.8)


@pytest.mark.parametrize("model", [JUDGE_MODEL, ""])
def test_dead_judge_endpoint_is_an_infrastructure_failure(model, tmp_path, capsys):
    dead = f"http://127.0.0.1:{free_port()}/v1"
    run_dir = _hand_run(
        tmp_path / "d",
        f'model = "{model}"\ninfra_attempts = 1\n'
        f'endpoints = [{{ base_url = "{dead}", max_retries = 0, timeout_s = 5.0 }}]\n',
        [make_record("single_turn", "a"), make_record("unsolvable", "u")])
    code = judge_cli(str(run_dir))
    out, err = capsys.readouterr()
    assert code == 1
    assert dead in out + err
    assert not any(j.kind != "unsolvable" for j in read_judgements(run_dir))
    assert all(j.error is None for j in read_judgements(run_dir))
    if model:  # the rule judge needs no endpoint; the rubric unit is left for a later run
        assert "1 left after infrastructure errors" in out
        # what is owed is counted from the files: the rubric judgement and its meta-judge
        # (the meta-judge counts once the rubric is judged: 1 of 1 episode now)
        assert "still owed (counted from d's files): 1 judgements of 1 episodes" in out


def test_dead_engine_url_is_an_infrastructure_failure(tmp_path, capsys):
    run_dir = _hand_run(tmp_path / "e", "", [make_record("single_turn", "a")])
    cfg = run_dir / "config.toml"
    dead = f"http://127.0.0.1:{free_port()}/v1"
    cfg.write_text(f'[engine]\nurl = "{dead}"\n\n' + cfg.read_text())
    assert judge_cli(str(run_dir)) == 1
    err = capsys.readouterr().err
    assert "cannot attach" in err and "Traceback" not in err
    assert not (run_dir / "judgements.jsonl").exists() or read_judgements(run_dir) == []


def test_missing_or_invalid_run_dir(tmp_path, capsys):
    assert judge_cli(str(tmp_path / "nope")) == 2
    assert "no episodes.jsonl" in capsys.readouterr().err
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / EPISODES_FILE).write_text('{"not": "a record"}\n{}\n')
    assert judge_cli(str(bad), "--judge-url", "http://127.0.0.1:1/v1", "--judge-model", "m") == 2
    assert "episodes.jsonl:1" in capsys.readouterr().err
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    (cfg / EPISODES_FILE).write_text("")
    (cfg / "config.toml").write_text("[judge]\nconcurency = 3\n")
    assert judge_cli(str(cfg)) == 2
    assert "judge.concurency" in capsys.readouterr().err
    (cfg / "config.toml").write_text("[judge]\nconcurrency = 3\n")
    assert judge_cli(str(cfg), "--concurrency", "0") == 2
    assert "judge.concurrency must be >= 1" in capsys.readouterr().err


def test_sigterm_exits_130_with_a_hint_and_keeps_what_was_judged(sample_run, tmp_path):
    from perf.stub_server import start_stub

    run_dir = copy_run(sample_run, tmp_path / "t")
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    judgements = run_dir / "judgements.jsonl"
    with start_stub("--mode", "schema", "--sleep", "0.3") as slow:
        proc = subprocess.Popen(
            [sys.executable, "-m", "evaluator.cli", "judge", str(run_dir), "--judge-url",
             slow.url, "--concurrency", "1"], cwd=REPO, env=env, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            for _ in range(6000):  # bounded wait for the first judgement (at most ~60 s)
                if judgements.exists() and judgements.read_bytes().count(b"\n") >= 1:
                    break
                assert proc.poll() is None, proc.communicate()
                threading.Event().wait(0.01)
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 130, err
    assert out == ""  # no summary of a partial judging
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert "stopped by SIGTERM" in lines[0] and f"agentsweep judge {run_dir}`" in lines[0]
    first = read_judgements(run_dir)
    assert 1 <= len(first) < 10 and judgements.read_bytes().endswith(b"\n")
    assert f"{len(first)} judgements saved" in lines[0]
    with start_stub("--mode", "schema") as fast:
        r = subprocess.run([sys.executable, "-m", "evaluator.cli", "judge", str(run_dir),
                            "--judge-url", fast.url], cwd=REPO, env=env, text=True,
                           capture_output=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr
    assert f"judged {10 - len(first)} (0 judge errors), {len(first)} already judged" in r.stdout
    keys = [(j.trajectory_hash, j.kind) for j in read_judgements(run_dir)]
    assert len(keys) == 10 and len(set(keys)) == 10
