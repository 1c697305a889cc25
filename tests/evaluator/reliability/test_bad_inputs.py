"""Issue 15: bad input never crashes, hangs or is silently accepted.

Each case of the seeded corpus (corpus.py) runs `agentsweep` in-process under a bound the
harness enforces (harness.py) and must give: the expected exit code; exactly one line on
stderr that names the file / line / field or the flag; no traceback anywhere; no engine start;
and every input file byte-identical afterwards.
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from pathlib import Path

import pytest

from tests.evaluator.reliability import corpus
from tests.evaluator.reliability.harness import run_cli, snapshot, stderr_is_one_line

CASES = corpus.build(seed=15)


def test_the_corpus_is_large_and_covers_every_kind():
    counts = Counter(c.kind for c in CASES)
    assert len(CASES) >= 500, counts
    assert set(counts) == set(corpus.KINDS), counts
    assert all(counts[k] >= 8 for k in corpus.KINDS), counts
    assert corpus.build(seed=15) == CASES  # deterministic for a seed


def _write_rundir(run: Path) -> None:
    from tests.evaluator.report_fixtures import write_run_dir

    write_run_dir(run, "run", n_tasks=3, n_trials=2, unjudged=0)
    eps = run / "episodes.jsonl"
    eps.write_bytes(eps.read_bytes().rsplit(b"\n", 1)[0] + b"\n")  # no torn tail
    manifest = {"run": "run", "created_at": 0.0, "agentsweep_version": "0", "python": "3",
                "platform": "x", "packages": {}, "argv": [], "overrides": [],
                "dataset": "sample", "benchmark": "travelbench", "n_tasks": 3, "trials": 2,
                "seed": 0, "subsets": {}, "data_files": [], "data_issues": [], "roles": [],
                "resolved_config": {"name": "run"}, "profile": "smoke"}
    (run / "manifest.json").write_text(json.dumps(manifest))
    (run / "config.toml").write_text('name = "run"\n')


def _damage(path: Path, how: str) -> None:
    """Break one line in the middle of a results file (never the last: a torn tail is
    legitimately ignored). `how`: a kind, optionally `@LINE@FRACTION` (1-based line; where in
    it a cut or a bad byte goes)."""
    if path.suffix in (".json", ".toml"):
        path.write_bytes(b"\x00 not [ valid {")
        return
    lines = path.read_bytes().split(b"\n")
    kind, _, where = how.partition("@")
    line_no, _, frac = where.partition("@")
    target = int(line_no) - 1 if line_no else 1
    raw = lines[target]
    at = max(1, min(len(raw) - 1, int(len(raw) * float(frac or 0.5))))
    lines[target] = {"garbage": b"GARBAGE{]", "nul": b"\x00" * 40,
                     "truncated-middle": raw[:at],
                     "invalid-utf8": raw[:20] + b"\xff\xfe" + raw[22:],
                     "bad-byte": raw[:at] + b"\xff" + raw[at:],
                     "split": raw[:at] + b"\n" + raw[at:],  # two broken lines
                     }[kind]
    path.write_bytes(b"\n".join(lines))


def materialise(case: corpus.Case, d: Path) -> None:
    for src, dst in case.copies:
        target = d / dst
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(corpus.REPO / src, target)
    for rel, content in case.files.items():
        if rel == "__rundir__":  # a good run directory at d/<content>
            _write_rundir(d / str(content))
            continue
        if rel == "__damage__":
            fname, _, how = str(content).partition(":")
            _write_rundir(d / "run")
            _damage(d / "run" / fname, how)
            continue
        target = d / rel.replace("{d}", str(d))
        target.parent.mkdir(parents=True, exist_ok=True)
        if content is corpus.FIFO:
            os.mkfifo(target)
        elif isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(str(content).replace("{d}", str(d)), encoding="utf-8")


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a relative `out` (the default "runs") stays in here
    monkeypatch.setenv("AGENTSWEEP_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENTSWEEP_DEBUG", raising=False)
    monkeypatch.delenv("AGENTSWEEP_PLUGINS", raising=False)
    return tmp_path


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case: corpus.Case, workdir: Path):
    d = workdir / "in"
    d.mkdir()
    materialise(case, d)
    before = snapshot([d])
    argv = [a.replace("{d}", str(d)) for a in case.argv]
    got = run_cli(argv, timeout_s=case.timeout_s)
    both = got.out + got.err
    assert "Traceback" not in both, both[-3000:]
    assert got.code == case.code, (got.code, got.err[-2000:], got.out[-500:])
    assert snapshot([d]) == before, "an input file changed"
    if case.code == 0:
        assert case.accepted
        return
    assert stderr_is_one_line(got.err), got.err[-3000:]
    assert "unexpected error" not in got.err, got.err
    text = got.out if case.where == "out" else got.err
    for words in case.says:
        assert words.replace("{d}", str(d)) in text, (words, text[-2000:])


def test_the_harness_bounds_a_hang():
    import time

    from tests.evaluator.reliability.harness import Hang, bounded

    with pytest.raises(Hang), bounded(0.2):
        time.sleep(5)


def test_the_harness_stops_a_command_that_would_start_an_engine(workdir: Path):
    from tests.evaluator.reliability.harness import EngineWouldStart

    with pytest.raises(EngineWouldStart):
        run_cli(["run", "--limit", "1", "--progress", "off"])


def test_check_validates_without_starting_or_writing(workdir: Path):
    got = run_cli(["run", "--limit", "2", "--trials", "3", "--check"])
    assert got.code == 0, got.err
    assert "check: OK: " in got.out and "units" in got.out
    assert not (workdir / "runs").exists()
