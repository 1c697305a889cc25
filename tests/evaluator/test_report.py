"""Reports from synthetic UnitScores and synthetic run directories."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest

from evaluator.cli import main
from evaluator.report import ReportInputError, build_report, load_run, write_report
from evaluator.report.load import RunInput
from evaluator.report.summary import summarize_run
from kernels.passk import pass_at_k, pass_hat_k
from tests.evaluator.report_fixtures import EVIL, synthetic_scores, write_run_dir


def _run(scores, label="r1", threshold=0.5) -> RunInput:
    return RunInput(run_dir="/tmp/x", label=label, scores=scores, episodes=[],
                    success_threshold=threshold, score_source="test")


def test_summary_numbers_match_kernels() -> None:
    scores = synthetic_scores("r1", 12, 4, seed=1)
    summ = summarize_run(_run(scores), n_boot=200, backend="numpy")
    assert [s.name for s in summ.subsets] == [
        "all", "travelbench/multi_turn", "travelbench/single_turn"]
    all_ = summ.subset("all")
    assert all_.n_units == 48 and all_.n_tasks == 12 and all_.max_trials == 4
    # recompute pass@k / pass^k by hand from the unit scores
    per_task: dict[str, list[bool]] = {}
    for s in scores:
        per_task.setdefault(s.unit.task, []).append(bool(s.success))
    n = np.array([len(v) for v in per_task.values()])
    c = np.array([sum(v) for v in per_task.values()])
    for k in range(1, 5):
        assert all_.curves["pass@k"][k - 1].value == pytest.approx(pass_at_k(n, c, k).mean())
        assert all_.curves["pass^k"][k - 1].value == pytest.approx(pass_hat_k(n, c, k).mean())
        p = all_.curves["pass@k"][k - 1]
        assert p.low <= p.value <= p.high and p.n_tasks == 12
    trial_means = [np.mean([s.score for s in scores if s.unit.trial == t]) for t in range(4)]
    assert all_.mean_score == pytest.approx(np.mean(trial_means))
    assert all_.std_across_trials == pytest.approx(np.std(trial_means, ddof=1))
    assert all_.success_rate == pytest.approx(np.mean([s.success for s in scores]))
    assert all_.tool_calls == 4 * 48
    assert all_.tool_error_rate == pytest.approx(sum(s.tool_errors for s in scores) / (4 * 48))
    assert {d.name for d in all_.dims} == {"accuracy", "helpfulness"}
    assert all_.dims[0].histogram.labels == ["1", "2", "3", "4", "5"]


def test_ragged_trials_and_judge_errors() -> None:
    scores = synthetic_scores("r1", 4, 3, seed=2, subsets=("s",))
    scores = [s for s in scores if not (s.task_id == "t0" and s.unit.trial == 2)]
    scores[0].score = None
    scores[0].success = None
    scores[0].judge_error = "bad json"
    all_ = summarize_run(_run(scores), n_boot=50, backend="numpy").subset("all")
    assert all_.judge_errors == 1 and all_.n_scored == len(scores) - 1
    assert all_.min_trials == 1 and all_.max_trials == 3
    assert [p.n_tasks for p in all_.curves["pass@k"]] == [4, 3, 3]
    assert all_.judge_error_samples[0][1] == "bad json"
    # the plots draw only the k every task reaches (k=1 here); the tables keep k=2,3
    from evaluator.report.render_html import curve_plot

    svg = curve_plot([summarize_run(_run(scores), n_boot=50, backend="numpy")], "all", "pass@k")
    assert svg.count("<circle") == 1 and "every task reaches" in svg


def test_threshold_override_and_json_roundtrip(tmp_path: Path) -> None:
    run_dir = write_run_dir(tmp_path / "run_a", "run-a", 6, 3, seed=3)
    strict = load_run(run_dir, success_threshold=0.99, use_scoring=False)
    assert strict.score_source == "judgements.jsonl adapter"
    assert all(not s.success for s in strict.scores if s.score is not None and s.score < 0.99)
    loose = load_run(run_dir, use_scoring=False)
    assert loose.success_threshold == 0.5  # from config.toml [judge]
    report = build_report([loose], n_boot=100, backend="numpy")
    paths = write_report(report, tmp_path / "out")
    data = json.loads(paths["json"].read_text())
    run = data["runs"][0]
    assert run["label"] == "run-a"
    all_ = run["subsets"][0]
    assert all_["unjudged"] == 1 and all_["judge_errors"] == 1
    assert all_["n_units"] == 18
    tokens = {t["role"]: t for t in all_["tokens"]}
    assert tokens["agent"]["cache_hit_rate"] == pytest.approx(0.6)
    assert tokens["all"]["cache_hit_rate"] == pytest.approx(700 / 1500)
    assert all_["terminations"] == {"answer": 12, "max_steps": 6}


def test_html_and_markdown_escape_trajectory_text(tmp_path: Path) -> None:
    run_dir = write_run_dir(tmp_path / "evil", f"evil{EVIL}", 4, 2, evil=True, seed=4)
    report = build_report([load_run(run_dir, use_scoring=False)], n_boot=50, backend="numpy")
    paths = write_report(report, tmp_path)
    page = paths["html"].read_text()
    md = paths["md"].read_text()
    assert EVIL not in page and EVIL not in md
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert page.count("<script>") == 2  # only the report's own two scripts
    assert page.count('class="plot"') >= 6


def test_side_by_side_runs_and_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write_run_dir(tmp_path / "a", "same", 6, 3, p=0.3, seed=5)
    b = write_run_dir(tmp_path / "b", "same", 6, 3, p=0.8, seed=6)
    rc = main(["report", str(a), str(b), "--out", str(tmp_path / "cmp"), "--bootstrap", "100",
               "--backend", "numpy", "--no-scoring"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "same (2)" in out and "travelbench/single_turn" in out
    data = json.loads((tmp_path / "cmp" / "report.json").read_text())
    labels = [r["label"] for r in data["runs"]]
    assert labels == ["same", "same (2)"]
    p1 = [r["subsets"][0]["curves"]["pass@k"][0]["value"] for r in data["runs"]]
    assert p1[0] < p1[1]
    md = (tmp_path / "cmp" / "report.md").read_text()
    assert "### pass@k — all" in md and "| same (2) (tasks) |" in md


def test_bad_line_names_file_line_field(tmp_path: Path) -> None:
    run_dir = write_run_dir(tmp_path / "bad", "bad", 2, 1)
    lines = (run_dir / "judgements.jsonl").read_text().splitlines()
    lines[0] = lines[0].replace('"kind":"travel_rubric"', '"kind":7')
    (run_dir / "judgements.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(ReportInputError, match=r"judgements\.jsonl:1: .*\$\.kind"):
        load_run(run_dir, use_scoring=False)
    assert main(["report", str(run_dir), "--no-scoring"]) == 1


def test_k32_study_curves(tmp_path: Path) -> None:
    """32 trials per task: pass@k rises, pass^k falls, CIs bracket, all 32 k are plotted."""
    scores = synthetic_scores("k32", 40, 32, p=0.45, seed=7, subsets=("s",))
    report = build_report([_run(scores, "k32")], n_boot=300, backend="numpy")
    all_ = report.runs[0].subset("all")
    pa = [p.value for p in all_.curves["pass@k"]]
    ph = [p.value for p in all_.curves["pass^k"]]
    assert len(pa) == 32 and all(not math.isnan(v) for v in pa)
    assert all(b >= a - 1e-12 for a, b in itertools.pairwise(pa))
    assert all(b <= a + 1e-12 for a, b in itertools.pairwise(ph))
    assert pa[31] > pa[0] > ph[31]
    for p in all_.curves["pass@k"]:
        assert p.low - 1e-12 <= p.value <= p.high + 1e-12
    page = report.html()
    assert page.count('data-plot="curve-pass@k"') == 1
    assert page.count("<circle") >= 3 * 32
    write_report(report, tmp_path)


def test_axes_of_fractions_stop_at_one_and_ticks_stay_short() -> None:
    from evaluator.report.svg import bar_chart, fraction_top, nice_top, tick_text

    assert nice_top(1.05) == 1.5 and nice_top(0.21) == 0.25 and nice_top(7.0) == 10.0
    assert fraction_top([1.0, 0.4]) == 1.0 and fraction_top([0.031]) == pytest.approx(0.04)
    assert fraction_top([1.4]) == 1.5   # not a fraction after all: not cut
    assert [tick_text(v) for v in (0, 0.25, 12000, 2.5e6, 48000.0)] == [
        "0", "0.25", "12k", "2.5M", "48k"]
    svg = bar_chart("rates", ["a", "b"], [("r", [1.0, 0.5])], kind="x", fraction=True)
    ticks = [t.split("<")[0] for t in svg.split('class="tick">')[1:7]]
    assert ticks[-1] == "1" and "e+" not in svg


def test_judge_tokens_from_the_runs_telemetry(tmp_path: Path) -> None:
    run_dir = write_run_dir(tmp_path / "run", "judged", 4, 2, seed=8)
    role = {"calls": 0, "in_flight": 0, "prompt": 0, "completion": 0, "cached": 0,
            "model_s": 0.0}
    rows = [{"start": 1000.0, "interval_s": 1.0},
            {"t": 0.0, "episodes": 0, "running": 0, "replicas": [],
             "roles": {"agent": role, "judge": role}},
            {"t": 5.0, "episodes": 8, "running": 0, "replicas": [],
             "roles": {"agent": {**role, "calls": 8, "prompt": 8000},
                       "judge": {**role, "calls": 8, "prompt": 40000, "completion": 2000,
                                 "cached": 1000}}}]
    (run_dir / "timeseries.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    report = build_report([load_run(run_dir, use_scoring=False)], n_boot=20, backend="numpy")
    tokens = {t.role: t for t in report.runs[0].subset("all").tokens}
    assert tokens["judge"].prompt_tokens == 40000 and tokens["judge"].completion_tokens == 2000
    assert tokens["all"].prompt_tokens == 8 * 1500 + 40000  # episodes' agent + user + judge
    assert "| judged | judge | 40000 | 2000 | 1000 | 2.5% |" in report.markdown()
