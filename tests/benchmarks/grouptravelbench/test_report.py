"""GroupTravelBench's report section: S averaged as the reference's report does (trials per
task, a task never rated counts 0; or over the rated units), the Other composite
(PC% + GF + PV% + S) / 4, the true judge-error count (also in the generic summary), the POI
table named, per subset and difficulty."""

from __future__ import annotations

from evaluator.benchmarks import get
from evaluator.benchmarks.grouptravelbench.options import GroupOptions
from evaluator.judges.settings import JudgeSettings
from evaluator.report.summary import summarize_subset

from .test_judges import RULES, _record, _scored

SECTION = get("grouptravelbench").report


def _units(options=None):
    s = JudgeSettings()
    return [
        # task a (easy): S 40 and 50 -> 45
        _scored(_record(task_id="a", trial=0), 0.8, settings=s, options=options),
        _scored(_record(task_id="a", trial=1), 1.0, settings=s, options=options),
        # task b (hard): a crashed run (0) and a failed judgement (left out) -> 0
        _scored(_record(task_id="b", difficulty="hard", termination="context_overflow"), 1.0,
                settings=s, options=options),
        _scored(_record(task_id="b", trial=1, difficulty="hard"), None, judge_score=None,
                judge_error="unparseable", settings=s, options=options),
        # task c (hard): never rated -> 0
        _scored(_record(task_id="c", difficulty="hard"), None, judge_score=None,
                judge_error="HTTP 400", settings=s, options=options),
    ]


def test_s_averages_trials_per_task_and_counts_a_task_never_rated_as_zero():
    s = SECTION.summarize(_units())
    assert s.judge.score == 15.0 and s.judge.tasks == 3 and s.judge.rated == 3  # (45+0+0)/3
    assert s.judge_by_difficulty["easy"].score == 45.0
    assert s.judge_by_difficulty["hard"].score == 0.0
    assert s.judge.dimensions["hallucination_factuality"] == 30.0   # (90 + 0 + 0) / 3
    assert s.judge_errors == 2


def test_s_over_rated_units_is_the_recorded_alternative():
    s = SECTION.summarize(_units(GroupOptions(judge_average="units")))
    assert s.judge.score == 30.0 and s.judge.tasks == 3 and s.judge.average == "units"


def test_other_is_the_mean_of_pc_gf_pv_and_s():
    s = SECTION.summarize(_units())
    o = s.overall   # the failed run counts as an error for the rule metrics as well
    assert o.pc.average == 0.5 and o.gf.average == 80.0 and o.pv.average == 1.0
    assert s.other == (50.0 + 80.0 + 100.0 + 15.0) / 4
    assert s.other_by_difficulty["easy"] == (50 + 80 + 100 + 45.0) / 4
    rows = SECTION.tables([("run", s)])
    main = rows[0]
    assert main.headers[-2:] == ["judge S", "Other"]
    assert main.rows[0][-2:] == ["15.00", "61.25"]
    assert "POI table: none" in main.note and "GU/GF/PV without POI table" in main.note
    assert rows[1].rows[0][3] == "2"                                 # judge errors
    assert "Other 61.25" in SECTION.judge_lines(s)[0] and "2 judge errors" in \
        SECTION.judge_lines(s)[0]


def test_no_judge_run_means_no_s_and_no_other():
    units = [_scored(_record(task_id=t), None, judge_score=None) for t in "ab"]
    for u in units:
        u.dims = {k: v for k, v in u.dims.items() if not k.startswith("lj")}
    s = SECTION.summarize(units)
    assert s.judge is None and s.other is None and s.judge_errors == 0
    assert SECTION.tables([("run", s)])[0].rows[0][-2:] == ["—", "—"]


def test_the_generic_summary_counts_a_failed_judgement_of_a_scored_unit():
    units = _units()
    summary = summarize_subset("all", units, [], threshold=1.0, n_boot=10, seed=0)
    assert summary.judge_errors == 2 and summary.n_scored == 5
    assert any("gtb_judge: HTTP 400" in msg for _, msg in summary.judge_error_samples)
    assert RULES["pv"] == 1.0
