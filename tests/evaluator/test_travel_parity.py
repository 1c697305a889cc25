"""TravelBench scoring parity with the reference implementation (small-xiangcheng/TravelBench,
commit 445a29d: `evaluation/evaluate.py`, `utils/eval_util.py`).

Each case feeds fixed judge outputs through the project's own pipeline (JudgePool with a
scripted judge -> judgements.jsonl -> `score_run` -> `travel_summary` and the report summary)
and checks the number the reference computes, derived by hand in the comments. The reference's
rules used here:
- instance: final = (mean of the rated dimensions - 1) / 4 x 100 x (1 - errors / calls) x w_meta,
  w_meta = s / 5, and 1 when the meta-judge fails;
- a dimension whose rating is not on the scale is left out of the trajectory's mean; a
  trajectory with no rated dimension after all attempts is dropped;
- the subset number is computed over one file holding every trial's trajectories: per
  dimension the mean final score over the trajectories that rated it (0 if none did), then
  the mean over the dimensions.
"""

from __future__ import annotations

import json
import math

import msgspec
import pytest

from evaluator.benchmarks.travelbench.scoring import travel_summary
from evaluator.judges.pool import JudgePool
from evaluator.judges.settings import JudgeSettings
from evaluator.report.load import RunInput
from evaluator.report.render_text import render_terminal
from evaluator.report.summary import summarize_run
from evaluator.scoring import score_run

from .judge_fakes import ScriptedClient, make_record

SINGLE = ("reasoning_planning", "summarization_extraction", "presentation")
MULTI = SINGLE + ("user_interaction",)
LABEL = {1: "Very Poor", 2: "Poor", 3: "Fair", 4: "Good", 5: "Excellent"}


def rubric(*ratings, dims=SINGLE) -> str:
    """A judge answer rating `dims` in order; a str is passed through as the rating text."""
    return json.dumps({d: {"reasoning": "r", "rating": LABEL.get(r, r)}
                       for d, r in zip(dims, ratings, strict=True)})


def meta(s: int) -> str:
    return json.dumps({"reasoning": "audit", "rating": LABEL[s]})


class SchemaClient(ScriptedClient):
    """Answers from {(schema name, trajectory marker): answer}; the marker is the task's answer
    text ("answer <task> <trial>") found in the prompt. Unknown pairs get garbage."""

    def __init__(self, answers: dict[tuple[str, str], str]):
        super().__init__(lambda p, i: "")
        self.answers = answers

    async def chat(self, messages, *, model=None, response_format=None, sampling=None):
        name = response_format["json_schema"]["name"]
        prompt = messages[-1].content
        out = next((a for (n, marker), a in self.answers.items()
                    if n == name and marker in prompt), "no verdict here")
        self.answer = lambda p, i: out
        return await super().chat(messages, model=model, response_format=response_format,
                                  sampling=sampling)


async def judge_and_score(tmp_path, records, answers, **settings):
    settings = JudgeSettings(model="judge-m", **settings)
    (tmp_path / "episodes.jsonl").write_bytes(
        b"".join(msgspec.json.encode(r) + b"\n" for r in records))
    client = SchemaClient(answers)
    await JudgePool(tmp_path, settings, client=client).judge_run()
    return score_run(tmp_path, settings), client


def report_subset(scores, name):
    run = RunInput(run_dir="/tmp/x", label="r", scores=scores, episodes=[],
                   success_threshold=0.75, score_source="test")
    summary = summarize_run(run, n_boot=20, backend="numpy")
    return summary, summary.subset(name) or summary.subset("all")


async def test_failed_meta_judge_keeps_the_trajectory_with_weight_one(tmp_path):
    """Reference 74.0; before: 48.0 (the trajectory with the failed meta-judge was unscored).

    A: ratings 4, 3, 5 -> mean 4 -> (4 - 1) / 4 x 100 = 75; 5 calls, 1 error -> x 0.8;
       meta Good (4) -> x 4/5 = 0.8: final 75 x 0.8 x 0.8 = 48.
    B: ratings 5, 5, 5 -> 100; no calls -> x 1; the meta-judge answers garbage 10 times: failed,
       final = penalized = 100.
    Subset: dimensions (final, A and B): reasoning_planning (48 + 100) / 2 = 74,
    summarization_extraction (25 x 0.64 x 2 = 32 + 100) / 2 = 66, presentation (64 + 100) / 2
    = 82; mean (74 + 66 + 82) / 3 = 74.0 (= (48 + 100) / 2, every dimension rated).
    Before: B unscored, the subset was A alone = 48.0.
    """
    a = make_record("single_turn", "A", calls=5, errors=1)
    b = make_record("single_turn", "B")
    scores, client = await judge_and_score(tmp_path, [a, b], {
        ("travel_rubric", "answer A 0"): rubric(4, 3, 5),
        ("travel_rubric", "answer B 0"): rubric(5, 5, 5),
        ("travel_meta", "answer A 0"): meta(4),
    }, max_attempts=10, retry_temperature_from=8, meta_retry_temperature=0.0)
    by = {s.task_id: s for s in scores}
    assert by["A"].score == pytest.approx(0.48)
    assert by["B"].score == pytest.approx(1.0) and by["B"].judge_error is None
    single = travel_summary(scores).subsets["single_turn"]
    assert 100 * single.mean == pytest.approx(74.0)
    assert {d: round(100 * v, 6) for d, v in single.dim_scores.items()} == {
        "reasoning_planning": 74.0, "summarization_extraction": 66.0, "presentation": 82.0}
    # the reference's meta-judge retries at the judge temperature: 10 attempts, all at 0
    b_meta = [c for c in client.calls if "answer B 0" in c["prompt"]
              and c["response_format"]["json_schema"]["name"] == "travel_meta"]
    assert [c["sampling"].temperature for c in b_meta] == [0.0] * 10
    _, sub = report_subset(scores, "travelbench/single_turn")
    assert 100 * sub.mean_score == pytest.approx(74.0)


async def test_ragged_trials_pool_every_trajectory(tmp_path):
    """Reference 66.67; before: 75.0 (mean of the per-trial means).

    Trial 0: t1 rated 2, 2, 2 -> (2 - 1) / 4 = 25; t2 rated 4, 4, 4 -> 75.
    Trial 1: t1 rated 5, 5, 5 -> 100; t2's judge never answers with a rating: dropped (both
    here and in the reference). Meta Excellent everywhere (x 1), no tool calls.
    Pooled: (25 + 75 + 100) / 3 = 66.67 (each dimension's mean is the same 66.67).
    Per trial: trial 0 = (25 + 75) / 2 = 50, trial 1 = 100; their mean 75.0 (the old headline),
    sample std |50 - 100| / sqrt(2) = 35.36.
    """
    recs = [make_record("single_turn", "t1", 0), make_record("single_turn", "t2", 0),
            make_record("single_turn", "t1", 1), make_record("single_turn", "t2", 1)]
    answers = {("travel_rubric", "answer t1 0"): rubric(2, 2, 2),
               ("travel_rubric", "answer t2 0"): rubric(4, 4, 4),
               ("travel_rubric", "answer t1 1"): rubric(5, 5, 5)}
    answers |= {("travel_meta", f"answer {t}"): meta(5) for t in ("t1 0", "t2 0", "t1 1")}
    scores, _ = await judge_and_score(tmp_path, recs, answers)
    single = travel_summary(scores).subsets["single_turn"]
    assert (single.n_units, single.n_scored, single.n_errors) == (4, 3, 1)
    assert 100 * single.mean == pytest.approx(200 / 3)  # 66.67
    assert single.per_trial == pytest.approx({0: 0.5, 1: 1.0})
    assert 100 * single.trial_mean == pytest.approx(75.0)
    assert 100 * single.std == pytest.approx(50 / math.sqrt(2))
    summary, sub = report_subset(scores, "travelbench/single_turn")
    assert 100 * sub.mean_score == pytest.approx(200 / 3)
    assert 100 * sub.trial_mean == pytest.approx(75.0)
    text = render_terminal([summary])
    assert "66.67" in text and "75.00 ± 35.36" in text


async def test_unrated_dimension_is_left_out_not_a_judge_error(tmp_path):
    """Reference 58.33 (two ways); before: the trajectory with the unrated dimension was
    dropped (its judge output was an error after every attempt).

    Subset (single_turn): A rated 4, 3, 4 -> final 75, 50, 75 (unit (11/3 - 1) / 4 = 66.67);
    B rated 3, 2 and "Superb" for presentation (not on the scale: left out) -> 50, 25
    (unit (2.5 - 1) / 4 = 37.5). Per dimension over the trajectories that rated it:
    reasoning_planning (75 + 50) / 2 = 62.5, summarization_extraction (50 + 25) / 2 = 37.5,
    presentation 75 (A only); subset = (62.5 + 37.5 + 75) / 3 = 58.33. Before: B dropped,
    the subset was A alone = 66.67.

    Unit (multi_turn): M rated 4, 3, 3 and "Superb" for user_interaction -> mean of the rated
    (4 + 3 + 3) / 3 = 10/3 -> (10/3 - 1) / 4 = 58.33. Alone in its subset, the reference's
    subset number is (75 + 50 + 50 + 0) / 4 = 43.75: user_interaction, rated by no trajectory,
    counts 0.
    """
    a = make_record("single_turn", "A")
    b = make_record("single_turn", "B")
    m = make_record("multi_turn", "M")
    scores, client = await judge_and_score(tmp_path, [a, b, m], {
        ("travel_rubric", "answer A 0"): rubric(4, 3, 4),
        ("travel_rubric", "answer B 0"): rubric(3, 2, "Superb"),
        ("travel_rubric", "answer M 0"): rubric(4, 3, 3, "Superb", dims=MULTI),
        ("travel_meta", "answer"): meta(5),
    })
    by = {s.task_id: s for s in scores}
    assert by["B"].score == pytest.approx(0.375)
    assert by["B"].dims == {"reasoning_planning": 3, "summarization_extraction": 2, "meta": 5}
    assert 100 * by["M"].score == pytest.approx(175 / 3)  # 58.33
    assert len(client.calls) == 6  # one rubric answer each (no retry), one meta each
    summary = travel_summary(scores)
    assert 100 * summary.subsets["single_turn"].mean == pytest.approx(175 / 3)  # 58.33
    assert 100 * summary.subsets["multi_turn"].mean == pytest.approx(43.75)
    _, sub = report_subset(scores, "travelbench/single_turn")
    assert 100 * sub.mean_score == pytest.approx(175 / 3)
    dims = {d.name: (d.mean, d.n) for d in sub.dims}  # raw ratings over those that rated it
    assert dims["presentation"] == (4.0, 1) and dims["reasoning_planning"] == (3.5, 2)


async def test_rubric_retry_schedule_of_the_reference(tmp_path):
    """10 attempts, the first 7 at the judge temperature, the 8th to 10th at 0.7; then the
    trajectory is dropped (a judge error)."""
    rec = make_record("single_turn", "X")
    scores, client = await judge_and_score(tmp_path, [rec], {}, max_attempts=10,
                                           retry_temperature_from=8)
    assert [c["sampling"].temperature for c in client.calls] == [0.0] * 7 + [0.7] * 3
    [s] = scores
    assert s.score is None and "after 10 attempts" in s.judge_error
