"""The five-dimension judge and meta-judge: what the judge reads (original preferences, tool
calls and cut results), crashed runs, S = 100 x mean((r-1)/4) x s/5 per unit with the
meta-judge's failure and the judge's failure, and the report's per-difficulty rows."""

from __future__ import annotations

import asyncio
import copy

from bench_data.types import Task
from evaluator.benchmarks import get
from evaluator.benchmarks.base import JudgeInput, ScoreContext
from evaluator.benchmarks.grouptravelbench.judges import (
    JUDGE_KIND,
    JUDGE_VERSION,
    META_KIND,
    META_VERSION,
    crashed,
    judge_prompt,
    meta_prompt,
    render_chat_for_judge,
    run_judge,
)
from evaluator.benchmarks.grouptravelbench.scoring import METRICS, METRICS_VERSION
from evaluator.judges.settings import JudgeSettings
from evaluator.judges.transcript import trajectory_hash
from evaluator.records import EpisodeRecord, Judgement, UnitId

from .test_protocol import _task

CHAT = [
    {"role": "User1", "content": "我想去西安"},
    {"type": "message", "role": "Agent", "content": "", "has_tool_calls": True},
    {"type": "tool_call", "name": "web_search", "arguments": '{"query": "西安"}'},
    {"type": "tool_result", "name": "web_search", "result": "x" * 2500, "error": False},
    {"type": "tool_call", "name": "maps_geo", "arguments": '{"address": ""}'},
    {"type": "tool_result", "name": "maps_geo", "result": "bad address", "error": True},
    {"type": "message", "role": "Agent", "content": "@User1 预算多少？", "has_tool_calls": False},
]


def _record(chat=CHAT, trial=0, task_id="t1", difficulty="easy", effective=None):
    return EpisodeRecord(unit=UnitId("r", f"grouptravelbench/test/{task_id}", trial, 1),
                         benchmark="grouptravelbench", subset="test", task_id=task_id,
                         messages=[], termination="plan",
                         extra={"chat": chat, "users": ["User1", "User2"],
                                "difficulty": difficulty, "effective": effective or {},
                                "compromise_stats": {"accepted": 1}})


def test_the_judge_reads_tool_calls_cut_results_and_the_original_preferences():
    text = render_chat_for_judge(CHAT)
    assert "[User1]: 我想去西安" in text and "[Agent]: (calls tools, see below)" in text
    assert '  arguments: {"query": "西安"}' in text
    assert "x" * 2000 + "\n  ... (result cut)" in text and "x" * 2001 not in text
    assert "[tool result, error] maps_geo: bad address" in text
    task = _task()
    changed = copy.deepcopy(task.payload.user_preferences)
    changed["User1"]["preference"]["global_constraints"]["avg_budget"] = 1
    prompt = judge_prompt(_record(effective=changed), task)
    assert '"avg_budget": 3000' in prompt and '"avg_budget": 1' not in prompt
    assert "西安两日游" in prompt and "User1, User2" in prompt
    for key in ("hallucination_factuality", "plan_humanization"):
        assert key in prompt


def test_the_meta_judge_sees_the_ratings_by_name_and_unrated_dimensions():
    judged = Judgement(unit=UnitId("r", "k", 0, 1), trajectory_hash="h", judge_model="m",
                       prompt_version=JUDGE_VERSION, kind=JUDGE_KIND, score=0.5,
                       scores={"hallucination_factuality": 5.0},
                       reasoning={"hallucination_factuality": "grounded"})
    prompt = meta_prompt(_record(), _task(), judged)
    assert "- hallucination_factuality: Excellent" in prompt
    assert "- plan_humanization: N/A (not rated)" in prompt and "grounded" in prompt


def test_a_run_without_any_agent_message_is_rated_one_without_a_call():
    rec = _record(chat=[{"role": "User1", "content": "hi"}])
    assert crashed(rec) and not crashed(_record())
    inp = JudgeInput(record=rec, task=None, thash="h", settings=JudgeSettings(), prompts=None,
                     tools=None, client=None, model="m")
    j = asyncio.run(run_judge(inp))
    assert j.score == 0.0 and set(j.scores.values()) == {1.0} and len(j.scores) == 5


def _j(kind, version, score, scores, thash):
    return Judgement(unit=UnitId("r", "k", 0, 1), trajectory_hash=thash, judge_model="m",
                     prompt_version=version, kind=kind, score=score, scores=scores)


class Lookup:
    def __init__(self, *js):
        self.js = {(j.trajectory_hash, j.kind, j.prompt_version): j for j in js}

    def get(self, thash, kind, version):
        return self.js.get((thash, kind, version))

    current_or_latest = get


RATINGS = {"hallucination_factuality": 5.0, "tool_usage_reasoning": 4.0,
           "interaction_quality": 3.0, "conflict_coordination": 2.0, "plan_humanization": 1.0}


def _scored(rec, meta_score, judge_score=0.5, settings=None):
    h = trajectory_hash(rec)
    js = [_j(METRICS, METRICS_VERSION, 1.0, {"pc": 0.5, "pv": 1.0, "pv:time_overlap": 2.0}, h),
          _j(JUDGE_KIND, JUDGE_VERSION, judge_score, RATINGS if judge_score is not None else {},
             h)]
    if meta_score is not None:
        js.append(_j(META_KIND, META_VERSION, meta_score, {"meta": meta_score * 5}, h))
    bench = get("grouptravelbench")
    return bench.score(rec, Lookup(*js), ScoreContext(settings=settings or JudgeSettings()))


def test_s_is_the_normalised_mean_times_the_meta_rating_over_five():
    # ratings 5,4,3,2,1 -> mean 3 -> (3-1)/4 = 0.5 -> S = 50 x 4/5 = 40
    unit = _scored(_record(), meta_score=0.8)
    assert unit.dims["lj"] == 0.4
    assert unit.dims["lj:hallucination_factuality"] == 0.8       # 100 x 0.8 -> 80 / 100
    assert unit.dims["lj:plan_humanization"] == 0.0
    assert unit.dims["pv:time_overlap"] == 2 and unit.dims["cmp:accepted"] == 1
    assert unit.score == 1.0 and unit.labels == {"difficulty": "easy"}


def test_a_failed_meta_judge_leaves_s_uncalibrated_and_a_failed_judge_leaves_no_s():
    assert _scored(_record(), meta_score=None).dims["lj"] == 0.5
    off = JudgeSettings(meta_judge=False)
    assert _scored(_record(), meta_score=0.2, settings=off).dims["lj"] == 0.5
    unit = _scored(_record(), meta_score=None, judge_score=None)
    assert "lj" not in unit.dims and unit.score == 1.0             # rule metrics still count


def test_the_report_breaks_down_by_subset_and_difficulty_and_averages_only_rated_units():
    units = [_scored(_record(task_id="a", difficulty="easy"), meta_score=1.0),
             _scored(_record(task_id="b", difficulty="hard"), meta_score=0.6),
             _scored(_record(task_id="c", difficulty="hard"), None, judge_score=None)]
    s = get("grouptravelbench").report.summarize(units)
    assert set(s.difficulties) == {"easy", "hard"} and s.difficulties["hard"].tasks == 2
    assert s.judge.rated == 2 and s.judge.score == 40.0          # (50 + 30) / 2
    assert s.judge_by_difficulty["easy"].score == 50.0
    assert s.judge_by_difficulty["hard"].score == 30.0 and s.judge_by_difficulty["hard"].rated == 1
    assert s.validity_issues == {"time_overlap": 6} and s.compromises["accepted"] == 3
    assert s.judge_by_subset["test"].score == 40.0 and s.judge_by_subset["test"].rated == 2
    rows = get("grouptravelbench").report.tables([("run", s)])[0].rows
    assert ["run", "difficulty hard", "2"] == rows[-1][:3] and rows[-1][-1] == "30.0"
    assert ["run", "subset test", "3"] == rows[1][:3] and rows[1][-1] == "40.0"


def test_a_task_loaded_from_a_differently_named_file_has_a_protocol():
    bench = get("grouptravelbench")
    task = Task(benchmark="grouptravelbench", subset="mine", task_id="x", source="s",
                payload=_task().payload)
    assert bench.protocol(task.subset) is bench.protocol("test")
