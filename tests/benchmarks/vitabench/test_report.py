"""VitaBench's report section with values worked out by hand.

delivery: task A succeeds in trials 0 and 1 of 4 (n = 4, c = 2), task B in trial 0 (c = 1);
B's trial 3 hit the step limit (score 0, no rubric verdicts). in-store: task C, 2 of 2.

    Avg@k  = mean over tasks of the mean reward: (2/4 + 1/4) / 2 = 0.375 for every k <= 4
    Pass@1 = (1 - C(2,1)/C(4,1) + 1 - C(3,1)/C(4,1)) / 2 = (0.5 + 0.25) / 2 = 0.375
    Pass@2 = (1 - 1/6 + 1 - 3/6) / 2 = 2/3;   Pass@4 = 1
    Pass^1 = 0.375;  Pass^2 = (C(2,2)/C(4,2) + 0) / 2 = 1/12;  Pass^4 = 0
    bootstrap of Pass@1 over two tasks: a resample mean is 0.25, 0.375 or 0.5, the extremes
    each with probability 1/4, so the 95% interval is [0.25, 0.5]
    rubrics (two per task): 3 successes meet 2 of 2, 4 judged failures 1 of 2 -> 10 / 14;
    mean rubric accuracy (3 x 1 + 4 x 0.5) / 7 = 5/7
    all: at k = 3 only A and B have 3 trials; Avg@1 = (0.5 + 0.25 + 1) / 3 = 7/12
"""

from __future__ import annotations

import pytest

from evaluator.benchmarks import get
from evaluator.records import UnitId, UnitScore
from evaluator.report import build_report
from evaluator.report.load import EpisodeStat, RunInput
from evaluator.report.tables import benchmark_tables

EVIL = "<img src=x onerror=alert(1)>"
OUTCOMES = {("delivery", "A"): [1, 1, 0, 0], ("delivery", "B"): [1, 0, 0, None],
            ("instore", "C"): [1, 1]}  # None: the step limit


def _data(evil: str = "") -> tuple[list[UnitScore], list[EpisodeStat]]:
    units, eps = [], []
    i = 0
    for (subset, task), results in OUTCOMES.items():
        for trial, ok in enumerate(results):
            unit = UnitId(run="r", task=f"vitabench/{subset}/{task}", trial=trial, seed=trial)
            dims = {} if ok is None else {"rubric_0": 1.0, "rubric_1": float(ok),
                                          "rubric_accuracy": 1.0 if ok else 0.5}
            units.append(UnitScore(unit=unit, benchmark="vitabench", subset=subset,
                                   task_id=task, score=float(ok or 0), success=bool(ok),
                                   dims=dims))
            tools = {"create_delivery_order": [1, i % 2], "get_delivery_store_info": [2, 0]}
            if evil and i == 0:
                tools[evil] = [1, 1]
            eps.append(EpisodeStat(key=unit.key, task=unit.task, trial=trial,
                                   benchmark="vitabench", subset=subset,
                                   termination="max_steps" if ok is None else "agent_stop",
                                   tools=tools))
            i += 1
    return units, eps


def _value(points, k):
    return points[k - 1].value


def test_metrics_rubrics_terminations_and_tools_by_hand():
    units, eps = _data()
    s = get("vitabench").report.summarize(units, eps)
    assert [d.domain for d in s.domains] == ["delivery", "instore", "all"]
    d = s.domains[0]
    assert (d.n_tasks, d.max_trials, d.n_episodes, d.n_scored, d.successes) == (2, 4, 8, 8, 3)
    assert [_value(d.curves["avg@k"], k) for k in (1, 4)] == [0.375, 0.375]
    assert _value(d.curves["pass@k"], 1) == pytest.approx(0.375)
    assert _value(d.curves["pass@k"], 2) == pytest.approx(2 / 3)
    assert _value(d.curves["pass@k"], 4) == pytest.approx(1.0)
    assert _value(d.curves["pass^k"], 2) == pytest.approx(1 / 12)
    assert _value(d.curves["pass^k"], 4) == pytest.approx(0.0)
    p1 = d.curves["pass@k"][0]
    assert (p1.low, p1.high, p1.n_tasks) == (pytest.approx(0.25), pytest.approx(0.5), 2)
    assert (d.rubrics_met, d.rubrics_judged) == (10, 14)
    assert d.rubric_pass_rate == pytest.approx(10 / 14)
    assert d.rubric_accuracy == pytest.approx(5 / 7)
    assert d.terminations == {"agent_stop": 7, "max_steps": 1}
    assert [(t.tool, t.calls, t.errors, t.error_rate) for t in d.tools] == [
        ("create_delivery_order", 8, 4, 0.5), ("get_delivery_store_info", 16, 0, 0.0)]
    c = s.domains[1]
    assert c.max_trials == 2 and len(c.curves["pass^k"]) == 2
    last = c.curves["pass^k"][1]
    assert [last.value, last.low, last.high] == pytest.approx([1.0] * 3)  # one task
    a = s.domains[2]
    assert _value(a.curves["avg@k"], 1) == pytest.approx(7 / 12)
    assert a.curves["avg@k"][2].n_tasks == 2
    assert a.curves["avg@k"][2].value == pytest.approx(0.375)
    assert (s.n_units, s.n_scored, s.successes) == (10, 10, 5)


def test_tables_and_the_judge_line():
    units, eps = _data()
    bench = get("vitabench")
    s = bench.report.summarize(units, eps)
    head, curve, *rest = bench.report.tables([("run1", s)])
    tables = {t.title.split(":")[1].strip().split(" ")[0]: t for t in rest}
    assert head.rows[0] == ["run1", "delivery", "2", "4", "37.5 [25.0, 50.0]",
                            "100.0 [100.0, 100.0]", "0.0 [0.0, 0.0]"]
    assert "k = 1..n" in curve.title
    assert [r[:3] for r in curve.rows[:4]] == [["run1", "delivery", str(k)] for k in (1, 2, 3,
                                                                                        4)]
    assert curve.rows[1][5] == "66.7 [50.0, 83.3]"
    assert tables["rubrics"].rows[0] == ["run1", "delivery", "8", "8", "3 (37.5%)", "10 / 14",
                                         "71.4%", "71.4%"]
    assert tables["termination"].rows[:2] == [["run1", "delivery", "agent_stop", "7", "87.5%"],
                                              ["run1", "delivery", "max_steps", "1", "12.5%"]]
    assert tables["tool"].rows[0] == ["run1", "delivery", "create_delivery_order", "8", "4",
                                      "50.0%"]
    assert bench.report.judge_lines(bench.report.summarize(units)) == [
        "  rubric tasks: success 5/10 scored (0 unscored), rubric accuracy 77.8%"]


def test_report_html_has_the_curves_plot_and_escapes_text():
    units, eps = _data(evil=EVIL)
    run = RunInput(run_dir="/tmp/x", label=f"run {EVIL}", scores=units, episodes=eps,
                   success_threshold=1.0, score_source="test")
    report = build_report([run], n_boot=200)
    html = report.html()
    assert html.count('data-plot="vitabench-passk"') == 3  # delivery, instore, all
    assert "VitaBench delivery: Pass@k and Pass^k" in html
    assert EVIL not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert EVIL not in report.markdown()
    assert any(EVIL in row for t in benchmark_tables(report.runs) for row in t.rows)
    assert "VitaBench: Avg@k, Pass@k, Pass^k at k = n" in report.terminal()
