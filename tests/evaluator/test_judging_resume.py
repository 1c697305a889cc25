"""Judgements survive a resume (issue 29): a run or sweep resumed with judging judges every
recorded episode that lacks a judgement, whenever it was recorded; the count still owed comes
from the files; SIGTERM or kill -9 while judging, then `run --resume --judge`, ends with the
judgement set of a run that was never interrupted.

`agentsweep run` on the built-in TravelBench sample (2 tasks per subset: rubric judge,
meta-judge and rule check) with a one-call protocol against stub servers; the judge stub
answers each prompt with the same JSON every time, so two runs' judgements compare equal.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from evaluator.benchmarks.base import BenchmarkOptions
from evaluator.benchmarks.travelbench.judges import META_KIND, RUBRIC_KIND
from evaluator.judges.owed import count_owed
from evaluator.judges.pool import JUDGEMENTS_FILE, read_judgements
from evaluator.judges.settings import JudgeSettings
from evaluator.judges.transcript import trajectory_hash
from evaluator.run.results import iter_records
from perf.stub_server import start_stub

REPO = Path(__file__).resolve().parents[2]
FAKE = "tests.evaluator.run_fakes:one_call_episode"
EPISODES = 6     # 2 tasks x 3 subsets x 1 trial
JUDGEMENTS = 10  # 2 x (rubric + meta) x 2 judged subsets + 2 rule checks
STUB_MODEL = "stub-model"


def _cli(*args: str) -> subprocess.Popen[str]:
    env = dict(os.environ, FAKE_EPISODE_SLEEP="0")
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.Popen([sys.executable, "-m", "evaluator.cli", *args], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _run(out: Path, name: str, agent: str, judge: str | None, *extra: str
         ) -> subprocess.Popen[str]:
    args = ["run", "--engine-url", agent, "--out", str(out), "--name", name, "--limit", "2",
            "--trials", "1", "--progress", "off", "--set", f"protocol.entry={FAKE}", *extra]
    if judge is not None:
        args += ["--judge", "--set", f'judge.endpoints=[{{base_url="{judge}"}}]',
                 "--set", "judge.concurrency=1"]
    return _cli(*args)


def _resume(run_dir: Path) -> tuple[int, str, str]:
    p = _cli("run", "--resume", str(run_dir), "--judge")
    out, err = p.communicate(timeout=300)
    return p.returncode, out, err


def judgement_set(run_dir: Path) -> Counter:
    """Every judgement as (unit, kind, trajectory, judge model, prompt version, score,
    scores, error), with how often it was written (1 each: nothing judged twice)."""
    return Counter((j.unit.key, j.kind, j.trajectory_hash, j.judge_model, j.prompt_version,
                    j.score, tuple(sorted(j.scores.items())), j.error)
                   for j in read_judgements(run_dir))


def fully_judged(run_dir: Path) -> int:
    """Episodes with every judgement TravelBench gives them (an independent count: unsolvable
    -> the rule check; single and multi-turn -> rubric and meta)."""
    kinds: dict[str, set[str]] = {}
    for j in read_judgements(run_dir):
        kinds.setdefault(j.trajectory_hash, set()).add(j.kind)
    n = 0
    for rec in iter_records(run_dir):
        want = 1 if rec.subset == "unsolvable" else 2
        n += len(kinds.get(trajectory_hash(rec), ())) == want
    return n


@pytest.fixture(scope="module")
def agent() -> Iterator[str]:
    with start_stub("--mode", "text") as stub:
        yield stub.url


@pytest.fixture(scope="module")
def slow_judge() -> Iterator[str]:
    """0.4 s per answer, one at a time: judging lasts a few seconds after the episodes."""
    with start_stub("--mode", "schema", "--sleep", "0.4") as stub:
        yield stub.url


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory: pytest.TempPathFactory, agent: str) -> Path:
    """A run judged from start to end without interruption."""
    out = tmp_path_factory.mktemp("reference")
    with start_stub("--mode", "schema") as judge:
        p = _run(out, "ref", agent, judge.url)
        _, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    return out / "ref"


@pytest.fixture(scope="module")
def reference(reference_run: Path) -> Counter:
    """Its judgements."""
    ref = judgement_set(reference_run)
    assert sum(ref.values()) == JUDGEMENTS and set(ref.values()) == {1}
    assert all(k[3] in (STUB_MODEL, "rule") and k[7] is None for k in ref)  # no judge error
    return ref


def test_a_run_without_judging_resumed_with_judge_judges_every_episode(
        tmp_path, agent, reference):
    p = _run(tmp_path, "r", agent, None)
    _, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    run_dir = tmp_path / "r"
    assert not (run_dir / JUDGEMENTS_FILE).exists()
    with start_stub("--mode", "schema") as judge:
        p = _cli("run", "--resume", str(run_dir), "--judge", "--set",
                 f'judge.endpoints=[{{base_url="{judge.url}"}}]')
        out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    assert f"judging {EPISODES} recorded episodes that lack judgements" in err
    assert f"judged: {JUDGEMENTS} judgements this session (0 judge errors); none owed" in out
    assert judgement_set(run_dir) == reference
    code, out, err = _resume(run_dir)              # nothing owed: nothing asked, nothing added
    assert code == 0 and "judged: 0 judgements this session (0 judge errors); none owed" in out
    assert "recorded episodes that lack judgements" not in err
    assert judgement_set(run_dir) == reference


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
def test_a_run_stopped_while_judging_resumes_to_the_uninterrupted_judgements(
        tmp_path, agent, slow_judge, reference, how):
    """The signal lands after the episodes, while the last ones are judged (where SIGTERM
    used to kill the process outright): what was judged is on disk, the rest is owed, and
    `run --resume --judge` judges exactly that."""
    run_dir = tmp_path / "r"
    p = _run(tmp_path, "r", agent, slow_judge)
    judgements = run_dir / JUDGEMENTS_FILE
    deadline = time.monotonic() + 120
    while not (judgements.exists() and judgements.read_bytes().count(b"\n") >= 3):
        assert p.poll() is None, p.communicate()
        assert time.monotonic() < deadline, "no judgement was written"
        time.sleep(0.01)
    p.send_signal(getattr(signal, how))
    out, err = p.communicate(timeout=120)
    judged = read_judgements(run_dir)
    assert 3 <= len(judged) < JUDGEMENTS
    owing = EPISODES - fully_judged(run_dir)
    assert owing > 0
    if how == "SIGTERM":
        assert p.returncode == 130, err
        assert "Traceback" not in err
        # the count owed is the files' (not this session's): episodes lacking a judgement
        owed = re.search(r"still owed: (\d+) judgements of (\d+) episodes", out)
        assert owed and int(owed.group(2)) == owing, out
        assert f"continue with `agentsweep run --resume {run_dir} --judge`" in out
    else:
        assert p.returncode == -signal.SIGKILL
    code, out, err = _resume(run_dir)
    assert code == 0, err
    assert f"judging {owing} recorded episodes that lack judgements" in err
    assert "none owed" in out
    assert judgement_set(run_dir) == reference
    assert fully_judged(run_dir) == EPISODES


def test_the_count_owed_is_read_from_the_files(tmp_path, reference_run):
    """`count_owed` is what the files say: a lost meta-judgement is owed (the rubric it audits
    is there), a lost rubric owes the rubric (its audit follows once it has a score); with
    retry_errors a judge error is owed again."""
    run_dir = tmp_path / "r"
    shutil.copytree(reference_run, run_dir)
    settings = JudgeSettings()
    # keyed with the options the run was made with (the sample's: the judges' prefix layout)
    made = msgspec.json.decode((run_dir / "manifest.json").read_bytes())["resolved_config"]
    options = BenchmarkOptions(made.get("options"))
    args = (settings, STUB_MODEL, None, {}, options)
    assert count_owed(run_dir, *args).episodes == 0
    lines = (run_dir / JUDGEMENTS_FILE).read_bytes().splitlines(keepends=True)
    kinds = [msgspec.json.decode(x)["kind"] for x in lines]
    meta, rubric = kinds.index(META_KIND), kinds.index(RUBRIC_KIND)
    kept = [x for i, x in enumerate(lines) if i not in (meta, rubric)]
    (run_dir / JUDGEMENTS_FILE).write_bytes(b"".join(kept))
    owed = count_owed(run_dir, *args)
    assert (owed.episodes, owed.judgements) in ((2, 2), (1, 1))  # the same episode or two
    assert owed.episodes == EPISODES - fully_judged(run_dir)
    (run_dir / JUDGEMENTS_FILE).write_bytes(b"".join(lines))
    j = msgspec.json.decode(lines[0])
    j.update(error="judge failed", score=None, created_at=j.get("created_at", 0) + 1)
    (run_dir / JUDGEMENTS_FILE).write_bytes(b"".join(lines) + msgspec.json.encode(j) + b"\n")
    assert count_owed(run_dir, *args).episodes == 0              # a judge error is a judgement
    retry = msgspec.structs.replace(settings, retry_errors=True)
    assert count_owed(run_dir, retry, STUB_MODEL, None, {}, options).episodes == 1
