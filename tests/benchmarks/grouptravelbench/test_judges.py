"""The five-dimension judge and meta-judge: what the judge reads (the reference's transcript
layout with the set's labels, the original preferences), crashed runs under both crash rules,
answers read by the reference's rules or the tolerant parser, the options in the judgement
version, and S = 100 x mean((r-1)/4) x s/5 per unit."""

from __future__ import annotations

import asyncio
import copy

import pytest

from backends.types import ChatMessage, ChatResponse, Choice, SamplingParams, Usage
from bench_data.types import Task
from evaluator.benchmarks import get
from evaluator.benchmarks.base import JudgeInput, ScoreContext
from evaluator.benchmarks.grouptravelbench.judge_inputs import meta_review, transcript
from evaluator.benchmarks.grouptravelbench.judges import (
    JUDGE_KIND,
    JUDGE_VERSION,
    META_KIND,
    META_VERSION,
    crashed,
    judge_prompt,
    judge_version,
    meta_prompt,
    run_judge,
    run_meta,
)
from evaluator.benchmarks.grouptravelbench.options import GroupOptions
from evaluator.benchmarks.grouptravelbench.rubric import DIMENSION_KEYS
from evaluator.benchmarks.grouptravelbench.scoring import METRICS, METRICS_VERSION
from evaluator.judges.settings import JudgeSettings
from evaluator.judges.transcript import trajectory_hash
from evaluator.records import EpisodeRecord, Judgement, UnitId

from .scripted import TEXTS, task

CHAT = [
    {"type": "message", "role": "User1", "content": "我想去西安"},
    {"type": "message", "role": "Agent", "content": "", "has_tool_calls": True},
    {"type": "tool_call", "name": "web_search", "arguments": '{"query": "西安"}'},
    {"type": "tool_result", "name": "web_search", "result": "x" * 2500, "error": False},
    {"type": "tool_call", "name": "maps_geo", "arguments": '{"address": ""}'},
    {"type": "tool_result", "name": "maps_geo", "result": "bad address", "error": True},
    {"type": "message", "role": "Agent", "content": "@User1 预算多少？", "has_tool_calls": False},
]
RATED = {"hallucination_factuality": "Excellent", "tool_usage_reasoning": "Good",
         "interaction_quality": "Fair", "conflict_coordination": "Poor",
         "plan_humanization": "Very Poor"}


def review(ratings=RATED, reasoning="ok") -> str:
    body = "".join(f"<{d}><reasoning>{reasoning}</reasoning><rating>{r}</rating></{d}>"
                   for d, r in ratings.items())
    return f"<response>{body}</response>"


def _record(chat=CHAT, trial=0, task_id="t1", difficulty="easy", termination="plan_generated"):
    return EpisodeRecord(unit=UnitId("r", f"grouptravelbench/test/{task_id}", trial, 1),
                         benchmark="grouptravelbench", subset="test", task_id=task_id,
                         messages=[], termination=termination,
                         extra={"chat": chat, "users": ["User1", "User2"],
                                "difficulty": difficulty, "compromise_stats": {"accepted": 1}})


class Judge:
    def __init__(self, *answers: str) -> None:
        self.answers, self.sent = list(answers), []

    async def chat(self, messages, *, model=None, response_format=None, sampling=None):
        self.sent.append((list(messages), response_format, sampling))
        text = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        return ChatResponse(id="x", model="m", usage=Usage(), choices=[Choice(
            index=0, message=ChatMessage(role="assistant", content=text))])

    async def resolve_model(self) -> str:
        return "m"


def _inp(record=None, client=None, options=None, audited=None, structured=False, attempts=10):
    settings = JudgeSettings(structured_output=structured, max_attempts=attempts,
                             retry_temperature_from=8, retry_temperature=0.7,
                             sampling=SamplingParams(temperature=0.1, max_tokens=512))
    return JudgeInput(record=record or _record(), task=task(), thash="h", settings=settings,
                      prompts=None, tools=None, client=client, model="m", audited=audited,
                      options=options)


def test_the_judge_reads_the_reference_layout_with_the_sets_lines():
    text = transcript(CHAT, TEXTS)
    lines = text.split("\n")
    assert lines[:2] == ["[User1]: 我想去西安", ""]
    assert lines[2:5] == [TEXTS.text("judge_tools_only"), "",
                          TEXTS.render("judge_tool_call", name="web_search")]
    assert TEXTS.render("judge_tool_arguments", arguments='{"query": "西安"}') in lines
    cut = "x" * 2000 + TEXTS.text("judge_result_cut")
    assert TEXTS.render("judge_tool_result", name="web_search") + "\n  " + cut in text
    assert TEXTS.render("judge_tool_error", name="maps_geo", result="bad address") in lines
    assert lines[-2:] == ["[Agent]: @User1 预算多少？", ""]
    inp = _inp()
    prompt = judge_prompt(inp, text)
    assert "西安两日游" in prompt and "User1, User2" in prompt and text in prompt
    assert '"avg_budget": 3000' in prompt and '"compromisable": true' in prompt


def test_the_original_preferences_are_shown_even_after_compromises():
    changed = _record()
    changed.extra["effective"] = copy.deepcopy(task().payload.user_preferences)
    changed.extra["effective"]["User1"]["preference"]["global_constraints"]["avg_budget"] = 1
    prompt = judge_prompt(_inp(changed), "")
    assert '"avg_budget": 3000' in prompt and '"avg_budget": 1,' not in prompt
    bare = _inp()
    bare.task = Task(benchmark="grouptravelbench", subset="test", task_id="t1", source="x:1",
                     payload=None)
    assert TEXTS.text("judge_no_preferences") in judge_prompt(bare, "")


def test_the_judge_is_sent_its_system_message_and_reads_xml_as_the_reference():
    judge = Judge("not xml at all", review())
    j = asyncio.run(run_judge(_inp(client=judge)))
    assert j.attempts == 2 and j.score == pytest.approx(0.5)      # mean rating 3 -> 0.5
    assert j.scores == {"hallucination_factuality": 5.0, "tool_usage_reasoning": 4.0,
                        "interaction_quality": 3.0, "conflict_coordination": 2.0,
                        "plan_humanization": 1.0}
    messages, fmt, _ = judge.sent[0]
    assert messages[0] == ChatMessage(role="system", content=TEXTS.text("judge_system"))
    assert fmt is None and j.prompt_version == JUDGE_VERSION
    # one mapped rating is enough; a JSON answer is not the reference's format
    half = asyncio.run(run_judge(_inp(client=Judge(review({"plan_humanization": "Good"}))))) 
    assert half.scores == {"plan_humanization": 4.0}
    json_answer = '{"plan_humanization": {"reasoning": "x", "rating": "Good"}}'
    failed = asyncio.run(run_judge(_inp(client=Judge(json_answer), attempts=3)))
    assert failed.score is None and failed.attempts == 3 and "reference reading" in failed.error


def test_the_tolerant_parser_is_an_option_and_goes_with_guided_json():
    json_answer = '{"plan_humanization": {"reasoning": "x", "rating": "Good"}}'
    tolerant = GroupOptions(judge_parser="tolerant")
    j = asyncio.run(run_judge(_inp(client=Judge(json_answer), options=tolerant)))
    assert j.scores == {"plan_humanization": 4.0}
    assert j.prompt_version == JUDGE_VERSION + "+parser=tolerant"
    judge = Judge(json_answer)
    guided = asyncio.run(run_judge(_inp(client=judge, structured=True)))
    assert guided.scores == {"plan_humanization": 4.0} and judge.sent[0][1] is not None


def test_a_failed_run_is_an_empty_conversation_under_the_reference_rule():
    overflow = _record(termination="context_overflow")
    assert crashed(overflow) and not crashed(_record())
    assert not crashed(overflow, GroupOptions(crash_rule="no_agent_message"))
    silent = _record(chat=[{"type": "message", "role": "User1", "content": "hi"}])
    assert crashed(silent, GroupOptions(crash_rule="no_agent_message"))
    j = asyncio.run(run_judge(_inp(overflow, client=None)))        # no call made
    assert j.score == 0.0 and set(j.scores.values()) == {1.0} and len(j.scores) == 5
    assert "context_overflow" in j.reasoning["_crashed"]
    meta = asyncio.run(run_meta(_inp(overflow, audited=j)))
    assert meta.score is None and meta.error is None and meta.attempts == 0
    other = GroupOptions(crash_rule="no_agent_message")
    assert judge_version(None, other) == JUDGE_VERSION + "+crash=no_agent_message"
    judged = asyncio.run(run_judge(_inp(overflow, client=Judge(review()), options=other)))
    assert judged.score == pytest.approx(0.5)


def test_the_meta_judge_reads_the_first_review_as_the_reference_lays_it_out():
    answer = review(reasoning=" grounded ")
    judged = Judgement(unit=UnitId("r", "k", 0, 1), trajectory_hash="h", judge_model="m",
                       prompt_version=JUDGE_VERSION, kind=JUDGE_KIND, score=0.5,
                       scores={}, raw=answer)
    inp = _inp(audited=judged)
    prompt = meta_prompt(inp, judged, "CHAT")
    ratings = ("- hallucination_factuality: 5\n- tool_usage_reasoning: 4\n"
               "- interaction_quality: 3\n- conflict_coordination: 2\n"
               "- plan_humanization: 1\n- average: 3.0")
    assert ratings in prompt
    block = "\n".join(["### interaction_quality", TEXTS.render("meta_rating", rating="Fair"),
                       TEXTS.render("meta_reasoning", reasoning=" grounded "), ""])
    assert block in prompt and "CHAT" in prompt
    ratings2, _ = meta_review({"plan_humanization": {"rating": "x", "reasoning": "y"}},
                              {"plan_humanization": None}, ["plan_humanization"], TEXTS)
    assert ratings2 == "- plan_humanization: None\n- average: N/A"
    meta_answer = "<meta_evaluation><reasoning>sound</reasoning><rating>Good</rating>" \
                  "</meta_evaluation>"
    judge = Judge("```xml\n" + meta_answer + "\n```")
    meta = asyncio.run(run_meta(_inp(client=judge, audited=judged)))
    assert meta.score == pytest.approx(0.8) and meta.reasoning["meta"] == "sound"
    assert judge.sent[0][0][0].content == TEXTS.text("meta_system")
    assert meta.prompt_version == META_VERSION


def _j(kind, version, score, scores, thash, error=None, reasoning=None):
    return Judgement(unit=UnitId("r", "k", 0, 1), trajectory_hash=thash, judge_model="m",
                     prompt_version=version, kind=kind, score=score, scores=scores, error=error,
                     reasoning=reasoning or {})


class Lookup:
    def __init__(self, *js):
        self.js = {(j.trajectory_hash, j.kind, j.prompt_version): j for j in js}

    def get(self, thash, kind, version):
        return self.js.get((thash, kind, version))

    current_or_latest = get


RATINGS = {"hallucination_factuality": 5.0, "tool_usage_reasoning": 4.0,
           "interaction_quality": 3.0, "conflict_coordination": 2.0, "plan_humanization": 1.0}
RULES = {"pc": 0.5, "gf": 80.0, "pv": 1.0, "pv:time_overlap": 2.0}


def _scored(rec, meta_score, judge_score=0.5, settings=None, options=None, judge_error=None,
            rules=RULES):
    h = trajectory_hash(rec)
    js = [_j(METRICS, METRICS_VERSION, rules.get("pv", 0.0), rules, h),
          _j(JUDGE_KIND, JUDGE_VERSION, judge_score, RATINGS if judge_score is not None else {},
             h, error=judge_error)]
    if meta_score is not None:
        js.append(_j(META_KIND, META_VERSION, meta_score, {"meta": meta_score * 5}, h))
    bench = get("grouptravelbench")
    return bench.score(rec, Lookup(*js), ScoreContext(settings=settings or JudgeSettings(),
                                                      options=options))


def test_s_is_the_normalised_mean_times_the_meta_rating_over_five():
    # ratings 5,4,3,2,1 -> mean 3 -> (3-1)/4 = 0.5 -> S = 50 x 4/5 = 40
    unit = _scored(_record(), meta_score=0.8)
    assert unit.dims["lj"] == 0.4
    assert unit.dims["lj:hallucination_factuality"] == 0.8       # 100 x 0.8 -> 80 / 100
    assert unit.dims["lj:plan_humanization"] == 0.0
    assert unit.dims["pv:time_overlap"] == 2 and unit.dims["cmp:accepted"] == 1
    assert unit.score == 1.0 and unit.labels["difficulty"] == "easy"
    assert unit.judge_error is None


def test_a_failed_meta_judge_leaves_s_uncalibrated_and_a_failed_judge_is_a_judge_error():
    assert _scored(_record(), meta_score=None).dims["lj"] == 0.5
    off = JudgeSettings(meta_judge=False)
    assert _scored(_record(), meta_score=0.2, settings=off).dims["lj"] == 0.5
    unit = _scored(_record(), meta_score=None, judge_score=None, judge_error="unparseable")
    assert "lj" not in unit.dims and unit.score == 1.0             # rule metrics still count
    assert unit.judge_error == "gtb_judge: unparseable"


def test_a_failed_run_scores_zero_whatever_was_judged_under_the_reference_rule():
    failed = _record(termination="context_overflow")
    unit = _scored(failed, meta_score=1.0)
    assert unit.dims["lj"] == 0.0 and unit.dims["lj:hallucination_factuality"] == 0.0
    other = GroupOptions(crash_rule="no_agent_message")
    h = trajectory_hash(failed)
    js = [_j(METRICS, METRICS_VERSION, 1.0, RULES, h),
          _j(JUDGE_KIND, judge_version(None, other), 0.5, RATINGS, h)]
    unit = get("grouptravelbench").score(failed, Lookup(*js), ScoreContext(
        settings=JudgeSettings(meta_judge=False), options=other))
    assert unit.dims["lj"] == 0.5


def test_a_task_of_difficulty_unknown_keeps_its_protocol():
    bench = get("grouptravelbench")
    t = Task(benchmark="grouptravelbench", subset="mine", task_id="x", source="s",
             payload=task().payload)
    assert bench.protocol(t.subset) is bench.protocol("test")
    assert set(DIMENSION_KEYS) == set(RATINGS)
