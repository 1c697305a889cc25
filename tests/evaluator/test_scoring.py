import math
from pathlib import Path

import msgspec
import pytest

from backends.types import ChatMessage
from evaluator.benchmarks.travelbench.judges import (
    META_KIND,
    META_PROMPT_VERSION,
    RUBRIC_KIND,
    RUBRIC_PROMPT_VERSION,
)
from evaluator.benchmarks.travelbench.scoring import travel_instance_score, travel_summary
from evaluator.benchmarks.travelbench.unsolvable import judge_unsolvable
from evaluator.judges.pool import JUDGEMENTS_FILE
from evaluator.judges.settings import JudgeSettings
from evaluator.judges.transcript import trajectory_hash
from evaluator.records import Judgement, UnitId, UnitScore
from evaluator.scoring import score_run

from .judge_fakes import make_record, tool_call_msg


def test_instance_score_formula_exact():
    r = {"reasoning_planning": 4, "summarization_extraction": 3, "presentation": 5}
    assert travel_instance_score(r, None, 0, 0) == pytest.approx(0.75)
    assert travel_instance_score(r, 4, 0, 0) == pytest.approx(0.75 * 0.8)
    assert travel_instance_score(r, 4, 4, 1) == pytest.approx(0.75 * 0.8 * 0.75)
    assert travel_instance_score(r, None, 3, 3) == 0.0
    assert travel_instance_score({"a": 1, "b": 1}, 5, 2, 0) == 0.0
    assert travel_instance_score({"a": 5, "b": 5, "c": 5, "d": 5}, 5, 0, 0) == 1.0


def test_instance_score_rejects_bad_input():
    with pytest.raises(ValueError):
        travel_instance_score({}, None, 0, 0)
    with pytest.raises(ValueError):
        travel_instance_score({"a": 6}, None, 0, 0)
    with pytest.raises(ValueError):
        travel_instance_score({"a": 3}, None, 1, 2)


def _us(subset, trial, score, task="t"):
    return UnitScore(unit=UnitId("r", f"travelbench/{subset}/{task}", trial, 0),
                     benchmark="travelbench", subset=subset, task_id=task, score=score)


def test_summary_subsets_trials_std_overall():
    # units without rubric ratings in `dims`: subset scores are plain means of unit scores
    scores = [
        _us("single_turn", 0, 0.5, "a"), _us("single_turn", 0, 1.0, "b"),
        _us("single_turn", 1, 0.25, "a"), _us("single_turn", 1, 0.25, "b"),
        _us("multi_turn", 0, 0.4), _us("multi_turn", 1, 0.6),
        _us("unsolvable", 0, 1.0, "a"), _us("unsolvable", 0, 0.0, "b"),
        _us("unsolvable", 1, 1.0, "a"), _us("unsolvable", 1, 1.0, "b"),
        _us("unsolvable", 1, None, "c"),  # judge error: reported, not averaged
    ]
    s = travel_summary(scores)
    single = s.subsets["single_turn"]
    assert single.per_trial == {0: 0.75, 1: 0.25}
    assert single.mean == pytest.approx(2.0 / 4)  # pooled over both trials' four units
    assert single.trial_mean == pytest.approx(0.5)
    assert single.std == pytest.approx(0.5 / math.sqrt(2))  # sample std (ddof=1) across trials
    assert s.subsets["multi_turn"].mean == pytest.approx(0.5)
    assert s.subsets["multi_turn"].std == pytest.approx(0.2 / math.sqrt(2))
    uns = s.subsets["unsolvable"]
    assert uns.per_trial == {0: 0.5, 1: 1.0}
    assert uns.mean == pytest.approx(3 / 4)
    assert (uns.n_units, uns.n_scored, uns.n_errors) == (5, 4, 1)
    # overall = mean of the three pooled subset scores; per trial = mean of that trial's
    assert s.overall == pytest.approx((0.5 + 0.5 + 0.75) / 3)
    t0 = (0.75 + 0.4 + 0.5) / 3
    t1 = (0.25 + 0.6 + 1.0) / 3
    assert s.overall_per_trial == pytest.approx({0: t0, 1: t1})
    assert s.overall_trial_mean == pytest.approx((t0 + t1) / 2)
    assert s.overall_std == pytest.approx(abs(t0 - t1) / math.sqrt(2))
    assert s.complete
    one = travel_summary([_us("unsolvable", 0, 1.0)])
    assert one.subsets["unsolvable"].std is None and one.overall_std is None  # one trial


def _write_judgements(run_dir: Path, judgements: list[Judgement]) -> None:
    enc = msgspec.json.Encoder()
    with open(run_dir / JUDGEMENTS_FILE, "ab") as fh:
        fh.writelines(enc.encode(j) + b"\n" for j in judgements)


def _write_episodes(run_dir: Path, records) -> None:
    enc = msgspec.json.Encoder()
    with open(run_dir / "episodes.jsonl", "ab") as fh:
        fh.writelines(enc.encode(r) + b"\n" for r in records)


def _rubric(rec, ratings, model="judge-m", error=None):
    return Judgement(unit=rec.unit, trajectory_hash=trajectory_hash(rec), judge_model=model,
                     prompt_version=RUBRIC_PROMPT_VERSION, kind=RUBRIC_KIND,
                     score=None if error else (sum(ratings.values()) / len(ratings) - 1) / 4,
                     scores={k: float(v) for k, v in ratings.items()}, error=error)


def _meta(rec, s, model="judge-m"):
    return Judgement(unit=rec.unit, trajectory_hash=trajectory_hash(rec), judge_model=model,
                     prompt_version=META_PROMPT_VERSION, kind=META_KIND, score=s / 5,
                     scores={"meta": float(s)})


def test_score_run_from_fixed_judge_outputs(tmp_path):
    single = make_record("single_turn", "s1", calls=4, errors=1)
    multi = make_record("multi_turn", "m1")
    err = make_record("single_turn", "s2")
    uns_ok = make_record("unsolvable", "u1", messages=[
        ChatMessage(role="user", content="q"),
        ChatMessage(role="assistant", content="Sorry. [Unsolved]")])
    uns_tool = make_record("unsolvable", "u2", messages=[
        ChatMessage(role="user", content="q"), tool_call_msg(),
        ChatMessage(role="assistant", content="[Unsolvable]")])
    _write_episodes(tmp_path, [single, multi, err, uns_ok, uns_tool])
    settings = JudgeSettings(model="judge-m")
    four = {"reasoning_planning": 4, "summarization_extraction": 3, "presentation": 5,
            "user_interaction": 4}
    _write_judgements(tmp_path, [
        _rubric(single, {"reasoning_planning": 4, "summarization_extraction": 3,
                         "presentation": 5}),
        _meta(single, 4),
        _rubric(multi, four), _meta(multi, 5),
        _rubric(err, {}, error="unparseable judge output"),
        judge_unsolvable(uns_ok, settings.abstain_tags),
        judge_unsolvable(uns_tool, settings.abstain_tags),
        _rubric(multi, four, model="other-judge"),  # another judge model: ignored
    ])
    by = {u.task_id: u for u in score_run(tmp_path, settings)}
    assert by["s1"].score == pytest.approx(0.75 * 0.8 * 0.75)
    assert (by["s1"].tool_calls, by["s1"].tool_errors) == (4, 1)
    assert by["s1"].dims["meta"] == 4
    assert by["m1"].score == pytest.approx(0.75)
    assert by["s2"].score is None and "unparseable" in by["s2"].judge_error
    assert by["u1"].score == 1.0 and by["u1"].success
    assert by["u2"].score == 0.0  # first assistant message is a tool call without text
    summary = travel_summary(list(by.values()))
    assert summary.subsets["single_turn"].mean == pytest.approx(0.45)
    assert summary.subsets["single_turn"].n_errors == 1
    assert summary.overall == pytest.approx((0.45 + 0.75 + 0.5) / 3)


def test_meta_not_judged_yet_is_not_scored(tmp_path):
    rec = make_record("single_turn", "s1")
    _write_episodes(tmp_path, [rec])
    _write_judgements(tmp_path, [_rubric(rec, {"reasoning_planning": 5,
                                               "summarization_extraction": 5,
                                               "presentation": 5})])
    [us] = score_run(tmp_path, JudgeSettings(model="judge-m"))
    assert us.score is None and us.judge_error == "meta: not judged"
    [us] = score_run(tmp_path, JudgeSettings(model="judge-m", meta_judge=False))
    assert us.score == 1.0 and not math.isnan(us.score)


def test_failed_meta_counts_as_weight_one(tmp_path):
    """The reference keeps a trajectory whose meta-judge failed, with final = penalized."""
    rec = make_record("single_turn", "s1", calls=4, errors=1)
    _write_episodes(tmp_path, [rec])
    failed = Judgement(unit=rec.unit, trajectory_hash=trajectory_hash(rec), judge_model="judge-m",
                       prompt_version=META_PROMPT_VERSION, kind=META_KIND, score=None,
                       error="unparseable judge output: no meta rating (after 10 attempts)")
    _write_judgements(tmp_path, [_rubric(rec, {"reasoning_planning": 4,
                                               "summarization_extraction": 3,
                                               "presentation": 5}), failed])
    [us] = score_run(tmp_path, JudgeSettings(model="judge-m"))
    assert us.score == pytest.approx(0.75 * 0.75) and us.judge_error is None
    assert "meta" not in us.dims


def test_judgements_of_older_prompt_versions_still_score(tmp_path):
    rec = make_record("single_turn", "s1")
    _write_episodes(tmp_path, [rec])
    three = {"reasoning_planning": 4, "summarization_extraction": 4, "presentation": 4}
    old = msgspec.structs.replace(_rubric(rec, three), prompt_version="travel-rubric-v1")
    _write_judgements(tmp_path, [old, _meta(rec, 5)])
    [us] = score_run(tmp_path, JudgeSettings(model="judge-m"))
    assert us.score == pytest.approx(0.75)
    # a judgement of the current version wins over an older one, wherever it is in the file
    five = {d: 5 for d in three}
    _write_judgements(tmp_path, [_rubric(rec, five), old])
    [us] = score_run(tmp_path, JudgeSettings(model="judge-m"))
    assert us.score == pytest.approx(1.0)
