"""A corrupt line in a run's results files: `run --resume`, `judge` and `report` name the file
and line and point to `agentsweep repair`, which moves the bad lines to quarantine.jsonl so the
commands go on."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from evaluator.judges.pool import read_judgements
from evaluator.run.repair import QUARANTINE_FILE, read_quarantine, repair_run
from evaluator.run.results import EPISODES_FILE, iter_records

REPO = Path(__file__).resolve().parents[2]
FAKE = "tests.evaluator.run_fakes:one_call_episode"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, FAKE_EPISODE_SLEEP="0")
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "evaluator.cli", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=180, check=False)


@pytest.fixture(scope="module")
def stub():
    from perf.stub_server import start_stub

    with start_stub("--mode", "schema") as s:
        yield s


@pytest.fixture(scope="module")
def judged_run(stub, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished, judged run: 3 sample tasks x 2 trials on the stub."""
    out = tmp_path_factory.mktemp("runs")
    r = _cli("run", "--engine-url", stub.url, "--out", str(out), "--name", "r", "--limit", "1",
             "--trials", "2", "--progress", "off", "--set", f"protocol.entry={FAKE}")
    assert r.returncode == 0, r.stderr
    r = _cli("judge", str(out / "r"), "--judge-url", stub.url)
    assert r.returncode == 0, r.stderr
    return out / "r"


def _copy(src: Path, dst: Path) -> Path:
    dst.mkdir()
    for p in src.iterdir():
        if p.is_file():
            (dst / p.name).write_bytes(p.read_bytes())
    return dst


def _damage(path: Path, line: int, prefix: bytes = b"\x00GARBAGE") -> bytes:
    lines = path.read_bytes().split(b"\n")
    original = lines[line - 1]
    lines[line - 1] = prefix + original
    path.write_bytes(b"\n".join(lines))
    return prefix + original


def _one_line_error(err: str) -> str:
    lines = [x for x in err.splitlines() if x.strip() and not x.startswith("note:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_resume_report_and_judge_name_the_line_and_point_to_repair(judged_run, stub, tmp_path):
    run_dir = _copy(judged_run, tmp_path / "c")
    _damage(run_dir / EPISODES_FILE, 2)
    for args in (("run", "--resume", str(run_dir), "--progress", "off"),
                 ("report", str(run_dir), "--bootstrap", "10"),
                 ("judge", str(run_dir), "--judge-url", stub.url)):
        r = _cli(*args)
        assert r.returncode in (1, 2), (args, r.stderr)
        line = _one_line_error(r.stderr)
        assert f"{run_dir / EPISODES_FILE}:2:" in line, args
        assert f"agentsweep repair {run_dir}" in line, args


def test_a_corrupt_judgement_line_stops_report_with_the_hint(judged_run, tmp_path):
    run_dir = _copy(judged_run, tmp_path / "j")
    _damage(run_dir / "judgements.jsonl", 3, prefix=b"{")
    r = _cli("report", str(run_dir), "--bootstrap", "10")
    assert r.returncode == 1
    line = _one_line_error(r.stderr)
    assert "judgements.jsonl:3:" in line and f"agentsweep repair {run_dir}" in line


def test_repair_quarantines_bad_lines_and_resume_reruns_those_units(judged_run, tmp_path):
    run_dir = _copy(judged_run, tmp_path / "q")
    before = [r.unit.key for r in iter_records(run_dir)]
    bad_episode = _damage(run_dir / EPISODES_FILE, 4)
    bad_judgement = _damage(run_dir / "judgements.jsonl", 1, prefix=b"{")
    with open(run_dir / EPISODES_FILE, "ab") as fh:
        fh.write(b'{"unit": {"run": "r", "ta')  # and a torn last line
    r = _cli("repair", str(run_dir))
    assert r.returncode == 0, r.stderr
    assert "episodes.jsonl: moved 2 undecodable line(s) (4, 7) to quarantine.jsonl; 5 kept" \
        in r.stdout
    assert "judgements.jsonl: moved 1 undecodable line(s) (1)" in r.stdout
    assert "failures.jsonl: 0 lines, all readable" in r.stdout
    q = read_quarantine(run_dir)
    assert [(x.file, x.line) for x in q] == [(EPISODES_FILE, 4), (EPISODES_FILE, 7),
                                             ("judgements.jsonl", 1)]
    assert base64.b64decode(q[0].raw_b64) == bad_episode and "malformed" in q[0].error
    assert base64.b64decode(q[2].raw_b64) == bad_judgement and "torn" in q[1].error
    kept = [r.unit.key for r in iter_records(run_dir)]
    assert kept == before[:3] + before[4:]
    assert len(read_judgements(run_dir)) >= 1
    again = _cli("repair", str(run_dir))  # nothing left to do, nothing moved twice
    assert again.returncode == 0 and "moved" not in again.stdout
    assert len(read_quarantine(run_dir)) == 3
    done = _cli("run", "--resume", str(run_dir), "--progress", "off")
    assert done.returncode == 0, done.stderr
    counts = Counter(r.unit.key for r in iter_records(run_dir))
    assert set(counts) == set(before) and set(counts.values()) == {1}
    assert _cli("report", str(run_dir), "--bootstrap", "10").returncode == 0


def test_repair_refuses_what_is_not_a_run_directory(tmp_path):
    r = _cli("repair", str(tmp_path / "missing"))
    assert r.returncode == 2 and "not a run directory" in _one_line_error(r.stderr)


def test_repair_of_a_clean_run_changes_nothing(judged_run, tmp_path):
    run_dir = _copy(judged_run, tmp_path / "clean")
    snapshot = {p.name: p.read_bytes() for p in run_dir.iterdir()}
    result = repair_run(run_dir)
    assert result.moved == 0 and not (run_dir / QUARANTINE_FILE).exists()
    assert {p.name: p.read_bytes() for p in run_dir.iterdir()} == snapshot
