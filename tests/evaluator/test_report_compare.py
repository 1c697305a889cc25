"""`agentsweep report A B`: the paired comparison of two runs over their shared tasks (numbers
by hand, warnings when the runs differ, report.md/html/json, the CLI) and the coverage of its
interval by simulation, trials nested in tasks."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from evaluator.cli import main
from evaluator.records import UnitId, UnitScore
from evaluator.report import build_report, write_report
from evaluator.report.compare import compare_runs
from evaluator.report.load import RunInput
from tests.evaluator.report_fixtures import write_run_dir


def _unit(run: str, subset: str, task: str, trial: int, score: float | None,
          bench: str = "toy") -> UnitScore:
    return UnitScore(unit=UnitId(run=run, task=f"{bench}/{subset}/{task}", trial=trial,
                                 seed=trial),
                     benchmark=bench, subset=subset, task_id=task, score=score,
                     success=None if score is None else score >= 0.5,
                     judge_error="bad json" if score is None else None)


def _run(label: str, units: list[UnitScore], **info: str) -> RunInput:
    return RunInput(run_dir=f"/runs/{label}", label=label, scores=units, episodes=[],
                    success_threshold=0.5, score_source="test", info=dict(info))


def test_differences_by_hand() -> None:
    """Task t1: A 1,1 vs B 0,1; task t2: A 0,1 vs B 0,0; task t3: A 1,0 vs B 1,0."""
    a = [_unit("a", "s", t, i, v) for t, vs in (("t1", (1, 1)), ("t2", (0, 1)), ("t3", (1, 0)))
         for i, v in enumerate(vs)]
    b = [_unit("b", "s", t, i, v) for t, vs in (("t1", (0, 1)), ("t2", (0, 0)), ("t3", (1, 0)))
         for i, v in enumerate(vs)]
    c = compare_runs(_run("a", a), _run("b", b), n_boot=500, backend="numpy")
    assert [s.subset for s in c.subsets] == ["all"]
    m = {x.metric: x for x in c.subsets[0].metrics}
    assert m["score"].run == pytest.approx(4 / 6) and m["score"].baseline == pytest.approx(2 / 6)
    assert m["score"].diff == pytest.approx((0.5 + 0.5 + 0.0) / 3)
    assert m["pass@1"].diff == pytest.approx(1 / 3)
    # pass@2 per task: A 1, 1, 1; B 1, 0, 1 -> +1/3; pass^2: A 1, 0, 0; B 0, 0, 0 -> +1/3
    assert m["pass@2"].diff == pytest.approx(1 / 3) and m["pass^2"].diff == pytest.approx(1 / 3)
    # exact sign flips over 3 tasks: d = (.5, .5, 0): |mean| reached by (+,+,±) and (-,-,±)
    assert m["score"].p_value == pytest.approx(4 / 8) and c.exact
    assert m["score"].low <= m["score"].diff <= m["score"].high
    assert m["score"].n_tasks == 3 and c.subsets[0].trials_run == [2, 2]
    assert c.warnings == ["only 3 shared tasks: the interval and p-values are rough"]


def test_warnings_name_what_the_runs_do_not_share() -> None:
    rng = np.random.default_rng(0)

    def units(run: str, tasks: range, subsets: tuple[str, ...], trials: int) -> list[UnitScore]:
        return [_unit(run, subsets[t % len(subsets)], f"t{t}", i, float(rng.random()))
                for t in tasks for i in range(trials)]

    a = units("a", range(30), ("one", "two"), 3) + units("a", range(100, 104), ("three",), 3)
    b = units("b", range(5, 30), ("one", "two"), 4)
    b[0] = _unit("b", b[0].subset, b[0].task_id, 0, None)  # a judge error: t5 keeps 3 trials
    base = _run("b", b, profile="paper", prompts="builtin abc", **{"judge models": "gpt-4.1"})
    run = _run("a", a, profile="smoke", prompts="builtin abc", **{"judge models": "qwen"})
    c = compare_runs(run, base, n_boot=200, n_perm=200, backend="numpy")
    text = "\n".join(c.warnings)
    assert "profile differs: b: paper; a: smoke" in text
    assert "judge models differs: b: gpt-4.1; a: qwen" in text
    assert "prompts" not in text  # the same prompt set
    assert "toy/three: only a has it; not compared" in text
    assert "all: the runs do not share every task (9 only in a): compared on the 25 tasks" in text
    assert "trials per task differ (b: 3-4, a: 3)" in text
    all_ = c.subset("all")
    assert all_.shared_tasks == 25 and all_.only_run == 9 and all_.only_baseline == 0
    assert [m.metric for m in all_.metrics] == ["score", "pass@1", "pass@3", "pass^3"]
    assert c.subset("toy/three").shared_tasks == 0
    assert len(all_.curves["pass@k"]) == 3  # k up to the most trials both have of a task


def test_unscored_tasks_are_left_out_and_said() -> None:
    a = [_unit("a", "s", f"t{t}", 0, 1.0) for t in range(12)]
    b = [_unit("b", "s", f"t{t}", 0, None if t < 2 else 0.0) for t in range(12)]
    c = compare_runs(_run("a", a), _run("b", b), n_boot=200, backend="numpy")
    assert c.subset("all").shared_tasks == 10 and c.subset("all").unscored == 2
    assert "2 without a scored trial in one of them" in c.warnings[0]


def test_report_files_carry_the_comparison(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    a = write_run_dir(tmp_path / "a", "base", 12, 3, p=0.3, seed=5)
    b = write_run_dir(tmp_path / "b", "better", 12, 3, p=0.8, seed=5)
    assert main(["report", str(a), str(b), "--out", str(tmp_path / "out"), "--bootstrap",
                 "200", "--permutations", "500", "--backend", "numpy", "--no-scoring"]) == 0
    out = capsys.readouterr().out
    assert "Paired comparison: better vs base" in out
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    [cmp] = data["comparisons"]
    assert cmp["run"] == "better" and cmp["baseline"] == "base" and cmp["n_perm"] == 500
    score = next(m for m in cmp["subsets"][0]["metrics"] if m["metric"] == "score")
    assert score["diff"] > 0.2 and score["low"] > 0 and score["p_value"] < 0.01
    md = (tmp_path / "out" / "report.md").read_text()
    assert "### Paired comparison: better vs base" in md and "| Δ (run − baseline) |" in md
    page = (tmp_path / "out" / "report.html").read_text()
    assert 'data-plot="paired-diff"' in page and 'class="hline"' in page
    # one run, or --no-compare: no comparison
    assert main(["report", str(a), str(b), "--out", str(tmp_path / "none"), "--bootstrap",
                 "50", "--backend", "numpy", "--no-scoring", "--no-compare"]) == 0
    assert json.loads((tmp_path / "none" / "report.json").read_text())["comparisons"] == []
    assert main(["report", str(a), "--permutations", "0"]) == 2


def test_loud_warning_when_few_units_are_scored(tmp_path: Path) -> None:
    """27 of 36 units judge errors: the headline row is from 9 units, and every output says so."""
    d = write_run_dir(tmp_path / "r", "flaky", 12, 3, judge_errors=27, unjudged=0)
    from evaluator.report import load_run

    report = build_report([load_run(d, use_scoring=False)], n_boot=50, backend="numpy")
    line = "WARNING: flaky all: the score is from 9 of 36 units (25%; 27 judge errors)"
    assert report.terminal().startswith(line)
    assert "⚠ 9/36 scored" in report.terminal()
    paths = write_report(report, tmp_path / "out")
    assert f"> **{line}" in paths["md"].read_text()
    assert f'<p class="warn">{line}' in paths["html"].read_text()


def test_interval_coverage_by_simulation() -> None:
    """Simulated studies through the report's own pairing (UnitScores, trials nested in their
    tasks): 40 tasks from a population, 3 trials per task and run with scores in [0, 1] whose
    task means differ by a known amount. The 95% interval of Δscore covers the population
    difference in about 95% of the studies, and p < 0.05 in about 5% when there is none."""
    rng = np.random.default_rng(3)
    delta, sims, covered, rejected = 0.08, 200, 0, 0
    for sim in range(sims):
        shift = delta if sim % 2 == 0 else 0.0
        q = rng.uniform(0.1, 0.8, 40)   # task difficulty, shared by both models
        runs = []
        for label, add in (("a", shift), ("b", 0.0)):
            units = [_unit(label, "s", f"t{t}", i,
                           float(np.clip(q[t] + add + rng.normal(0, 0.15), 0.0, 1.0)))
                     for t in range(40) for i in range(3)]
            runs.append(_run(label, units))
        c = compare_runs(runs[0], runs[1], n_boot=300, n_perm=300,
                         seed=int(rng.integers(1 << 30)), backend="numpy")
        m = c.subset("all").metrics[0]
        if shift:
            covered += m.low <= _true_diff(delta) <= m.high
        else:
            rejected += m.p_value < 0.05
    assert 0.88 <= covered / (sims // 2) <= 0.99
    assert rejected / (sims // 2) <= 0.12


def _true_diff(delta: float) -> float:
    """E over tasks (q ~ U(0.1, 0.8)) of E[clip(q + delta + e)] - E[clip(q + e)], e ~ N(0, .15),
    by quadrature."""
    q = np.linspace(0.1, 0.8, 2001)
    x, w = np.polynomial.hermite_e.hermegauss(60)
    w = w / w.sum()

    def mean_clipped(mu: np.ndarray) -> np.ndarray:
        return (np.clip(mu[:, None] + 0.15 * x[None, :], 0, 1) * w).sum(axis=1)

    return float(np.mean(mean_clipped(q + delta) - mean_clipped(q)))


def test_a_subset_both_have_but_none_scored_in_one() -> None:
    a = [_unit("a", "s", f"t{t}", 0, 1.0) for t in range(3)]
    b = [_unit("b", "s", f"t{t}", 0, None) for t in range(3)]  # every judgement failed
    c = compare_runs(_run("a", a), _run("b", b), n_boot=50, backend="numpy")
    assert c.warnings == [("all: the runs do not share every task (3 without a scored trial in "
                          "one of them): compared on the 0 tasks both scored")]
    assert c.subset("all").metrics[0].diff is None
