"""Judge answers read as the TravelBench reference reads them (`options.judge_answers =
"reference"`), without the reference: the issue's ratings, the tag repair, meta answers, the
retry-then-weight-one rule and the worked case, expected values derived by hand from the
reference's rules (docs/judges.md). Against the reference's own code: test_reference_answers.py.
"""

from __future__ import annotations

import asyncio

import pytest

from backends.types import ChatMessage
from evaluator.benchmarks.travelbench import BENCHMARK, judge_answers
from evaluator.benchmarks.travelbench.judges import judge_meta, judge_rubric
from evaluator.benchmarks.travelbench.options import TravelBenchOptions
from evaluator.judges.parse import JudgeParseError
from evaluator.judges.settings import JudgeSettings
from evaluator.records import EpisodeRecord, Judgement, UnitId
from tests.benchmarks.travelbench.reference_harness import ScriptedChat
from tests.benchmarks.travelbench.test_reference_rendering import record_with_tools

REF = TravelBenchOptions(rendering="reference", judge_answers="reference")


# ------------------------------------------------------------------ reading answers

def xml(ratings: list[str], reasoning: str = "r") -> str:
    dims = ["reasoning_planning", "summarization_extraction", "presentation"]
    return "<response>" + "".join(
        f"<{d}><reasoning>{reasoning}</reasoning><rating>{r}</rating></{d}>"
        for d, r in zip(dims, ratings, strict=True)) + "</response>"


DIMS = ["reasoning_planning", "summarization_extraction", "presentation"]


@pytest.mark.parametrize(("answer", "rated"), [
    (xml(["较好", "一般", "优秀"]), {"reasoning_planning": 4, "summarization_extraction": 3,
                                  "presentation": 5}),
    (xml(["**较好**", "较好。", "Good"]), None),         # none on the scale: unusable
    (xml(["较好", "4", " 一般\n"]), {"reasoning_planning": 4, "presentation": 3}),
    (xml(["较好", "较好", "较好"], "a & b"), None),       # not XML
    ("```xml\n" + xml(["极差", "较差", "一般"]) + "\n```", {
        "reasoning_planning": 1, "summarization_extraction": 2, "presentation": 3}),
    ("说明\n" + xml(["较好", "较好", "较好"]), {d: 4 for d in DIMS}),
    ('{"reasoning_planning": {"rating": "较好"}}', None),
])
def test_the_references_reading(answer, rated):
    if rated is None:
        with pytest.raises(JudgeParseError):
            judge_answers.parse_rubric(answer, DIMS)
    else:
        assert judge_answers.parse_rubric(answer, DIMS).ratings == rated


@pytest.mark.parametrize(("text", "repaired"), [
    # a dimension closed with a reasoning but no rating: <rating></rating> before its closer
    ("<response><presentation><reasoning>x</reasoning></presentation></response>",
     ("<response><presentation><reasoning>x</reasoning><rating></rating></presentation>"
     "</response>")),
    # a closer of a deeper opener closes everything above it, that opener included
    ("<a><b>x</a>", "<a><b>x</b></a></a>"),
    ("<response><presentation><reasoning>x</presentation></response>",
     ("<response><presentation><reasoning>x</reasoning></presentation></presentation>"
     "</response>")),
    # still open at the end: closed innermost first
    ("<response><presentation><rating>较好", ("<response><presentation><rating>较好</rating>"
     "</presentation></response>")),
    ("no tags", "no tags"),
])
def test_tag_repair(text, repaired):
    assert judge_answers.repair_tags(text, DIMS) == repaired


@pytest.mark.parametrize(("answer", "score"), [
    ("<meta_evaluation><reasoning>x</reasoning><rating>较好</rating></meta_evaluation>", 4),
    ("<meta_evaluation><rating>4</rating></meta_evaluation>", None),
    ("<meta_evaluation><reasoning>a & b</reasoning><rating>较好</rating></meta_evaluation>",
     None),
    ("<other><rating> 优秀 </rating></other>", 5),
])
def test_the_references_meta_reading(answer, score):
    if score is None:
        with pytest.raises(JudgeParseError):
            judge_answers.parse_meta(answer)
    else:
        assert judge_answers.parse_meta(answer).rating == score


def _case_score(options: TravelBenchOptions) -> float:
    """The issue's worked case (docs/judges.md): two single-turn trajectories, no tool calls.
    1: 较差 较差 较好, the meta-judge always answers "4"; 2: 较好 **较好** 较好。, meta 优秀.
    Reference: the meta "4" is no rating, 10 attempts fail, w_meta = 1: 1 scores 25 25 75;
    2 rates only its first dimension, 75 (x 1). Per dimension 50, 25, 75: 50.00.
    Tolerant: 1 scores 20 20 60 (x 0.8), 2 scores 75 75 75. Per dimension 47.5 47.5 67.5: 54.17.
    """
    from evaluator.scoring import score_records

    js = JudgeSettings(max_attempts=10, structured_output=False)
    records, judgements = [], []
    for i, (ratings, meta) in enumerate([(["较差", "较差", "较好"], "4"),
                                         (["较好", "**较好**", "较好。"], "优秀")]):
        rec = record_with_tools()
        rec = EpisodeRecord(unit=UnitId(run="r", task=f"travelbench/single_turn/{i}", trial=0,
                                        seed=1), benchmark="travelbench", subset="single_turn",
                            task_id=str(i), messages=[ChatMessage(role="user",
                                                                  content=f"问题 {i}")])
        rubric = asyncio.run(judge_rubric(rec, None, ScriptedChat(lambda m, r=ratings: xml(r)),
                                          "m", js, None, None, None, options))
        answer = f"<meta_evaluation><rating>{meta}</rating></meta_evaluation>"
        judgements += [rubric, asyncio.run(judge_meta(rec, None, rubric, ScriptedChat(
            lambda m, a=answer: a), "m", js, None, None, options))]
        records.append(rec)
    units = score_records(records, judgements, js, None, {
        "rendering": options.rendering, "judge_answers": options.judge_answers})
    return BENCHMARK.subset_score(units, "single_turn") * 100


def test_worked_case_scores_as_the_reference_under_paper():
    assert round(_case_score(REF), 2) == 50.0
    assert round(_case_score(TravelBenchOptions()), 2) == 54.17


def test_a_meta_answer_the_reference_refuses_is_retried_then_weight_one():
    rec = record_with_tools()
    rubric = Judgement(unit=rec.unit, trajectory_hash="h", judge_model="m", prompt_version="v",
                       kind="travel_rubric", score=0.75, scores={d: 4.0 for d in DIMS},
                       raw=xml(["较好"] * 3))
    judge = ScriptedChat(lambda m: "<meta_evaluation><rating>4</rating></meta_evaluation>")
    js = JudgeSettings(max_attempts=10)
    out = asyncio.run(judge_meta(rec, None, rubric, judge, "m", js, None, None, REF))
    assert out.score is None and out.attempts == 10 and len(judge.requests) == 10
