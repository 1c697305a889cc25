"""Judge answers read and scored as the TravelBench reference reads and scores them
(`options.judge_answers = "reference"`), against the reference's own code: canned answers (the
issue's cases and more) through its `ResultParser` and through ours, and canned evaluations
through its `TrajectoryEvaluator` (10-attempt loops, `StatisticsCalculator`) and through
agentsweep's judges and scoring, down to the subset score (the worked case 50.00; tolerant
54.17).

Skipped unless TRAVELBENCH_REFERENCE names a checkout (see reference_harness.py).
"""

from __future__ import annotations

import asyncio

import pytest

from backends.types import ChatMessage
from evaluator.benchmarks.travelbench import BENCHMARK
from evaluator.benchmarks.travelbench.judges import judge_meta, judge_rubric
from evaluator.benchmarks.travelbench.options import TravelBenchOptions
from evaluator.benchmarks.travelbench.prompting import JUDGE_DIMENSIONS
from evaluator.judges.settings import JudgeSettings
from evaluator.records import EpisodeRecord, ToolCallRecord, UnitId

from .reference_harness import DATA, Reference, ScriptedChat, checkout

REF = checkout()
pytestmark = pytest.mark.skipif(
    REF is None, reason="set TRAVELBENCH_REFERENCE to a checkout of "
                        "small-xiangcheng/TravelBench")
OPTIONS = TravelBenchOptions(rendering="reference", judge_answers="reference")


@pytest.fixture(scope="module")
def ref() -> Reference:
    assert REF is not None
    return Reference(REF)


def _judge_settings() -> JudgeSettings:
    """The paper profile's judge settings."""
    from evaluator.config import load_config

    return load_config(None, [("data.dataset", str(DATA), "--data")])[0].judge


# ------------------------------------------------------------------ judge answers

RUBRIC_DIMS = JUDGE_DIMENSIONS["single_turn"]


def _xml(ratings: list[str], reasoning: str = "理由", fence: bool = False) -> str:
    body = "".join(f"<{d}><reasoning>{reasoning}</reasoning><rating>{r}</rating></{d}>"
                   for d, r in zip(RUBRIC_DIMS, ratings, strict=True))
    text = f"<response>{body}</response>"
    return f"```xml\n{text}\n```" if fence else text


RP, SE, PR = RUBRIC_DIMS
RUBRIC_ANSWERS = [
    _xml(["极差", "一般", "优秀"]),
    _xml(["**较好**", "较好。", "Good"]),          # the ratings: none on the scale
    _xml(["较好", "4", " 一般 \n"]),                 # a number; whitespace around a word
    _xml(["较好", "较好", "较好"], "参数 & 来源"),   # an unescaped &
    _xml(["较差", "一般", "较好"], fence=True),
    "分析如下：\n" + _xml(["优秀", "优秀", "一般"]) + "\n以上。",
    "分析如下：<reasoning_planning><rating>较好</rating></reasoning_planning>",
    (f"<response><{RP}><reasoning>缺少闭合<rating>较好</rating></{RP}>"
    f"<{SE}><reasoning>x</reasoning></{SE}><{PR}><rating>一般</rating></{PR}></response>"),
    (f"<response><{RP}><reasoning>x</reasoning><rating>较好</rating></{RP}>"
    f"<{SE}><reasoning>y</reasoning><rating>一般"),
    (f"<response><{RP}><reasoning>a<b>粗体</b>b</reasoning><rating>优秀</rating></{RP}>"
    "</response>"),
    f"<response><{PR}><reasoning>x</reasoning><rating>较好</rating></{SE}></{PR}></response>",
    '{"reasoning_planning": {"reasoning": "x", "rating": "较好"}}',
    _xml(["一般", "一般", "一般"]) + _xml(["优秀", "优秀", "优秀"]),
    (f"<response><{RP}><reasoning><![CDATA[a < b & c]]></reasoning><rating>较差</rating>"
    f"</{RP}></response>"),
    "",
    "<response></response>",
]
META_ANSWERS = [
    "<meta_evaluation><reasoning>审核</reasoning><rating>较好</rating></meta_evaluation>",
    "<meta_evaluation><reasoning>审核</reasoning><rating>4</rating></meta_evaluation>",
    "<meta_evaluation><reasoning>a & b</reasoning><rating>较好</rating></meta_evaluation>",
    "```xml\n<meta_evaluation><rating>**优秀**</rating></meta_evaluation>\n```",
    "好的：<meta_evaluation><reasoning>x</reasoning><rating> 一般 </rating></meta_evaluation>",
    "<response><reasoning>x</reasoning><rating>优秀</rating></response>",
    "<meta_evaluation><reasoning>x</reasoning><rating>极差",
    '{"reasoning": "x", "rating": "Good"}',
]


def test_canned_answers_read_alike(ref):
    """Each canned answer through the reference's reader and scores and through ours."""
    from evaluator.benchmarks.travelbench import judge_answers as ours

    parser = ref.eval_util.ResultParser
    for answer in RUBRIC_ANSWERS:
        want = parser.parse_xml_response(answer, RUBRIC_DIMS)
        got = ours.read_rubric(answer, RUBRIC_DIMS)
        if want is None:
            assert got is None, answer
            continue
        assert got is not None, answer
        assert {d: (g.reasoning, g.rating) for d, g in got.items()} == {
            d: (w["reasoning"], w["rating"]) for d, w in want.items()}, answer
        scores = parser.extract_scores(want, RUBRIC_DIMS)
        mine, average = ours.rubric_scores(got, RUBRIC_DIMS)
        assert {f"{d}_score": s for d, s in mine.items()} | {"average_score": average} == \
            scores, answer
    for answer in META_ANSWERS:
        want = parser.parse_meta_judge_response(answer)
        got = ours.read_meta(answer)
        assert (None if want is None else (want["reasoning"], want["rating"])) == \
            (None if got is None else tuple(got)), answer
        if want is not None:
            assert parser.rating_to_score(want["rating"]) == ours.RATING_WORDS.get(got.rating)
    print(f"canned answers read alike: {len(RUBRIC_ANSWERS)} rubric, {len(META_ANSWERS)} meta")


# (ratings of the three dimensions, meta rating, tool calls, tool errors, & in the reasoning)
WORKED_CASE = [(["较差", "较差", "较好"], "4", 0, 0, False),
               (["较好", "**较好**", "较好。"], "优秀", 0, 0, False)]
"""The issue's worked case: reference 50.00, the tolerant reading 54.17 (docs/judges.md)."""
OWN_CASE = [(["优秀", "Good", "一般"], "较好", 4, 1, False),
            (["较好", "较好", "较好"], "优秀", 2, 0, True),
            (["极差", "一般", "**优秀**"], "较差", 5, 5, False),
            (["一般", "一般", "优秀"], "<b>较好</b>", 0, 0, False)]


async def _ours_score(case: list[tuple], options: TravelBenchOptions) -> float:
    from evaluator.scoring import score_records

    js = _judge_settings()
    records, judgements = [], []
    for i, (ratings, meta, calls, errors, amp) in enumerate(case):
        record = _record(i, calls, errors)
        reasoning = "参数 & 来源" if amp else "理由"
        answer = _xml(ratings, reasoning)
        rubric = await judge_rubric(record, None, ScriptedChat(lambda m, a=answer: a), "m", js,
                                    None, None, None, options)
        judgements.append(rubric)
        meta_answer = f"<meta_evaluation><reasoning>审核</reasoning><rating>{meta}</rating>" \
                      "</meta_evaluation>"
        if rubric.score is not None:
            judgements.append(await judge_meta(record, None, rubric, ScriptedChat(
                lambda m, a=meta_answer: a), "m", js, None, None, options))
        records.append(record)
    units = score_records(records, judgements, js, None,
                          {"rendering": options.rendering, "judge_answers": options.judge_answers})
    return BENCHMARK.subset_score(units, "single_turn") * 100


def _record(i: int, calls: int, errors: int) -> EpisodeRecord:

    return EpisodeRecord(
        unit=UnitId(run="r", task=f"travelbench/single_turn/w{i}", trial=0, seed=1),
        benchmark="travelbench", subset="single_turn", task_id=f"w{i}",
        messages=[ChatMessage(role="system", content="s"),
                  ChatMessage(role="user", content=f"问题 {i}"),
                  ChatMessage(role="assistant", content=f"回答 {i}")],
        tool_calls=[ToolCallRecord(call_id=f"c{k}", name="web_search", arguments="{}",
                                   valid=k >= errors, source="error" if k < errors else "hit",
                                   content="x") for k in range(calls)])


def _reference_score(ref: Reference, case: list[tuple]) -> float:
    results = []
    for i, (ratings, meta, calls, errors, amp) in enumerate(case):
        trajectory = {"query": f"问题 {i}", "context": "", "tool_calls_count": calls,
                      "tool_errors": errors,
                      "messages": [{"role": "user", "content": f"问题 {i}"},
                                   {"role": "assistant", "content": f"回答 {i}"}]}
        answer = _xml(ratings, "参数 & 来源" if amp else "理由")
        meta_answer = f"<meta_evaluation><reasoning>审核</reasoning><rating>{meta}</rating>" \
                      "</meta_evaluation>"
        result, _, _ = ref.judge_prompts(trajectory, "single-turn", [answer] * 10,
                                         [meta_answer] * 10)
        if result is not None:
            results.append(result)
    stats = ref.eval_util.StatisticsCalculator.calculate_statistics(results, RUBRIC_DIMS)
    return stats["final_average_scores_100"]["overall_average"]


@pytest.mark.parametrize("case", [WORKED_CASE, OWN_CASE], ids=["worked", "own"])
def test_canned_answers_score_alike(ref, case):
    """The reference's evaluation (10 attempts each, statistics) and agentsweep's judges and
    scoring under the paper options give the same subset score."""
    want = _reference_score(ref, case)
    got = asyncio.run(_ours_score(case, OPTIONS))
    tolerant = asyncio.run(_ours_score(case, TravelBenchOptions()))
    print(f"score: reference {want:.2f}, agentsweep paper {got:.2f}, tolerant {tolerant:.2f}")
    assert got == pytest.approx(want, abs=1e-9)
    if case is WORKED_CASE:
        assert (round(want, 2), round(tolerant, 2)) == (50.0, 54.17)
